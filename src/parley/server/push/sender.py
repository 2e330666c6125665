"""How a delivery reaches a webhook: one HTTP/1.1 request to the address the SSRF guard
checked (`ssrf.resolve_and_check`), never to a second resolution of the name, never
following a redirect, reading at most a bounded prefix of the answer.

Theory of operation. `WebhookClient` speaks HTTP/1.1 through `h11` (parsing and framing)
over asyncio streams: no proxy, netrc or CA settings from the environment (a proxy would
dial the name itself), no redirects, no cookies. An answered connection is kept idle for
the next request to exactly the same (scheme, address, port, TLS server name, Host): a
connection verified for one name never carries a request for another name at the same
address. A kept connection the receiver closed meanwhile is replaced once, when it failed
before any of the answer came (a notification is delivered at least once, with its id).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import Mapping

import certifi
import h11
import msgspec

from parley.server.push.ssrf import CheckedTarget

IDLE_SECONDS = 4.0
"""How long a kept connection may wait for its next request (below the 5 s after which
common servers close an idle one)."""
IDLE_PER_KEY = 8
"""Idle connections kept per destination, at most."""
CHUNK = 65536
DRAIN = 4096
"""Bytes of an answer's body read to keep its connection, when fewer are asked for."""
_BROKEN = (OSError, ssl.SSLError, h11.ProtocolError)


class SendError(Exception):
    """The request could not be made or the answer could not be read (connection refused
    or reset, TLS verification, a malformed answer)."""


class Answer(msgspec.Struct, frozen=True):
    """A webhook's answer: the status, its headers, at most the asked prefix of its body."""

    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes

    @property
    def is_success(self) -> bool:
        return 200 <= self.status < 300


Key = tuple[str, str, int, str | None, str]
"""(scheme, address, port, TLS server name, Host): what a kept connection may serve again."""


class _Connection(msgspec.Struct):
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    http: h11.Connection
    idle_since: float = 0.0

    def close(self) -> None:
        self.writer.close()

    def fresh(self, now: float) -> bool:
        closed = self.reader.at_eof() or self.writer.is_closing()
        return not closed and now - self.idle_since < IDLE_SECONDS


class _StaleError(Exception):
    """A kept connection failed before any of the answer came."""


class WebhookClient:
    """Sends requests pinned to checked addresses (`send_pinned`), keeping answered
    connections per exact destination. `tls` verifies https receivers (default: the
    certifi CA bundle); `timeout` bounds a request from connecting to the answer's head."""

    def __init__(self, *, timeout: float = 10.0, tls: ssl.SSLContext | None = None) -> None:
        self.timeout = timeout
        self._tls = tls
        self._idle: dict[Key, list[_Connection]] = {}
        self._swept = time.monotonic()

    @property
    def tls(self) -> ssl.SSLContext:
        if self._tls is None:  # made on first use: loading the CA bundle takes a while
            self._tls = ssl.create_default_context(cafile=certifi.where())
        return self._tls

    async def __aenter__(self) -> WebhookClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()

    async def request(
        self,
        checked: CheckedTarget,
        *,
        content: bytes,
        headers: Mapping[str, str] | None = None,
        method: str = "POST",
        read: int = 0,
        deadline: float | None = None,
    ) -> Answer:
        """See `send_pinned`."""
        target = checked.target
        address = str(checked.address)
        key: Key = (target.scheme, address, checked.port, checked.server_name, target.authority)
        fields = [("Host", target.authority), *(headers or {}).items()]
        fields.append(("Content-Length", str(len(content))))
        try:
            request = h11.Request(method=method, target=target.path, headers=fields)
        except h11.LocalProtocolError as exc:  # its text may quote a header's value
            raise SendError("a malformed request: a header or the target is not valid") from exc
        if deadline is None:
            deadline = asyncio.get_running_loop().time() + self.timeout
        ask = _Ask(request, content, read, deadline)
        kept = self._kept(key)
        if kept is not None:
            with contextlib.suppress(_StaleError):  # closed while idle: once more, on a new one
                return await self._exchange(key, kept, ask)
        async with asyncio.timeout_at(deadline):
            connection = await self._connect(key)
        try:
            return await self._exchange(key, connection, ask)
        except _StaleError as exc:
            cause = exc.__cause__
            raise SendError(f"{type(cause).__name__}: {cause}") from cause

    def _kept(self, key: Key) -> _Connection | None:
        now = time.monotonic()
        if now - self._swept > IDLE_SECONDS:
            self._swept = now
            for each_key, kept in list(self._idle.items()):
                for connection in kept:
                    if not connection.fresh(now):
                        connection.close()
                self._idle[each_key] = [each for each in kept if each.fresh(now)]
                if not self._idle[each_key]:
                    del self._idle[each_key]
        waiting = self._idle.get(key)
        while waiting:
            connection = waiting.pop()
            if connection.fresh(now):
                return connection
            connection.close()
        return None

    async def _connect(self, key: Key) -> _Connection:
        scheme, address, port, server_name, _ = key
        tls = self.tls if scheme == "https" else None
        try:
            reader, writer = await asyncio.open_connection(
                address,
                port,
                ssl=tls,
                server_hostname=(server_name or address) if tls is not None else None,
                limit=CHUNK,
            )
        except _BROKEN as exc:
            raise SendError(f"{type(exc).__name__}: {exc}") from exc
        return _Connection(reader, writer, h11.Connection(h11.CLIENT))

    async def _exchange(self, key: Key, connection: _Connection, ask: _Ask) -> Answer:
        """Send the request and read the answer's head by the deadline (`_StaleError` when
        the connection fails before any of it); then its body, as far as `read` (or
        `DRAIN`, to keep the connection) and the deadline allow."""
        try:
            async with asyncio.timeout_at(ask.deadline):
                head = await _head(connection, ask)
        except TimeoutError:
            connection.close()
            raise
        except _BROKEN as exc:
            connection.close()
            raise SendError(f"{type(exc).__name__}: {exc}") from exc
        except BaseException:
            connection.close()
            raise
        body, ended = b"", False
        with contextlib.suppress(*_BROKEN, TimeoutError):
            async with asyncio.timeout_at(ask.deadline):
                while not ended and len(body) <= max(ask.read, DRAIN):
                    part = await _next(connection)
                    ended = isinstance(part, h11.EndOfMessage)
                    if isinstance(part, h11.Data):
                        body += part.data
        self._release(key, connection, ended=ended)
        return Answer(head.status_code, tuple(head.headers), body[: ask.read])

    def _release(self, key: Key, connection: _Connection, *, ended: bool) -> None:
        """Keep the connection for the next request to `key`, or close it."""
        http = connection.http
        kept = self._idle.setdefault(key, [])
        done = ended and http.our_state is h11.DONE and http.their_state is h11.DONE
        if done and len(kept) < IDLE_PER_KEY:
            http.start_next_cycle()
            connection.idle_since = time.monotonic()
            kept.append(connection)
            return
        if not kept:
            del self._idle[key]
        connection.close()


