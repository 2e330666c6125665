"""SSE responses: the first event before the response starts, then one frame per event
(labelled with the event's sequence number when the handler's iterator tells it), keep-alive
comments in silences, and the client's disconnect closing the handler's iterator.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import suppress
from typing import Protocol, runtime_checkable

import msgspec

from parley.asgi.calls import logger, to_a2a_error
from parley.asgi.http import Exchange
from parley.model import StreamEvent
from parley.protocol.errors import A2AError
from parley.wire import sse

_HEADERS = (
    (b"content-type", sse.MEDIA_TYPE.encode("latin-1")),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)


class Framing(msgspec.Struct, frozen=True):
    """How one binding frames a stream: an event with its sequence number (the SSE `id:`;
    None: no id), and an error that ends the stream."""

    event: Callable[[StreamEvent, int | None], bytes]
    error: Callable[[A2AError], bytes]


@runtime_checkable
class _Numbered(Protocol):
    """An event iterator that tells the sequence number of the event it yielded last
    (`parley.server.broker.EventStream` does)."""

    @property
    def sequence(self) -> int | None: ...


async def _close(events: AsyncIterator[StreamEvent]) -> None:
    """`aclose` the handler's iterator (unsubscribes); its failures are only logged."""
    close = getattr(events, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except Exception:
        logger.exception("Closing an event stream failed")


class _Stream:
    """One SSE response in progress.

    Theory of operation: the events are pulled in the request's own task (no task per
    event). A watcher task listens for the client's disconnect; on disconnect it cancels
    the request's task, which `stream` recognises as the client leaving (not a shutdown).
    Keep-alives are a timer (`loop.call_later`), not a timeout around each `receive()`:
    when one is due the timer interrupts the watcher's `receive()`, which writes the
    comment and listens again.

    Two coroutines write, and an ASGI `send` may suspend (flow control), so a write is
    never started while another is in flight (`writing`) — without a lock per event: the
    watcher skips its comment when a write is in flight (the stream is not silent), and
    only the request's task may wait, for a comment being sent (`turn`).
    """

    __slots__ = (
        "due",
        "ending",
        "events",
        "exchange",
        "framing",
        "gone",
        "keepalive",
        "last_write",
        "loop",
        "numbered",
        "owner",
        "started",
        "timer",
        "turn",
        "watcher",
        "writing",
    )

    def __init__(
        self,
        exchange: Exchange,
        events: AsyncIterator[StreamEvent],
        framing: Framing,
        keepalive: float,
    ) -> None:
        self.exchange = exchange
        self.events = events
        self.numbered: _Numbered | None = None
        """Where the iterator tells each event's sequence number (DESIGN 5): the iterator
        itself, or its `position` (an `EventStream`'s: read with no call)."""
        if isinstance(events, _Numbered):
            self.numbered = getattr(events, "position", events)
        self.framing = framing
        self.keepalive = keepalive if keepalive > 0 else None
        self.owner = asyncio.current_task()
        self.gone = False
        self.ending = False
        self.started = False
        self.writing = False
        """A `send` is in flight (the watcher's comment, or the request task's write)."""
        self.turn: asyncio.Future[None] | None = None
        """The request task waiting for the watcher's comment to be sent."""
        self.loop = asyncio.get_running_loop()
        self.last_write = self.loop.time()
        self.due = False
        """A keep-alive is due: the watcher's `receive()` was cancelled to write it."""
        self.timer: asyncio.TimerHandle | None = None
        self.watcher: asyncio.Task[None] = asyncio.ensure_future(self._watch())
        self._arm()

    async def _watch(self) -> None:
        """Until the client leaves or `finish`. `finish` sets `ending` before it cancels
        this task: a cancel that lands as `receive()` returns (a GET's empty body comes
        at once) may be lost, and the flag still ends the loop."""
        receive = self.exchange.receive
        while not self.ending:
            try:
                message = await receive()
            except asyncio.CancelledError:
                if self.ending or not self.due:
                    raise
                self.due = False  # the timer's cancel, not `finish`'s: write the comment
                watcher = asyncio.current_task()
                if watcher is not None:
                    watcher.uncancel()
                if not self.writing and not await self._comment():
                    break  # (a write in flight: the stream is not silent, no comment)
                self._arm()
                continue
            if message["type"] == "http.disconnect":
                break
        else:
            return
        self.gone = True
        if not self.ending and self.owner is not None:
            self.owner.cancel()

    def _arm(self) -> None:
        """Set the keep-alive timer for when the stream will have been silent for the
        keep-alive period (none when keep-alives are off)."""
        if self.keepalive is None:
            return
        delay = self.keepalive
        if self.started:
            delay = max(0.01, self.last_write + delay - self.loop.time())
        self.timer = self.loop.call_later(delay, self._tick)

    def _tick(self) -> None:
        """The timer: a comment is due if the stream has been silent for the keep-alive
        period (nothing is written before the response has started); else wait on."""
        self.timer = None
        if self.ending or self.watcher.done():
            return
        assert self.keepalive is not None
        if self.started and self.loop.time() - self.last_write >= self.keepalive - 0.005:
            self.due = True
            self.watcher.cancel()  # the watcher writes it (`_watch`), then re-arms
        else:
            self._arm()

    async def write(self, chunk: bytes, more: bool = True) -> bool:
        """Send a piece of the body (after a comment in flight); False if the client is
        gone. Only the request's task writes with it."""
        while self.writing:
            turn = self.turn = self.loop.create_future()
            await turn
        self.writing = True
        try:
            await self.exchange.send(
                {"type": "http.response.body", "body": chunk, "more_body": more}
            )
        except OSError:
            return False
        finally:
            self.writing = False
        self.last_write = self.loop.time()
        return True

    async def _comment(self) -> bool:
        """The watcher's keep-alive comment, when no write is in flight; False if the
        client is gone."""
        self.writing = True
        try:
            await self.exchange.send(
                {"type": "http.response.body", "body": sse.comment(), "more_body": True}
            )
        except OSError:
            return False
        finally:
            self.writing = False
            turn, self.turn = self.turn, None
            if turn is not None and not turn.done():
                turn.set_result(None)
        self.last_write = self.loop.time()
        return True

    def emit(self, event: StreamEvent) -> Awaitable[bool]:
        """Write one event; False when the stream is over: the client is gone, or the
        event could not be encoded (then an error frame ends the stream). No coroutine of
        its own per event: the write's."""
        sequence = self.numbered.sequence if self.numbered is not None else None
        try:
            chunk = self.framing.event(event, sequence)
        except Exception as exc:
            return self._end(to_a2a_error(exc, "encoding a stream event"))
        return self.write(chunk)

    async def _end(self, error: A2AError) -> bool:
        """The error's frame ends the stream: False."""
        await self.write(self.framing.error(error), more=False)
        return False

    async def open(
        self, headers: Iterable[tuple[str, str]], early_error_in_stream: bool
    ) -> StreamEvent | None:
        """The first event, with the response started for it; None if the stream is over
        already: it had no event (the body is ended), or it failed (see `stream`)."""
        try:
            first = await anext(self.events, None)
        except Exception as exc:
            error = to_a2a_error(exc, "an event stream")
            if not early_error_in_stream:
                raise error from None
            await fail(self.exchange, self.framing, error, headers)
            return None
        await self.exchange.send(
            {"type": "http.response.start", "status": 200, "headers": _head(headers)}
        )
        self.started = True
        if first is None:
            await self.write(b"", more=False)
        return first

    async def finish(self) -> None:
        self.ending = True
        if self.timer is not None:
            self.timer.cancel()
        self.watcher.cancel()
        await asyncio.gather(self.watcher, return_exceptions=True)
        await _close(self.events)


def _head(headers: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [
        *_HEADERS,
        *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers),
    ]


async def fail(
    exchange: Exchange, framing: Framing, error: A2AError, headers: Iterable[tuple[str, str]] = ()
) -> None:
    """A stream that is only `error`'s frame: HTTP 200, SSE, one event, end."""
    with suppress(OSError):  # the client is gone
        await exchange.send(
            {"type": "http.response.start", "status": 200, "headers": _head(headers)}
        )
        await exchange.send(
            {"type": "http.response.body", "body": framing.error(error), "more_body": False}
        )


async def stream(
    exchange: Exchange,
    events: AsyncIterator[StreamEvent],
    framing: Framing,
    keepalive: float,
    headers: Iterable[tuple[str, str]] = (),
    *,
    early_error_in_stream: bool = False,
) -> None:
    """Serve `events` as SSE. An error before the first event is raised (as an A2AError)
    for the caller to answer as a plain error response — or, with `early_error_in_stream`,
    sent as the stream's only frame; after it, it becomes the last frame. Whatever happens,
    the watcher is cancelled and awaited, and the iterator is closed."""
    run = _Stream(exchange, events, framing, keepalive)
    try:
        event = await run.open(headers, early_error_in_stream)
        # Frames until the stream ends, fails or the client leaves, pulled right here: no
        # frame of ours between this function and the handler's iterator while it waits
        # (`aiter`: an `EventStream`'s generator itself).
        pull = aiter(events)
        while event is not None and await run.emit(event):
            try:
                event = await anext(pull)
            except StopAsyncIteration:
                await run.write(b"", more=False)
                return
            except Exception as exc:
                await run.write(framing.error(to_a2a_error(exc, "an event stream")), more=False)
                return
    except asyncio.CancelledError:
        if not run.gone:
            raise  # a shutdown, not the client leaving
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
    finally:
        await run.finish()
