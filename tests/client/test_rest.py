"""The REST transport's pure parts (`parley.client.rest`): every A2A error a server's REST
binding answers (`parley.wire.errors.rest_error`, in 1.0's google.rpc.Status form and 0.3's
JSON-RPC-like body) is read back as its class with its message and metadata (REFERENCE
§6.5); answers that are not A2A errors are the client's ClientProtocolError; and a request
is planned onto the operation's routes — the tenant's routes when it names one, path
parameters percent-encoded, scalars as query parameters (REFERENCE §5.3, HTTP+JSON)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.client import ClientProtocolError
from parley.client.http import Reply
from parley.client.rest import error_of, plan
from parley.protocol import errors as e
from parley.protocol.errors import A2AError, FieldViolation, InvalidParamsError
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation, Route
from parley.wire.errors import ERROR_TABLE, rest_error
from parley.wire.limits import Limits

CLASSES = sorted(ERROR_TABLE, key=lambda cls: cls.__name__)
LIMITS = Limits()


def answered(error: A2AError, version: Version) -> Exception:
    status, body = rest_error(error, version)
    return error_of(Reply(status, "application/json", json.dumps(body).encode()), LIMITS)


@pytest.mark.parametrize("cls", CLASSES, ids=[cls.__name__ for cls in CLASSES])
def test_every_1_0_error_comes_back_as_its_class(cls: type[A2AError]) -> None:
    error = cls("it went wrong", metadata={"taskId": "t-1"})
    back = answered(error, Version.V1_0)
    assert type(back) is cls
    assert isinstance(back, A2AError)
    assert (back.message, dict(back.metadata)) == ("it went wrong", {"taskId": "t-1"})


@pytest.mark.parametrize("cls", CLASSES, ids=[cls.__name__ for cls in CLASSES])
def test_every_0_3_error_comes_back_as_its_class(cls: type[A2AError]) -> None:
    back = answered(cls("it went wrong"), Version.V0_3)
    assert type(back) is cls
    assert isinstance(back, A2AError)
    assert back.message == "it went wrong"


VIOLATIONS = (FieldViolation(field="message.parts", description="must not be empty"),)


def test_field_violations_come_back_typed_in_1_0() -> None:
    back = answered(InvalidParamsError("bad", field_violations=VIOLATIONS), Version.V1_0)
    assert isinstance(back, InvalidParamsError)
    assert back.field_violations == VIOLATIONS


def test_field_violations_come_back_as_the_free_form_data_of_0_3() -> None:
    """0.3's error `data` is free-form: the client keeps it as it came (A2AError.data)."""
    back = answered(InvalidParamsError("bad", field_violations=VIOLATIONS), Version.V0_3)
    assert isinstance(back, InvalidParamsError)
    assert back.data == {
        "fieldViolations": [{"field": "message.parts", "description": "must not be empty"}]
    }


messages = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40)


@given(st.sampled_from(CLASSES), messages, st.sampled_from([Version.V1_0, Version.V0_3]))
def test_any_message_survives(cls: type[A2AError], message: str, version: Version) -> None:
    back = answered(cls(message), version)
    assert type(back) is cls
    assert isinstance(back, A2AError)
    assert back.message == message


def test_a_405_without_a_reason_is_a_method_the_server_lacks() -> None:
    """A known path with another verb: the server lacks that operation (REFERENCE §6.3)."""
    body = json.dumps({"error": {"code": 405, "message": "Method Not Allowed"}}).encode()
    back = error_of(Reply(405, "application/json", body), LIMITS)
    assert isinstance(back, e.MethodNotFoundError)
    assert back.message == "Method Not Allowed"


