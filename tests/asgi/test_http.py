"""Plain ASGI plumbing (`parley.asgi.http`) over hand-made scopes and a scripted receive:
a request's head as the bindings read it (raw path without root path, joined repeated
headers, query with repeated keys, service parameters from header or query), a body read
under the size limit (refused early by Content-Length, or as it streams in), a client that
leaves, whole responses, and the JSON media type an answer is sent in (R-REST-1,
R-REST-2, R-JSONRPC-2)."""

from __future__ import annotations

from typing import Any

import pytest

from parley.asgi import http
from parley.asgi.guard import Refused
from parley.asgi.http import (
    A2A_JSON_TYPE,
    JSON_TYPE,
    Disconnected,
    Exchange,
    Message,
    Request,
    answer_type,
)
from parley.protocol.errors import InvalidRequestError
from parley.wire.limits import Limits
from tests.server.support import run


def scope(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "raw_path": b"/",
        "root_path": "",
        "query_string": b"",
        "headers": [],
    }
    return base | changes


def test_header_names_are_lower_case_and_repeats_are_joined() -> None:
    """R-JSONRPC-3/R-REST-3: a parameter sent as repeated headers reads as one
    comma-joined value (RFC 9110 §5.3)."""
    request = Request.from_scope(
        scope(
            headers=[
                (b"A2A-Extensions", b"urn:a"),
                (b"Content-Type", b"application/json"),
                (b"a2a-extensions", b"urn:b"),
            ]
        )
    )
    assert request.headers == {"a2a-extensions": "urn:a, urn:b", "content-type": "application/json"}


def test_usual_header_names_and_values_are_one_string_for_every_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request's headers live as long as its stream: the usual names and values, and a
    usual name's short value once seen, are shared, not decoded into each request; the
    rest decode as ever."""
    monkeypatch.setattr(http, "_PAIRS", {})
    raw = [
        (b"host", b"agent.example:8000"),
        (b"content-type", b"application/json"),
        (b"a2a-version", b"1.0"),
        (b"x-trace", b""),
    ]
    first, second = (Request.from_scope(scope(headers=list(raw))) for _ in range(2))
    assert first.headers == {
        "host": "agent.example:8000",
        "content-type": "application/json",
        "a2a-version": "1.0",
        "x-trace": "",
    }
    assert second.headers == first.headers
    shared_names = [a for a, b in zip(first.headers, second.headers, strict=True) if a is b]
    assert shared_names == ["host", "content-type", "a2a-version"]
    shared_values = [n for n in first.headers if first.headers[n] is second.headers[n] != ""]
    assert shared_values == ["host", "content-type", "a2a-version"]


def test_credentials_long_values_and_list_pairs_are_decoded_but_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A header pair is kept decoded only for a usual name (never Authorization), a short
    value and a tuple; the others read the same, decoded for each request."""
    monkeypatch.setattr(http, "_PAIRS", {})
    raw = [
        [b"accept", b"application/json"],
        (b"authorization", b"Bearer secret"),
        (b"user-agent", b"u" * 129),
    ]
    first, second = (Request.from_scope(scope(headers=list(raw))) for _ in range(2))
    assert first.headers == {
        "accept": "application/json",
        "authorization": "Bearer secret",
        "user-agent": "u" * 129,
    }
    assert second.headers == first.headers
    assert [n for n in first.headers if first.headers[n] is second.headers[n]] == ["accept"]
    assert http._PAIRS == {}