class _Ask(msgspec.Struct, frozen=True):
    request: h11.Request
    content: bytes
    read: int
    deadline: float


async def _head(connection: _Connection, ask: _Ask) -> h11.Response:
    """Send the request; the answer's head (informational answers skipped)."""
    http = connection.http
    try:
        data = http.send(ask.request) or b""
        if ask.content:
            data += http.send(h11.Data(data=ask.content)) or b""
        data += http.send(h11.EndOfMessage()) or b""
        connection.writer.write(data)
        await connection.writer.drain()
        event = await _next(connection)
    except _BROKEN as exc:
        raise _StaleError from exc
    while isinstance(event, h11.InformationalResponse):
        event = await _next(connection)
    if not isinstance(event, h11.Response):
        raise SendError(f"no answer: {type(event).__name__}")
    return event


async def _next(connection: _Connection) -> object:
    """The next event of the answer, reading as needed (the end of the stream too)."""
    while True:
        event = connection.http.next_event()
        if event is not h11.NEED_DATA:
            return event
        data = await connection.reader.read(CHUNK)
        if not data and connection.http.their_state is h11.SEND_RESPONSE:
            raise ConnectionResetError("the receiver closed the connection")
        connection.http.receive_data(data)


def webhook_client(*, timeout: float = 10.0, tls: ssl.SSLContext | None = None) -> WebhookClient:
    """A client for `send_pinned`; `tls` holds the CAs https receivers are verified with."""
    return WebhookClient(timeout=timeout, tls=tls)


async def send_pinned(
    client: WebhookClient,
    checked: CheckedTarget,
    *,
    content: bytes,
    headers: Mapping[str, str] | None = None,
    method: str = "POST",
    read: int = 0,
    deadline: float | None = None,
) -> Answer:
    """One request to exactly the checked address, with the URL's host as Host header and
    TLS server name; a redirect is returned, never followed. Of the answer's body, at most
    the first `read` bytes are read (as sent, not decoded): an endless or huge answer costs
    no more than that. Raises `SendError`, or TimeoutError when the answer's head has not
    come by `deadline` (the event loop's clock; default: the client's timeout from now)."""
    return await client.request(
        checked, content=content, headers=headers, method=method, read=read, deadline=deadline
    )


__all__ = ["Answer", "SendError", "WebhookClient", "send_pinned", "webhook_client"]
