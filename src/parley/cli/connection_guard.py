"""The guard `parley serve` mixes into uvicorn's HTTP/1.1 protocols (httptools and h11):
it enforces `ConnectionLimits` on every connection, and `Connections` keeps the open
ones of a server process under the cap, closing the least recently active first.

A connection is in one phase at a time: idle (between requests), headers (a request's
first bytes are in, its headers are not complete), body (headers in, body not), running
(the request is in, its response is not out) or closing. The header and body phases
have a deadline (one `call_at` handle, armed only when a chunk leaves the phase
unfinished); running has none, so a response, such as a stream, is never cut. Bytes are
counted from a request's first chunk until its headers are complete: one add and one
compare per chunk. A connection is closed after its error answer once the client has
read it, or at most `LINGER` seconds later (so that the answer is not lost to a reset).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import sys
from operator import attrgetter
from typing import Any, ClassVar, cast

from parley.cli.connections import ConnectionLimits

log = logging.getLogger("parley")

LINGER = 2.0
"""Seconds a refused connection stays open for its client to read the answer."""

REPORT_EVERY = 5.0
"""Seconds between two warnings about closed and refused connections."""

_IDLE, _HEADERS, _BODY, _RUNNING, _CLOSING = range(5)
_NOT_COUNTING = -(1 << 62)
"""The byte count of a request whose headers are complete: no chunk reaches the bound."""
_DISCARDING = 1 << 62
_ACTIVITY = itertools.count(1)
"""Stamps of activity, in order (event loop time may not tell two apart)."""
"""The byte count of a closing connection: every chunk takes the slow path, and is dropped."""


def _answer(status: int, reason: str, code: str, message: str, extra: str = "") -> bytes:
    body = json.dumps({"error": {"code": status, "status": code, "message": message}})
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n{extra}\r\n"
    )
    return (head + body).encode()


TOO_LARGE = _answer(
    431,
    "Request Header Fields Too Large",
    "INVALID_ARGUMENT",
    "The request's headers are too large",
)
TIMED_OUT = _answer(
    408, "Request Timeout", "DEADLINE_EXCEEDED", "The request did not arrive in time"
)
UNAVAILABLE = _answer(
    503,
    "Service Unavailable",
    "UNAVAILABLE",
    "The server has too many connections open; try again",
    "retry-after: 1\r\n",
)


class Connections:
    """The open connections of one server process, at most `cap` of them; and a count of
    the connections closed or refused for the limits, reported as one warning every
    `REPORT_EVERY` seconds at most."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.open: set[Guard] = set()
        self._counts: dict[str, int] = {}
        self._reported = float("-inf")
        self._report_handle: asyncio.TimerHandle | None = None

    def admit(self, connection: Guard) -> bool:
        """Take in a new connection; at the cap, close the least recently active one not
        running a request to make room. False: every one is running a request, the new
        one is to be refused (it is taken in all the same, as the next to close)."""
        room = True
        if len(self.open) >= self.cap:
            idle = (c for c in self.open if not c.running)
            victim = min(idle, key=attrgetter("active"), default=None)
            if victim is None:
                self.note("refused at the cap", connection.loop)
                room = False
            else:
                self.drop(victim)
                victim.shed()
                self.note("closed at the cap", connection.loop)
        self.open.add(connection)
        return room

    def drop(self, connection: Guard) -> None:
        self.open.discard(connection)

    def note(self, what: str, loop: asyncio.AbstractEventLoop) -> None:
        """Count a connection closed or refused for `what`; warn now, or once the last
        warning is `REPORT_EVERY` seconds old."""
        self._counts[what] = self._counts.get(what, 0) + 1
        if self._report_handle is not None:
            return
        due = self._reported + REPORT_EVERY
        if due <= loop.time():
            self._report(loop)
        else:
            self._report_handle = loop.call_at(due, self._report, loop)

    def _report(self, loop: asyncio.AbstractEventLoop) -> None:
        self._report_handle = None
        self._reported = loop.time()
        counts, self._counts = self._counts, {}
        if counts:
            said = ", ".join(f"{count} {what}" for what, count in counts.items())
            log.warning(
                "slow or greedy HTTP clients: connections closed or refused: %s "
                "(%d connections open, at most %d)",
                said,
                len(self.open),
                self.cap,
            )


