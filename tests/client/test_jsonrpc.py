"""The JSON-RPC transport's reading of a response envelope (`parley.client.jsonrpc`): the
`result` of a JSON-RPC 2.0 response to this request; every A2A error a server's JSON-RPC
binding answers (`parley.wire.errors.jsonrpc_error`) raised as its class, in either
version (R-JSONRPC-4: 1.0's typed details; 0.3's free-form data kept); a response that is
not JSON-RPC 2.0, or answers another request, is the client's ClientProtocolError."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.client import ClientProtocolError
from parley.client.jsonrpc import read_envelope
from parley.protocol import errors as e
from parley.protocol.errors import A2AError, FieldViolation
from parley.protocol.negotiation import Version
from parley.wire.errors import ERROR_TABLE, jsonrpc_error

CLASSES = sorted(ERROR_TABLE, key=lambda cls: cls.__name__)
VERSIONS = [Version.V1_0, Version.V0_3]


def raised(envelope: Any, request_id: int = 1, status: int = 200) -> BaseException:
    with pytest.raises((A2AError, ClientProtocolError)) as caught:
        read_envelope(envelope, request_id, status)
    return caught.value


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.value)
@pytest.mark.parametrize("cls", CLASSES, ids=[cls.__name__ for cls in CLASSES])
def test_every_error_is_raised_as_its_class(cls: type[A2AError], version: Version) -> None:
    error = cls("it went wrong", metadata={"taskId": "t-1"})
    back = raised({"jsonrpc": "2.0", "id": 1, "error": jsonrpc_error(error, version)})
    assert type(back) is cls
    assert isinstance(back, A2AError)
    assert back.message == "it went wrong"
    if version is Version.V1_0:
        assert dict(back.metadata) == {"taskId": "t-1"}
    else:
        assert back.data == {"taskId": "t-1"}


def test_1_0_field_violations_come_back_typed() -> None:
    violations = (FieldViolation(field="historyLength", description="must be at least 0"),)
    error = e.InvalidParamsError("bad", field_violations=violations)
    back = raised({"jsonrpc": "2.0", "id": 1, "error": jsonrpc_error(error, Version.V1_0)})
    assert isinstance(back, e.InvalidParamsError)
    assert back.field_violations == violations


def test_an_error_is_raised_whatever_id_it_answers() -> None:
    """A server that cannot read the request's id answers its error with id null."""
    for answered in (None, 1, 99, "x"):
        error = jsonrpc_error(e.JSONParseError(), Version.V1_0)
        assert isinstance(
            raised({"jsonrpc": "2.0", "id": answered, "error": error}), e.JSONParseError
        )


@pytest.mark.parametrize(
    "error",
    [
        {"code": -1, "message": "a code no A2A error uses"},
        {"code": "-32001", "message": "a code as text"},
        {"message": "no code"},
        "not an object",
        None,
    ],
)
def test_an_error_of_no_known_code_is_an_internal_error(error: object) -> None:
    assert type(raised({"jsonrpc": "2.0", "id": 1, "error": error})) is e.InternalError


@given(
    st.integers(min_value=1, max_value=2**31),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=6,
    ),
)
def test_the_result_of_this_requests_response(request_id: int, result: object) -> None:
    envelope = {"jsonrpc": "2.0", "id": request_id, "result": result}
    assert read_envelope(envelope, request_id, 200) == result


def test_a_response_without_an_id_or_a_result_is_read_as_null() -> None:
    assert read_envelope({"jsonrpc": "2.0", "result": {"a": 1}}, 5, 200) == {"a": 1}
    assert read_envelope({"jsonrpc": "2.0", "id": 5}, 5, 200) is None


@pytest.mark.parametrize("answered", [2, "1", 1.5, [1], True])
def test_a_response_to_another_request_is_refused(answered: object) -> None:
    back = raised({"jsonrpc": "2.0", "id": answered, "result": {}}, request_id=1, status=200)
    assert isinstance(back, ClientProtocolError)
    assert "does not match the request's 1" in back.message
    assert back.status_code == 200


@pytest.mark.parametrize(
    "envelope",
    [
        {"id": 1, "result": {}},
        {"jsonrpc": "1.0", "id": 1, "result": {}},
        {"jsonrpc": 2.0, "id": 1, "result": {}},
        [{"jsonrpc": "2.0", "id": 1, "result": {}}],
        "2.0",
        None,
    ],
)
def test_anything_but_json_rpc_2_0_is_refused(envelope: object) -> None:
    back = raised(envelope, status=202)
    assert isinstance(back, ClientProtocolError)
    assert back.message == "Not a JSON-RPC 2.0 response"
    assert back.status_code == 202