def test_kept_pairs_stop_at_their_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `_PAIRS_KEPT` pairs, new ones are decoded for each request and not kept."""
    monkeypatch.setattr(http, "_PAIRS", {})
    for number in range(http._PAIRS_KEPT + 10):
        headers = [(b"content-length", str(number).encode())]
        assert Request.from_scope(scope(headers=headers)).headers == {"content-length": str(number)}
    assert len(http._PAIRS) == http._PAIRS_KEPT


def test_the_query_keeps_repeated_and_blank_keys_in_order() -> None:
    request = Request.from_scope(scope(query_string=b"a=1&b=&a=2&c=%C3%A9"))
    assert request.query == (("a", "1"), ("b", ""), ("a", "2"), ("c", "é"))


def test_the_client_is_host_and_port_when_known() -> None:
    assert Request.from_scope(scope(client=("10.0.0.1", 5000))).client == "10.0.0.1:5000"
    assert Request.from_scope(scope()).client is None


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"raw_path": b"/tasks/a%2Fb:cancel"}, "/tasks/a%2Fb:cancel"),
        ({"raw_path": b"/tasks/t?x=1"}, "/tasks/t"),
        ({"raw_path": b"/agent/tasks/t", "root_path": "/agent"}, "/tasks/t"),
        ({"raw_path": b"/agent", "root_path": "/agent"}, "/"),
        ({"raw_path": None, "path": "/tasks/a b"}, "/tasks/a%20b"),
        ({"raw_path": b"", "path": "/tasks/t:cancel"}, "/tasks/t:cancel"),
        ({"raw_path": b"/other/x", "root_path": "/agent"}, "/other/x"),
    ],
    ids=[
        "encoded-slash",
        "query-in-raw-path",
        "root-path",
        "root-only",
        "no-raw",
        "empty-raw",
        "foreign-root",
    ],
)
def test_the_path_is_raw_and_relative_to_the_root(changes: dict[str, Any], path: str) -> None:
    """An id holding `%2F` stays one segment; a mounted app sees its own paths."""
    assert Request.from_scope(scope(**changes)).path == path


def test_service_parameters_come_from_headers_else_the_query() -> None:
    """R-REST-2/R-JSONRPC-2: headers carry service parameters; the query is a fallback."""
    both = Request.from_scope(
        scope(headers=[(b"a2a-version", b"1.0")], query_string=b"A2A-Version=0.3")
    )
    assert both.version_header == "1.0"
    query_only = Request.from_scope(scope(query_string=b"a2a-version=0.3"))
    assert query_only.version_header == "0.3"
    assert query_only.parameter("A2A-VERSION") == "0.3"
    assert Request.from_scope(scope()).version_header is None


class Client:
    """A receive callable replaying `messages`; records what is sent."""

    def __init__(self, *messages: Message) -> None:
        self.messages = list(messages)
        self.sent: list[Message] = []

    async def receive(self) -> Message:
        return self.messages.pop(0)

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    def exchange(self, headers: list[tuple[bytes, bytes]] | None = None) -> Exchange:
        raw = scope(
            headers=headers if headers is not None else [(b"content-type", b"application/json")]
        )
        return Exchange(raw, self.receive, self.send, Request.from_scope(raw))


def body(data: bytes, more: bool = False) -> Message:
    return {"type": "http.request", "body": data, "more_body": more}


LIMITS = Limits(max_body_bytes=10)


def test_a_body_in_chunks_is_read_whole() -> None:
    client = Client(body(b'{"a"', True), body(b"", True), body(b":1}"))
    assert run(client.exchange().read_body(LIMITS)) == b'{"a":1}'


def test_a_body_at_the_limit_is_read() -> None:
    client = Client(body(b"x" * 10))
    assert run(client.exchange().read_body(LIMITS)) == b"x" * 10


def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    client = Client()  # nothing to receive: reading would fail the test
    headers = [(b"content-type", b"application/json"), (b"content-length", b"11")]
    with pytest.raises(InvalidRequestError) as caught:
        run(client.exchange(headers).read_body(LIMITS))
    assert caught.value.metadata == {"limit": "10"}


def test_a_body_growing_over_the_limit_is_refused_as_it_streams() -> None:
    """A client may lie about its length, or send none (chunked)."""
    client = Client(body(b"x" * 6, True), body(b"x" * 6, True), body(b"never read"))
    headers = [(b"content-type", b"application/json"), (b"content-length", b"5")]
    with pytest.raises(InvalidRequestError, match="12 bytes exceeds the limit of 10"):
        run(client.exchange(headers).read_body(LIMITS))
    assert len(client.messages) == 1


def test_a_client_that_leaves_mid_body_is_disconnected() -> None:
    client = Client(body(b"{", True), {"type": "http.disconnect"})
    with pytest.raises(Disconnected):
        run(client.exchange().read_body(LIMITS))


def test_a_body_of_another_type_is_refused_before_reading() -> None:
    client = Client()
    with pytest.raises(Refused) as caught:
        run(client.exchange([(b"content-type", b"text/plain")]).read_body(LIMITS))
    assert caught.value.status == 415


def test_an_untyped_body_is_refused_once_read_and_an_empty_one_is_not() -> None:
    with pytest.raises(Refused):
        run(Client(body(b"{}")).exchange([]).read_body(LIMITS))
    assert run(Client(body(b"")).exchange([]).read_body(LIMITS)) == b""


def heads(client: Client) -> tuple[int, dict[bytes, bytes], bytes]:
    start, end = client.sent
    assert start["type"] == "http.response.start"
    assert end == {"type": "http.response.body", "body": end["body"], "more_body": False}
    return start["status"], dict(start["headers"]), end["body"]


def test_respond_adds_type_and_length_and_marks_the_exchange_started() -> None:
    client = Client()
    exchange = client.exchange()
    before = exchange.started
    run(exchange.respond(200, b'{"ok":true}', [("X-Thing", "v")]))
    assert (before, exchange.started) == (False, True)
    status, headers, sent = heads(client)
    assert (status, sent) == (200, b'{"ok":true}')
    assert headers == {
        b"x-thing": b"v",
        b"content-type": b"application/json",
        b"content-length": b"11",
    }


@pytest.mark.parametrize("status", [204, 304])
def test_a_body_less_status_has_no_length(status: int) -> None:
    client = Client()
    run(client.exchange().respond(status, content_type=None))
    _, headers, sent = heads(client)
    assert headers == {}
    assert sent == b""


def test_respond_json_answers_in_the_type_the_request_used() -> None:
    client = Client()
    run(client.exchange([(b"content-type", b"application/a2a+json")]).respond_json(201, {"a": [1]}))
    status, headers, sent = heads(client)
    assert (status, headers[b"content-type"], sent) == (201, b"application/a2a+json", b'{"a":[1]}')


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"content-type": "application/json"}, JSON_TYPE),
        ({"content-type": "application/a2a+json"}, A2A_JSON_TYPE),
        ({"content-type": "Application/A2A+JSON; charset=utf-8"}, A2A_JSON_TYPE),
        ({"content-type": "application/json", "accept": A2A_JSON_TYPE}, JSON_TYPE),
        ({"accept": "application/a2a+json, */*"}, A2A_JSON_TYPE),
        ({"accept": "APPLICATION/A2A+JSON"}, A2A_JSON_TYPE),
        ({"accept": "*/*"}, JSON_TYPE),
        ({}, JSON_TYPE),
    ],
    ids=["json", "a2a", "a2a-params", "body-wins", "accept", "accept-case", "any", "none"],
)
def test_answer_type(headers: dict[str, str], expected: str) -> None:
    """R-REST-1: application/a2a+json to a client that speaks it; JSON to everyone else."""
    assert answer_type(headers) == expected