class Guard(asyncio.Protocol):
    """Mixed into a uvicorn HTTP protocol (see `guarded`): the limits of one connection."""

    _limits: ClassVar[ConnectionLimits]
    _registry: ClassVar[Connections]
    _max_header_bytes: ClassVar[int]
    _pipelined_count: ClassVar[int] = 0
    """The byte count while running: h11 reads nothing of a next request until the
    response is out; httptools does, and its headers are counted."""

    # the uvicorn protocol's own
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    cycle: Any
    flow: Any

    _phase = _HEADERS
    _seen = 0
    _timer: asyncio.TimerHandle | None = None
    active = 0
    """When the connection opened or last started a request (a stamp of `_ACTIVITY`; 0
    once closing): the least recently active one is closed first to make room."""

    @property
    def running(self) -> bool:
        """A request is in and its response not out: not closed to make room."""
        return self._phase == _RUNNING and not self.cycle.response_complete

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.active = next(_ACTIVITY)
        if not self._registry.admit(self):
            self._close(UNAVAILABLE, linger=True)
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        self._phase, self._seen = _CLOSING, _DISCARDING
        self._registry.drop(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        phase = self._phase
        if phase == _IDLE or (phase == _RUNNING and self.cycle.response_complete):
            self._phase, self._seen, self.active = _HEADERS, 0, next(_ACTIVITY)
        self._seen += len(data)
        if self._seen > self._max_header_bytes:
            self._over_bound(data)
            return
        super().data_received(data)
        if self._timer is None and _HEADERS <= self._phase <= _BODY:
            self._arm()

    def _over_bound(self, data: bytes) -> None:
        """The bytes of this chunk within the bound are parsed; if the headers are still
        not complete, 431; else the rest of the chunk is read as any other."""
        if self._phase == _CLOSING:
            return
        within = len(data) - (self._seen - self._max_header_bytes)
        if within > 0:
            super().data_received(data[:within])
        if self._seen > self._max_header_bytes:
            if not self.transport.is_closing():
                self._registry.note("headers too large", self.loop)
                self._close(TOO_LARGE, linger=True)
            return
        self.data_received(data[within:])

    def headers_complete(self) -> None:
        """The parser has a request's headers."""
        self._seen = _NOT_COUNTING
        if self._phase <= _HEADERS:
            self._cancel()
            self._phase = _BODY

    def body_complete(self) -> None:
        """The parser has a request's body (all of the request)."""
        if self._phase != _BODY:
            return
        self._cancel()
        cycle = self.cycle
        if cycle is not None and cycle.response_complete:  # answered before it was read
            self._phase = _IDLE
        else:
            self._phase, self._seen = _RUNNING, self._pipelined_count

    def handle_websocket_upgrade(self, *arguments: Any) -> None:
        """The connection is handed to a WebSocket protocol: no longer guarded."""
        self._cancel()
        self._phase = _RUNNING
        self._registry.drop(self)
        super().handle_websocket_upgrade(*arguments)  # type: ignore[misc]

    def shed(self) -> None:
        """Close to make room for a new connection (503 to a request half sent)."""
        partial = self._phase == _BODY or (self._phase == _HEADERS and self._seen > 0)
        self._close(UNAVAILABLE if partial else None, linger=False)

    def _arm(self) -> None:
        limits = self._limits
        timeout = limits.header_timeout if self._phase == _HEADERS else limits.body_timeout
        self._timer = self.loop.call_at(self.loop.time() + timeout, self._expire)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        phase = self._phase
        if phase == _CLOSING:
            self.transport.abort()
        elif phase == _HEADERS:
            if self._seen > 0:
                self._registry.note("headers too slow", self.loop)
            self._close(TIMED_OUT if self._seen > 0 else None, linger=True)
        elif phase == _BODY:
            self._registry.note("body too slow", self.loop)
            self._close(TIMED_OUT, linger=True)

    def _close(self, answer: bytes | None, *, linger: bool) -> None:
        """Answer (unless a response has begun) and close: with `linger`, after the
        client has read the answer and closed, or `LINGER` seconds; the app sees a
        disconnect."""
        self._cancel()
        self._phase, self._seen, self.active = _CLOSING, _DISCARDING, 0
        transport = self.transport
        if transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            if cycle.response_started:
                answer = None
            cycle.disconnected = True
            cycle.message_event.set()
        if answer is not None:
            transport.write(answer)
        if linger and transport.can_write_eof():
            transport.write_eof()
            self.flow.resume_reading()
        else:
            transport.close()
        self._timer = self.loop.call_at(self.loop.time() + LINGER, self._expire)


class HttpToolsGuard(Guard):
    """The guard over uvicorn's httptools protocol, told by the parser's callbacks (as
    `headers_complete` and `body_complete`, inline: they run for every request)."""

    def on_headers_complete(self) -> None:
        super().on_headers_complete()  # type: ignore[misc]
        self._seen = _NOT_COUNTING
        if self._phase <= _HEADERS:
            if self._timer is not None:
                self._cancel()
            self._phase = _BODY

    def on_message_complete(self) -> None:
        super().on_message_complete()  # type: ignore[misc]
        if self._phase != _BODY:
            return
        if self._timer is not None:
            self._cancel()
        if self.cycle.response_complete:  # answered before it was read
            self._phase = _IDLE
        else:
            self._phase, self._seen = _RUNNING, 0


def guarded(protocol: type[asyncio.Protocol], limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """`protocol` (uvicorn's httptools or h11 protocol, or a subclass) guarded by
    `limits`, with a `Connections` of its own (one per server process)."""
    guard: type[Guard] = HttpToolsGuard
    h11_impl = sys.modules.get("uvicorn.protocols.http.h11_impl")  # loaded if it is used
    if h11_impl is not None and issubclass(protocol, h11_impl.H11Protocol):
        from parley.cli.connection_guard_h11 import H11Guard  # noqa: PLC0415 - h11 only

        guard = H11Guard
    namespace = {
        "_limits": limits,
        "_registry": Connections(limits.max_connections),
        "_max_header_bytes": limits.max_header_bytes,
        "__doc__": f"{protocol.__name__}, guarded against slow and greedy clients.",
    }
    made = type(f"Guarded{protocol.__name__}", (guard, protocol), namespace)
    return cast(type[asyncio.Protocol], made)
