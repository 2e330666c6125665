"""SSE responses: the first event before the response starts, then one frame per event,
keep-alive comments in silences, and the client's disconnect closing the handler's iterator.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from parley.asgi.calls import logger, to_a2a_error
from parley.asgi.http import Exchange, Receive
from parley.model import StreamEvent
from parley.protocol.errors import A2AError
from parley.wire import sse

_HEADERS = (
    (b"content-type", sse.MEDIA_TYPE.encode("latin-1")),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)


@dataclass(frozen=True, slots=True)
class Framing:
    """How one binding frames a stream: an event, and an error that ends the stream."""

    event: Callable[[StreamEvent], bytes]
    error: Callable[[A2AError], bytes]


class _Wake(enum.Enum):
    READY = "ready"
    IDLE = "idle"
    GONE = "gone"


async def _pull(events: AsyncIterator[StreamEvent]) -> StreamEvent | None:
    """The next event, None at the end."""
    try:
        return await anext(events)
    except StopAsyncIteration:
        return None


async def _watch(receive: Receive) -> None:
    """Return when the client disconnects (anything else it sends is ignored)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _wait(
    step: asyncio.Task[StreamEvent | None], watcher: asyncio.Task[None], timeout: float | None
) -> _Wake:
    await asyncio.wait((step, watcher), timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    if watcher.done():
        return _Wake.GONE
    return _Wake.READY if step.done() else _Wake.IDLE


async def _cancel(tasks: Iterable[asyncio.Future[Any] | None]) -> None:
    """Cancel and await: nothing started here outlives the response."""
    pending = [t for t in tasks if t is not None]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


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
    """One SSE response in progress."""

    def __init__(
        self,
        exchange: Exchange,
        events: AsyncIterator[StreamEvent],
        framing: Framing,
        keepalive: float,
    ) -> None:
        self.exchange = exchange
        self.events = events
        self.framing = framing
        self.keepalive = keepalive if keepalive > 0 else None
        self.watcher: asyncio.Task[None] = asyncio.ensure_future(_watch(exchange.receive))
        self.step: asyncio.Task[StreamEvent | None] | None = None

    async def next(self, timeout: float | None) -> _Wake:
        """Wait for the next event, the client leaving, or `timeout` of silence."""
        if self.step is None:
            self.step = asyncio.ensure_future(_pull(self.events))
        return await _wait(self.step, self.watcher, timeout)

    def take(self) -> StreamEvent | None:
        """The event the finished step produced (raises what the handler raised)."""
        assert self.step is not None
        step, self.step = self.step, None
        return step.result()

    async def write(self, chunk: bytes, more: bool = True) -> bool:
        """Send a piece of the body; False if the client is gone."""
        try:
            await self.exchange.send(
                {"type": "http.response.body", "body": chunk, "more_body": more}
            )
        except OSError:
            return False
        return True

    async def emit(self, event: StreamEvent) -> bool:
        """Write one event; False when the stream is over: the client is gone, or the
        event could not be encoded (then an error frame ends the stream)."""
        try:
            chunk = self.framing.event(event)
        except Exception as exc:
            error = to_a2a_error(exc, "encoding a stream event")
            await self.write(self.framing.error(error), more=False)
            return False
        return await self.write(chunk)

    async def pump(self) -> None:
        """Frames until the stream ends, fails or the client leaves; then end the body."""
        while True:
            wake = await self.next(self.keepalive)
            if wake is _Wake.GONE:
                return
            if wake is _Wake.IDLE:
                if not await self.write(sse.comment()):
                    return
                continue
            try:
                event = self.take()
            except Exception as exc:
                await self.write(
                    self.framing.error(to_a2a_error(exc, "an event stream")), more=False
                )
                return
            if event is None:
                await self.write(b"", more=False)
                return
            if not await self.emit(event):
                return

    async def finish(self) -> None:
        await _cancel((self.step, self.watcher))
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
    the watcher and any pending step are cancelled and awaited, and the iterator is closed."""
    run = _Stream(exchange, events, framing, keepalive)
    try:
        if await run.next(None) is _Wake.GONE:
            return
        try:
            first = run.take()
        except Exception as exc:
            error = to_a2a_error(exc, "an event stream")
            if not early_error_in_stream:
                raise error from None
            await fail(exchange, framing, error, headers)
            return
        await exchange.send(
            {"type": "http.response.start", "status": 200, "headers": _head(headers)}
        )
        if first is None:
            await run.write(b"", more=False)
            return
        if await run.emit(first):
            await run.pump()
    finally:
        await run.finish()
