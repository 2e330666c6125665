"""SSE responses driven directly (`parley.asgi.streaming.stream`), over a scripted ASGI
exchange and a framing that shows what it was given: the head only once the first event
is there, each frame with the sequence number a numbered iterator tells, an error before
the first event raised or (on request) sent as the only frame, an error after it as the
last frame, a client that is gone ending the stream quietly, a shutdown's cancel passing
through, and the handler's iterator closed whatever happens (its own failure to close only
logged). The binding-level framing is tests/asgi/test_streaming."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from parley.asgi.http import Exchange, Message, Request
from parley.asgi.streaming import Framing, fail, stream
from parley.model import Message as A2AMessage
from parley.model import Role, StreamEvent, TextPart
from parley.protocol.errors import A2AError, InternalError, TaskNotFoundError
from tests.server.support import run, settle

FRAMING = Framing(
    event=lambda event, sequence: f"event {event.text} #{sequence}\n".encode(),  # type: ignore[union-attr]
    error=lambda error: f"error {type(error).__name__}: {error.message}\n".encode(),
)


def said(text: str) -> A2AMessage:
    return A2AMessage(message_id=text, role=Role.AGENT, parts=(TextPart(text=text),))


class Client:
    """The ASGI side: `receive` waits until told the client left; `send` records, or fails
    as a socket to a gone client does."""

    def __init__(self, *, broken: bool = False) -> None:
        self.sent: list[Message] = []
        self.left = asyncio.Event()
        self.broken = broken

    async def receive(self) -> Message:
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self.broken and message["type"] == "http.response.body":
            raise OSError("connection reset")
        self.sent.append(message)

    def exchange(self) -> Exchange:
        scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/", "headers": []}
        return Exchange(scope, self.receive, self.send, Request.from_scope(scope))

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")

    @property
    def ended(self) -> bool:
        last = self.sent[-1]
        return last["type"] == "http.response.body" and not last["more_body"]


class Events:
    """A handler's iterator: yields `items` (raising an exception item), tells its
    sequence numbers if `numbered`, records its close."""

    def __init__(self, *items: StreamEvent | Exception, numbered: bool = False) -> None:
        self.items = list(items)
        self.closed = 0
        self.given = 0
        if numbered:
            self.sequence: int | None = None

    def __aiter__(self) -> Events:
        return self

    async def __anext__(self) -> StreamEvent:
        if not self.items:
            raise StopAsyncIteration
        item = self.items.pop(0)
        if isinstance(item, Exception):
            raise item
        self.given += 1
        if hasattr(self, "sequence"):
            self.sequence = self.given * 10
        return item

    async def aclose(self) -> None:
        self.closed += 1


def serve(client: Client, events: AsyncIterator[StreamEvent], **options: Any) -> None:
    run(stream(client.exchange(), events, FRAMING, 0, [("A2A-Version", "1.0")], **options))


def test_frames_follow_the_head_and_the_body_ends() -> None:
    client, events = Client(), Events(said("a"), said("b"))
    serve(client, events)
    start = client.sent[0]
    assert start["type"] == "http.response.start"
    assert start["status"] == 200
    headers = dict(start["headers"])
    assert headers[b"content-type"] == b"text/event-stream"
    assert headers[b"cache-control"] == b"no-cache"
    assert headers[b"a2a-version"] == b"1.0"
    assert client.body == b"event a #None\nevent b #None\n"
    assert client.ended
    assert events.closed == 1


def test_a_numbered_iterator_labels_each_frame() -> None:
    client = Client()
    serve(client, Events(said("a"), said("b"), numbered=True))
    assert client.body == b"event a #10\nevent b #20\n"


def test_an_empty_stream_is_a_head_and_an_empty_body() -> None:
    client, events = Client(), Events()
    serve(client, events)
    assert [m["type"] for m in client.sent] == ["http.response.start", "http.response.body"]
    assert client.body == b""
    assert events.closed == 1


def test_an_error_before_the_first_event_is_raised_for_a_plain_answer() -> None:
    client, events = Client(), Events(TaskNotFoundError("no t"))
    with pytest.raises(TaskNotFoundError):
        serve(client, events)
    assert client.sent == []  # nothing started: the binding answers
    assert events.closed == 1


def test_on_request_an_early_error_is_the_streams_only_frame() -> None:
    client, events = Client(), Events(TaskNotFoundError("no t"))
    serve(client, events, early_error_in_stream=True)
    assert client.sent[0]["status"] == 200
    assert client.body == b"error TaskNotFoundError: no t\n"
    assert client.ended
    assert events.closed == 1


def test_a_foreign_early_error_is_an_internal_error_without_its_text() -> None:
    client = Client()
    serve(client, Events(KeyError("db-column")), early_error_in_stream=True)
    assert client.body == b"error InternalError: Internal error\n"


def test_an_error_after_the_first_event_is_the_last_frame() -> None:
    client, events = Client(), Events(said("a"), RuntimeError("boom"), said("never"))
    serve(client, events)
    assert client.body == b"event a #None\nerror InternalError: Internal error\n"
    assert client.ended
    assert events.closed == 1


def test_an_event_that_cannot_be_framed_ends_the_stream_with_an_error() -> None:
    def broken(event: StreamEvent, sequence: int | None) -> bytes:
        if event.text == "bad":  # type: ignore[union-attr]
            raise ValueError("cannot encode")
        return b"ok\n"

    client, events = Client(), Events(said("a"), said("bad"), said("c"))
    run(stream(client.exchange(), events, Framing(broken, FRAMING.error), 0))
    assert client.body == b"ok\nerror InternalError: Internal error\n"
    assert events.items == [said("c")]  # nothing more was asked for
    assert events.closed == 1


def test_a_client_gone_mid_write_ends_the_stream_quietly() -> None:
    client, events = Client(broken=True), Events(said("a"), said("b"))
    serve(client, events)
    assert [m["type"] for m in client.sent] == ["http.response.start"]
    assert events.items == [said("b")]
    assert events.closed == 1


def test_fail_to_a_gone_client_is_quiet() -> None:
    client = Client(broken=True)
    run(fail(client.exchange(), FRAMING, InternalError()))
    assert [m["type"] for m in client.sent] == ["http.response.start"]


class Endless:
    """Yields one event, then waits for ever (a live task)."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.first = True

    def __aiter__(self) -> Endless:
        return self

    async def __anext__(self) -> StreamEvent:
        if self.first:
            self.first = False
            return said("a")
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        self.closed.set()


