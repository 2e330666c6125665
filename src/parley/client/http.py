"""What the JSON-RPC and HTTP+JSON transports share: one httpx client, the request headers
(version, extensions, credentials, `Last-Event-ID`), timeouts suited to each kind of call,
bounded response bodies, SSE reading with an idle limit, and httpx's exceptions translated
into client errors in one place.

Timeouts: connecting, sending and waiting for a pooled connection are bounded by
`connect_timeout`; a unary call as a whole by its `timeout` (a deadline); a stream has no
read timeout at all (an agent may be silent for minutes) but an optional idle limit.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import httpx

from parley.client.auth import Auth
from parley.client.errors import (
    ClientConnectionError,
    ClientProtocolError,
    ClientTimeoutError,
    StreamIdleError,
)
from parley.client.transport import CallOptions
from parley.model import StreamEvent
from parley.protocol.errors import A2AError
from parley.protocol.negotiation import EXTENSIONS_HEADERS, VERSION_HEADER, Version
from parley.wire import sse
from parley.wire.json_bytes import JSON, loads
from parley.wire.limits import Limits

JSON_MEDIA_TYPE = "application/json"
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
LAST_EVENT_ID_HEADER = "Last-Event-ID"
WRONG_VERB = 405
"""Method Not Allowed: a route that exists with another verb (try the next alternative)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete HTTP answer: status, media type (lower case, no parameters), body."""

    status: int
    media_type: str
    body: bytes
    retry_after: float | None = None


@contextmanager
def translated(what: str) -> Iterator[None]:
    """httpx's exceptions as client errors (the one translation point); `what` names the
    call in the message."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise ClientTimeoutError(f"{what}: timed out ({type(exc).__name__})") from exc
    except httpx.TransportError as exc:
        raise ClientConnectionError(f"{what}: {type(exc).__name__}: {exc}") from exc
    except httpx.InvalidURL as exc:
        raise ClientConnectionError(f"{what}: invalid URL: {exc}") from exc


@contextmanager
def decoding(what: str, status: int | None = None) -> Iterator[None]:
    """A payload the codec refuses is the server's fault, not ours: ClientProtocolError."""
    try:
        yield
    except A2AError as exc:
        raise ClientProtocolError(f"Unreadable {what}: {exc.message}", status_code=status) from exc


def parse_json(body: bytes | str, limits: Limits, what: str, status: int | None = None) -> JSON:
    """Parse a response body; anything but JSON within the limits is a protocol error."""
    with decoding(what, status):
        return loads(body, limits)


def unexpected(reply: Reply, what: str = "answer") -> ClientProtocolError:
    """An HTTP answer that is not the A2A answer expected (an HTML error page, a proxy's
    503, a 401 from an authentication layer)."""
    kind = reply.media_type or "no content type"
    return ClientProtocolError(
        f"Unexpected {what}: HTTP {reply.status} ({kind}): {_excerpt(reply.body)}",
        status_code=reply.status,
        retry_after=reply.retry_after,
    )


def _excerpt(body: bytes, size: int = 200) -> str:
    text = body[:size].decode("utf-8", "replace").strip()
    return text + ("…" if len(body) > size else "") if text else "(empty body)"