def test_an_older_servers_message_body_is_read_by_its_status() -> None:
    body = b'{"message": "no such task"}'
    back = error_of(Reply(404, "application/json", body), LIMITS)
    assert isinstance(back, e.TaskNotFoundError)
    assert back.message == "no such task"


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (502, b"<html>Bad gateway</html>"),
        (401, b'{"detail": "who are you"}'),
        (503, b'{"detail": "down for maintenance"}'),
        (504, b'{"error": {"code": 504, "message": "gateway timeout"}}'),
        (500, b'{"message": 42}'),
        (418, b'{"message": "a teapot"}'),
        (400, b"[1, 2, 3]"),
        (400, b""),
    ],
)
def test_answers_that_are_not_a2a_errors(status: int, body: bytes) -> None:
    back = error_of(Reply(status, "application/json", body, retry_after=2.0), LIMITS)
    assert isinstance(back, ClientProtocolError)
    assert back.status_code == status
    assert back.retry_after == 2.0
    assert f"HTTP {status}" in back.message


def test_a_known_reason_is_read_whatever_the_status() -> None:
    _, body = rest_error(e.TaskNotFoundError("gone"), Version.V1_0)
    back = error_of(Reply(503, "application/json", json.dumps(body).encode()), LIMITS)
    assert isinstance(back, e.TaskNotFoundError)


# ---------------------------------------------------------------------- planning


def routes(operation: Operation, version: Version) -> tuple[Route, ...]:
    return OPERATIONS[operation].bindings[version].routes


@pytest.mark.parametrize("version", [Version.V1_0, Version.V0_3], ids=lambda v: v.value)
def test_get_task_is_a_get_with_its_id_in_the_path_and_options_in_the_query(
    version: Version,
) -> None:
    [call, *_] = plan(routes(Operation.GET_TASK, version), {"id": "t 1/2", "historyLength": 3})
    assert call.verb == "GET"
    assert "t%201%2F2" in call.path
    assert "{" not in call.path
    assert call.query == [("historyLength", "3")]
    assert call.body is None


def test_a_tenant_chooses_the_tenants_routes() -> None:
    plain = plan(routes(Operation.GET_TASK, Version.V1_0), {"id": "t"})
    tenanted = plan(routes(Operation.GET_TASK, Version.V1_0), {"id": "t", "tenant": "acme"})
    assert all(not call.path.startswith("/acme/") for call in plain)
    assert tenanted
    assert all(call.path.startswith("/acme/") for call in tenanted)


def test_a_version_without_tenant_routes_keeps_the_plain_ones() -> None:
    calls = plan(routes(Operation.GET_TASK, Version.V0_3), {"id": "t", "tenant": "acme"})
    assert calls
    assert all("acme" not in call.path for call in calls)


def test_a_send_carries_its_payload_as_the_body() -> None:
    payload = {"message": {"messageId": "m", "parts": [{"text": "hi"}]}}
    [call, *_] = plan(routes(Operation.SEND_MESSAGE, Version.V1_0), payload)
    assert call.verb == "POST"
    assert call.query == []
    assert call.body is not None
    assert json.loads(call.body) == payload


def test_a_missing_path_parameter_is_invalid_params_naming_it() -> None:
    with pytest.raises(InvalidParamsError) as raised:
        plan(routes(Operation.GET_TASK, Version.V1_0), {"historyLength": 3})
    assert "id" in raised.value.message
    with pytest.raises(InvalidParamsError):
        plan(routes(Operation.GET_TASK, Version.V1_0), {"id": ""})


def test_query_parameters_are_scalars_lists_repeated_and_objects_left_out() -> None:
    payload = {
        "contextId": "c",
        "pageSize": 5,
        "includeArtifacts": False,
        "ratio": 0.5,
        "status": ["A", "B"],
        "metadata": {"k": "v"},
        "nothing": None,
    }
    [call, *_] = plan(routes(Operation.LIST_TASKS, Version.V1_0), payload)
    assert call.verb == "GET"
    assert call.query == [
        ("contextId", "c"),
        ("pageSize", "5"),
        ("includeArtifacts", "false"),
        ("ratio", "0.5"),
        ("status", "A"),
        ("status", "B"),
    ]


ids = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=12)


@given(ids)
def test_any_task_id_fills_one_path_segment(task_id: str) -> None:
    from urllib.parse import unquote  # noqa: PLC0415

    for call in plan(routes(Operation.GET_TASK, Version.V1_0), {"id": task_id}):
        segments = call.path.split("/")
        assert task_id in [unquote(segment) for segment in segments]
        assert "{" not in call.path