def test_a_client_that_leaves_ends_the_stream_and_closes_the_iterator() -> None:
    client, events = Client(), Endless()

    async def main() -> None:
        serving = asyncio.ensure_future(stream(client.exchange(), events, FRAMING, 0))
        await settle()
        assert client.body == b"event a #None\n"
        client.left.set()
        await serving  # returns: the client leaving is not an error
        assert not serving.cancelled()

    run(main())
    assert events.closed.is_set()


def test_a_shutdown_cancel_passes_through_and_still_closes_the_iterator() -> None:
    client, events = Client(), Endless()

    async def main() -> None:
        serving = asyncio.ensure_future(stream(client.exchange(), events, FRAMING, 0))
        await settle()
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving

    run(main())
    assert events.closed.is_set()


class Unclosable(Events):
    async def aclose(self) -> None:
        raise RuntimeError("close failed")


class Plain:
    """An iterator without `aclose`."""

    def __init__(self) -> None:
        self.items = [said("a")]

    def __aiter__(self) -> Plain:
        return self

    async def __anext__(self) -> StreamEvent:
        if not self.items:
            raise StopAsyncIteration
        return self.items.pop()


def test_an_iterator_that_fails_to_close_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    client = Client()
    with caplog.at_level(logging.ERROR, logger="parley.asgi"):
        serve(client, Unclosable(said("a")))
    assert client.ended
    assert any("Closing an event stream failed" in r.getMessage() for r in caplog.records)


def test_an_iterator_without_aclose_is_fine() -> None:
    client = Client()
    serve(client, Plain())
    assert client.body == b"event a #None\n"


def test_protocol_errors_keep_their_class_mid_stream() -> None:
    client = Client()
    error: A2AError = TaskNotFoundError("gone meanwhile")
    serve(client, Events(said("a"), error))
    assert client.body.endswith(b"error TaskNotFoundError: gone meanwhile\n")


class Throttled(Client):
    """A client whose `send` of a chunk starting with `held` suspends until `gate` opens (a
    transport under flow control); it records whether two sends were ever in flight at
    once, and each keep-alive's interruption of the watcher's `receive()`."""

    def __init__(self, held: bytes) -> None:
        super().__init__()
        self.held = held
        self.gate = asyncio.Event()
        self.holding = asyncio.Event()
        self.interrupted = asyncio.Event()
        self.in_flight = 0
        self.overlapped = False

    async def receive(self) -> Message:
        try:
            return await super().receive()
        except asyncio.CancelledError:
            self.interrupted.set()
            raise

    async def send(self, message: Message) -> None:
        self.in_flight += 1
        self.overlapped |= self.in_flight > 1
        try:
            if message.get("body", b"").startswith(self.held) and not self.gate.is_set():
                self.holding.set()
                await self.gate.wait()
            await super().send(message)
        finally:
            self.in_flight -= 1


class Gated(Events):
    """Yields its first event, then the rest once `go` is set."""

    def __init__(self, *items: StreamEvent) -> None:
        super().__init__(*items)
        self.go = asyncio.Event()

    async def __anext__(self) -> StreamEvent:
        if self.given:
            await self.go.wait()
        return await super().__anext__()


def test_a_keep_alive_due_while_an_event_is_in_flight_is_skipped() -> None:
    """The watcher sends no comment while the request's write is suspended in `send`
    (the stream is not silent), and two sends are never in flight at once."""
    client, events = Throttled(b"event a"), Events(said("a"))

    async def main() -> None:
        serving = asyncio.ensure_future(stream(client.exchange(), events, FRAMING, 0.01))
        await client.holding.wait()
        await client.interrupted.wait()  # the keep-alive came due meanwhile
        await settle()
        client.gate.set()
        await serving

    run(main())
    assert client.body == b"event a #None\n"
    assert client.ended
    assert not client.overlapped


def test_an_event_waits_for_a_keep_alive_in_flight() -> None:
    """An event that comes while a comment is suspended in `send` is written after it."""
    client, events = Throttled(b":"), Gated(said("a"), said("b"))

    async def main() -> None:
        serving = asyncio.ensure_future(stream(client.exchange(), events, FRAMING, 0.01))
        await client.holding.wait()  # a comment is in flight
        events.go.set()
        await settle()
        assert client.body == b"event a #None\n"  # b waits for the comment
        client.gate.set()
        await serving

    run(main())
    assert client.body == b"event a #None\n: keep-alive\n\nevent b #None\n"
    assert client.ended
    assert not client.overlapped