def media_type(response: httpx.Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.split(";", maxsplit=1)[0].strip().lower()


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    return float(value) if value.isdigit() else None


class HttpChannel:
    """One httpx client (owned, or the caller's) and how every request is dressed."""

    def __init__(
        self,
        version: Version,
        *,
        http: httpx.AsyncClient | None = None,
        auth: Auth | None = None,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.version = version
        self.owns_http = http is None
        self.http = http if http is not None else httpx.AsyncClient()
        self.auth = auth
        self.headers = dict(headers or {})
        self.timeouts = httpx.Timeout(
            connect=connect_timeout, read=None, write=connect_timeout, pool=connect_timeout
        )
        self.limits = Limits(max_body_bytes=max_response_bytes)

    async def request_headers(self, options: CallOptions, accept: str) -> dict[str, str]:
        """A2A-Version, the extensions header of the version, Last-Event-ID, then the
        channel's and the call's own headers, then credentials (each may override)."""
        headers = {VERSION_HEADER: self.version.value, "Accept": accept}
        if options.extensions:
            headers[EXTENSIONS_HEADERS[self.version]] = ", ".join(options.extensions)
        if options.last_event_id:
            headers[LAST_EVENT_ID_HEADER] = options.last_event_id
        headers.update(self.headers)
        headers.update(options.headers)
        if self.auth is not None:
            headers.update(await self.auth.headers())
        return headers

    async def build(
        self,
        method: str,
        url: str,
        options: CallOptions,
        *,
        accept: str,
        params: Any = None,
        body: bytes | None = None,
    ) -> httpx.Request:
        headers = await self.request_headers(options, accept)
        if body is not None:
            headers["Content-Type"] = JSON_MEDIA_TYPE
        with translated(f"{method} {url}"):
            return self.http.build_request(
                method, url, params=params, content=body, headers=headers, timeout=self.timeouts
            )

    async def read(self, response: httpx.Response) -> bytes:
        """The whole body, refused past `max_response_bytes`."""
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.limits.max_body_bytes:
                raise ClientProtocolError(
                    f"Response larger than {self.limits.max_body_bytes} bytes",
                    status_code=response.status_code,
                )
            chunks.append(chunk)
        return b"".join(chunks)

    async def reply(self, response: httpx.Response) -> Reply:
        """Read and close a response."""
        try:
            body = await self.read(response)
        finally:
            await response.aclose()
        return Reply(response.status_code, media_type(response), body, _retry_after(response))

    async def call(
        self,
        method: str,
        url: str,
        options: CallOptions,
        *,
        params: Any = None,
        body: bytes | None = None,
    ) -> Reply:
        """One unary exchange under the call's deadline."""
        what = f"{method} {url}"
        request = await self.build(
            method, url, options, accept=JSON_MEDIA_TYPE, params=params, body=body
        )
        try:
            async with asyncio.timeout(options.timeout):
                with translated(what):
                    response = await self.http.send(request, stream=True)
                    return await self.reply(response)
        except TimeoutError as exc:
            raise ClientTimeoutError(f"{what}: no answer within {options.timeout} s") from exc

    async def get(self, url: str, timeout: float | None) -> Reply:
        """A plain GET (no A2A headers, no credentials): the public agent card."""
        try:
            async with asyncio.timeout(timeout):
                with translated(f"GET {url}"):
                    request = self.http.build_request(
                        "GET", url, headers={"Accept": JSON_MEDIA_TYPE}, timeout=self.timeouts
                    )
                    return await self.reply(await self.http.send(request, stream=True))
        except TimeoutError as exc:
            raise ClientTimeoutError(f"GET {url}: no answer within {timeout} s") from exc

    async def aclose(self) -> None:
        if self.owns_http:
            await self.http.aclose()


StreamDecoder = Callable[[sse.SSEEvent], StreamEvent]
"""One SSE event to a stream event; raises the A2A error an error frame carries."""
FailureDecoder = Callable[[Reply], Exception]
"""A non-stream answer to a streaming call: the exception to raise."""


class SSEEventStream:
    """An EventStream over one SSE response, opened on the first `__anext__`.

    `request(n)` builds the n-th alternative request (None: there is none); an
    alternative is tried only when the previous one was answered 405.

    Reads with no read timeout; `options.idle_timeout` bounds the wait for the response
    and for each next piece of it (an event or a keep-alive comment), else StreamIdleError.
    """

    def __init__(
        self,
        channel: HttpChannel,
        request: Callable[[int], Awaitable[httpx.Request | None]],
        options: CallOptions,
        decode: StreamDecoder,
        fail: FailureDecoder,
    ) -> None:
        self._channel = channel
        self._request = request
        self._idle = options.idle_timeout
        self._decode = decode
        self._fail = fail
        self._response: httpx.Response | None = None
        self._chunks: Any = None
        self._parser = sse.SSEParser()
        self._ready: deque[sse.SSEEvent] = deque()
        self._closed = False
        self._last_event_id = ""
        self._what = "stream"

    @property
    def last_event_id(self) -> str:
        return self._last_event_id

    def __aiter__(self) -> SSEEventStream:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._closed:
            raise StopAsyncIteration
        try:
            if self._response is None:
                await self._open()
            event = await self._next()
            if event is None:
                raise StopAsyncIteration
            self._last_event_id = event.id
            return self._decode(event)
        except BaseException:
            await self.aclose()
            raise

    async def _idle_bounded(self, step: Awaitable[Any]) -> Any:
        try:
            async with asyncio.timeout(self._idle):
                with translated(self._what):
                    return await step
        except TimeoutError as exc:
            raise StreamIdleError(f"{self._what}: nothing received for {self._idle} s") from exc

    async def _open(self) -> None:
        """Send the request (the next alternative after a 405); fail unless SSE comes."""
        attempt, request = 0, await self._request(0)
        while True:
            assert request is not None  # the first request always exists
            self._what = f"{request.method} {request.url}"
            response = await self._idle_bounded(self._channel.http.send(request, stream=True))
            self._response = response
            if response.status_code == 200 and media_type(response) == sse.MEDIA_TYPE:
                self._chunks = response.aiter_bytes()
                return
            reply = await self._idle_bounded(self._channel.reply(response))
            attempt += 1
            request = await self._request(attempt) if reply.status == WRONG_VERB else None
            if request is None:
                raise self._fail(reply)

    async def _next(self) -> sse.SSEEvent | None:
        """The next event with data (an empty `data:` is a heartbeat), None at the end."""
        while not self._ready:
            try:
                chunk = await self._idle_bounded(anext(self._chunks))
            except StopAsyncIteration:
                return None
            with decoding("event stream"):
                self._ready.extend(e for e in self._parser.feed(chunk) if e.data.strip())
        return self._ready.popleft()

    async def aclose(self) -> None:
        self._closed = True
        response, self._response = self._response, None
        if response is not None:
            with suppress(httpx.HTTPError):
                await response.aclose()
