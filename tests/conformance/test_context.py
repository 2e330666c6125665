"""The checker's error expectations (`parley.conformance.context.expected_error`) against
Parley's own error table (`parley.wire.errors`): the answer each binding of Parley gives for
an A2A error — JSON-RPC code (R-JSONRPC-4), HTTP+JSON status and ErrorInfo reason (R-ERR-24),
gRPC status and ErrorInfo (R-ERR-23), in either version — is accepted as that error, and an
answer that is another error's (where the wire tells them apart) is refused naming what
was expected. And `describe`, the words every failure uses for what came back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.client.card import GRPC_BINDING, HTTP_JSON_BINDING, JSONRPC_BINDING
from parley.conformance.context import describe, expected_error
from parley.conformance.exchange import Answer, Exchange
from parley.conformance.results import CheckFailedError
from parley.protocol.errors import A2AError
from parley.protocol.negotiation import Version
from parley.wire.errors import ERROR_TABLE, grpc_status, jsonrpc_error, rest_error

CLASSES = sorted(ERROR_TABLE, key=lambda cls: cls.__name__)
BINDINGS = (JSONRPC_BINDING, HTTP_JSON_BINDING, GRPC_BINDING)
VERSIONS = (Version.V1_0, Version.V0_3)


@dataclass(frozen=True)
class Interface:
    """The part of an Exchange the expectations read."""

    binding: str
    version: Version


def parleys_answer(error: A2AError, binding: str, version: Version) -> Answer:
    """What the checker reads off Parley's own binding answering `error`."""
    if binding == JSONRPC_BINDING:
        body = {"jsonrpc": "2.0", "id": "parley-check", "error": jsonrpc_error(error, version)}
        return Answer(200, "application/json", httpx.Headers(), body=body, error=body["error"])
    if binding == HTTP_JSON_BINDING:
        status, rest = rest_error(error, version)
        return Answer(status, "application/json", httpx.Headers(), body=rest, error=rest)
    name, message, details = grpc_status(error, version)
    wrapped = {"error": {"status": name, "message": message, "details": details}}
    answer = Answer(0, "application/grpc", httpx.Headers(), body=wrapped, error=wrapped)
    answer.grpc_code = name
    return answer


def expect(binding: str, version: Version, answer: Answer, cls: type[A2AError]) -> str:
    subject = cast(Exchange, Interface(binding, version))
    return expected_error(subject, answer, cls)


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.value)
@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("cls", CLASSES, ids=[cls.__name__ for cls in CLASSES])
def test_parleys_own_answer_for_each_error_is_accepted(
    cls: type[A2AError], binding: str, version: Version
) -> None:
    answer = parleys_answer(cls("checked"), binding, version)
    said = expect(binding, version, answer, cls)
    assert said.startswith(f"{cls.__name__}: ")


def _told_apart(
    wanted: type[A2AError], other: type[A2AError], binding: str, version: Version
) -> bool:
    """Whether the wire form of `binding` in `version` distinguishes the two errors."""
    a, b = ERROR_TABLE[wanted], ERROR_TABLE[other]
    if binding == JSONRPC_BINDING:
        return a.jsonrpc_code != b.jsonrpc_code
    if version is Version.V0_3 and binding == HTTP_JSON_BINDING:
        return b.http_status_v03 not in (a.http_status_v03, a.http_status)
    if version is Version.V0_3:
        return b.grpc_status_v03 not in (a.grpc_status_v03, a.grpc_status)
    return a.reason != b.reason


@given(
    st.sampled_from(CLASSES),
    st.sampled_from(CLASSES),
    st.sampled_from(BINDINGS),
    st.sampled_from(VERSIONS),
)
def test_another_errors_answer_is_refused_where_the_wire_tells_them_apart(
    wanted: type[A2AError], other: type[A2AError], binding: str, version: Version
) -> None:
    answer = parleys_answer(other("not the one"), binding, version)
    if not _told_apart(wanted, other, binding, version):
        return
    with pytest.raises(CheckFailedError, match=f"expected (ErrorInfo reason .*|{wanted.__name__})"):
        expect(binding, version, answer, wanted)


def test_a_1_0_rest_error_without_an_error_info_is_refused() -> None:
    cls = CLASSES[0]
    status, body = rest_error(cls("x"), Version.V1_0)
    body["error"]["details"] = []
    answer = Answer(status, "application/json", httpx.Headers(), body=body, error=body)
    with pytest.raises(CheckFailedError, match=r"with an ErrorInfo \(R-ERR-24\)"):
        expect(HTTP_JSON_BINDING, Version.V1_0, answer, cls)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (
            Answer(404, "text/html", httpx.Headers(), text="<h1>Not Found</h1>"),
            "HTTP 404 text/html: <h1>Not Found</h1>",
        ),
        (Answer(502, "", httpx.Headers(), text=""), "HTTP 502 without content type: "),
        (
            Answer(400, "application/json", httpx.Headers(), error={"code": -32602}),
            "HTTP 400 with error {'code': -32602}",
        ),
    ],
)
def test_describe_says_what_came_back(answer: Answer, words: str) -> None:
    assert describe(answer) == words


def test_describe_names_a_grpc_status() -> None:
    failed = Answer(0, "application/grpc", httpx.Headers(), error={"error": "x"})
    failed.grpc_code = "NOT_FOUND"
    assert describe(failed) == "gRPC NOT_FOUND: {'error': 'x'}"
    ok = Answer(0, "application/grpc", httpx.Headers())
    ok.grpc_code = "OK"
    assert describe(ok) == "gRPC OK: a result"


def test_describe_cuts_a_long_answer() -> None:
    long = Answer(500, "text/plain", httpx.Headers(), text="x" * 500)
    said = describe(long)
    assert said.endswith("…")
    assert len(said) < 200
