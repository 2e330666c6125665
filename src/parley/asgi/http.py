"""Plain ASGI plumbing: the scope/receive/send types, one request's parsed head, reading a
JSON body under the size limit, and sending whole responses.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, quote

import msgspec

from parley.asgi.guard import (
    JSON_MEDIA_TYPES,
    check_content_type,
    check_untyped_body,
    media_type,
)
from parley.protocol.negotiation import EXTENSIONS_HEADERS, VERSION_HEADER, Version
from parley.wire.json_bytes import JSON, dumps, too_large
from parley.wire.limits import Limits

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON_TYPE = "application/json"
A2A_JSON_TYPE = "application/a2a+json"
"""The media type HTTP+JSON SHOULD use (REFERENCE §2.1): answered to a request that sent
it, or that accepts it; everyone else gets `application/json`, which every client reads."""
_PATH_SAFE = "/:@!$&'()*+,;=~"
_VERSION_NAME = VERSION_HEADER.lower()
_CONTENT_TYPES = {
    name: (b"content-type", name.encode("latin-1")) for name in (JSON_TYPE, A2A_JSON_TYPE)
}
"""The JSON answers' Content-Type header, encoded once."""
_NAMES = {
    name.encode("latin-1"): name
    for name in (
        "host",
        "content-type",
        "content-length",
        "accept",
        "accept-encoding",
        "authorization",
        "connection",
        "user-agent",
        "cache-control",
        "last-event-id",
        _VERSION_NAME,
        *(header.lower() for header in EXTENSIONS_HEADERS.values()),
    )
}
_VALUES = {
    value.encode("latin-1"): value
    for value in (
        JSON_TYPE,
        A2A_JSON_TYPE,
        "text/event-stream",
        "*/*",
        "keep-alive",
        "no-cache",
        *(version.value for version in Version),
    )
}
"""The request headers' usual names (as the server gives them: lower case) and values,
decoded once: a request's headers are kept for as long as its stream is open, and these
are shared by every request instead of copied into each."""
_REMEMBERED = frozenset(_NAMES) - {b"authorization"}
"""The names whose headers `_PAIRS` may remember (credentials are never kept)."""
_PAIRS: dict[tuple[bytes, bytes], tuple[str, str]] = {}
"""Raw headers of a usual name and a short value, decoded: the same few (Host, the
Content-Type, the version, a client's Accept and User-Agent) come with every request, and
one lookup of the pair replaces a lookup or a decoding of its name and of its value. At
most `_PAIRS_KEPT` pairs, the first seen (a full cache only stops remembering)."""
_PAIRS_KEPT = 512
_VALUE_KEPT = 128
"""The longest value `_PAIRS` keeps, in bytes."""


class Disconnected(Exception):  # noqa: N818 (a condition, not an error to report)
    """The client went away before its request was read: there is no one to answer."""


class Request(msgspec.Struct, frozen=True):
    """The head of one HTTP request.

    `path` is the raw (still percent-encoded) path without the app's `root_path`, so a
    `%2F` inside an id stays inside its segment; `headers` have lower-case names, repeated
    ones joined with `, ` (RFC 9110 §5.3); `query` keeps repeated keys, in order;
    `client` is the peer as `host:port`, when the server tells it.
    """

    method: str
    path: str
    headers: Mapping[str, str]
    query: tuple[tuple[str, str], ...]
    client: str | None = None

    @classmethod
    def from_scope(cls, scope: Scope) -> Request:
        headers: dict[str, str] = {}
        for pair in scope.get("headers", ()):
            try:
                known = _PAIRS.get(pair)
            except TypeError:  # a pair that is not a tuple of bytes (a list): not kept
                known = None
            name, value = _decoded(pair) if known is None else known
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        raw_query = scope.get("query_string")
        query: tuple[tuple[str, str], ...] = ()
        if raw_query:  # most requests have none: no parser call for them
            pairs = parse_qsl(
                raw_query.decode("latin-1"),
                keep_blank_values=True,
                encoding="utf-8",
                errors="replace",
            )
            query = tuple(pairs)
        peer = scope.get("client")
        client = f"{peer[0]}:{peer[1]}" if peer else None
        raw: bytes | None = scope.get("raw_path")
        if raw and not scope.get("root_path"):  # the usual path, without `_raw_path`'s call
            return cls(
                scope["method"],
                raw.decode("utf-8", "replace").split("?", 1)[0],
                headers,
                query,
                client,
            )
        return cls(scope["method"], _raw_path(scope), headers, query, client)

    def parameter(self, name: str) -> str | None:
        """A service parameter: the header, else the query parameter of that name."""
        value = self.headers.get(name.lower())
        if value is None:
            value = next((v for k, v in self.query if k.lower() == name.lower()), None)
        return value

    @property
    def version_header(self) -> str | None:
        """`A2A-Version`, from the header or the query (REFERENCE §1.2)."""
        value = self.headers.get(_VERSION_NAME)
        if value is None and self.query:
            return self.parameter(VERSION_HEADER)
        return value


def _decoded(pair: Iterable[bytes]) -> tuple[str, str]:
    """One raw header as (lower-case name, value); remembered in `_PAIRS` if it may be."""
    raw_name, raw_value = pair
    name = _NAMES.get(raw_name) or raw_name.decode("latin-1").lower()
    value = _VALUES.get(raw_value) or raw_value.decode("latin-1")
    if (
        type(pair) is tuple
        and type(raw_name) is bytes
        and type(raw_value) is bytes
        and raw_name in _REMEMBERED
        and len(raw_value) <= _VALUE_KEPT
        and len(_PAIRS) < _PAIRS_KEPT
    ):
        _PAIRS[pair] = (name, value)
    return name, value


def _raw_path(scope: Scope) -> str:
    """The encoded path without query and root path; rebuilt from `path` if the server
    gives no `raw_path` (httpx's transport puts the query inside `raw_path`: cut it)."""
    raw: bytes | None = scope.get("raw_path")
    if raw:
        path: str = raw.decode("utf-8", "replace").split("?", 1)[0]
    else:
        path = quote(scope.get("path", "/"), safe=_PATH_SAFE)
    root = scope.get("root_path")
    if root:
        root = quote(root, safe=_PATH_SAFE)
        if path.startswith(root):
            path = path[len(root) :] or "/"
    return path


class Exchange(msgspec.Struct):
    """One request and the means to answer it; remembers whether the answer has started."""

    scope: Scope
    receive: Receive
    raw_send: Send
    request: Request
    started: bool = False

    def send(self, message: Message) -> Awaitable[None]:
        """The server's `send` of `message` (no coroutine of ours around it: a stream
        sends through here once per event)."""
        if message["type"] == "http.response.start":
            self.started = True
        return self.raw_send(message)

    async def read_body(self, limits: Limits) -> bytes:
        """The whole body, declared as JSON (`guard.Refused` otherwise: a body of another
        Content-Type before it is read, a non-empty one without any after);
        InvalidRequestError past `limits.max_body_bytes` (a too large Content-Length is
        refused before anything is read); Disconnected if the client leaves."""
        headers = self.request.headers
        content_type = headers.get("content-type")
        if content_type is not None and content_type not in JSON_MEDIA_TYPES:
            check_content_type(headers)  # (parameters, or refused)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limits.max_body_bytes:
            raise too_large(int(declared), limits)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limits.max_body_bytes:
                raise too_large(size, limits)
            if not message.get("more_body", False):
                # A body in one message (the usual) is that message's bytes: no join.
                if chunks or type(chunk) is not bytes:
                    chunks.append(chunk)
                    chunk = b"".join(chunks)
                body = chunk
                if content_type is None:
                    check_untyped_body(headers, body)
                return body
            chunks.append(chunk)

    async def respond(
        self,
        status: int,
        body: bytes = b"",
        headers: Iterable[tuple[str, str]] = (),
        content_type: str | None = JSON_TYPE,
    ) -> None:
        """A whole response: status, headers (Content-Length added) and body."""
        encoded = _CONTENT_TYPES.get(content_type) if content_type is not None else None
        if encoded is not None and not headers and status not in {204, 304}:
            # The usual answer: a JSON body and no other header, the list made at once.
            head = [encoded, (b"content-length", b"%d" % len(body))]
        else:
            head = []
            if headers:  # usually none: no comprehension (a call of its own) for them
                head = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
            if content_type is not None:
                head.append(encoded or (b"content-type", content_type.encode("latin-1")))
            if status not in (204, 304):
                head.append((b"content-length", str(len(body)).encode("latin-1")))
        self.started = True  # (`send`'s work, without its call: both messages go at once)
        await self.raw_send({"type": "http.response.start", "status": status, "headers": head})
        await self.raw_send({"type": "http.response.body", "body": body, "more_body": False})

    async def respond_json(
        self, status: int, value: JSON, headers: Iterable[tuple[str, str]] = ()
    ) -> None:
        body = dumps(value)
        if headers or self.request.headers.get("content-type") != JSON_TYPE:
            await self.respond(status, body, headers, answer_type(self.request.headers))
            return
        # The usual answer (`respond`'s, without its coroutine): JSON to a JSON request.
        head = [_CONTENT_TYPES[JSON_TYPE]]
        if status not in {204, 304}:
            head.append((b"content-length", b"%d" % len(body)))
        self.started = True
        await self.raw_send({"type": "http.response.start", "status": status, "headers": head})
        await self.raw_send({"type": "http.response.body", "body": body, "more_body": False})


def answer_type(headers: Mapping[str, str]) -> str:
    """The JSON media type to answer in: `application/a2a+json` to a request whose body
    was declared so, or, without a body, whose `Accept` names it."""
    sent = headers.get("content-type")
    if sent is not None:
        if sent == JSON_TYPE:  # the common case, decided without parsing
            return JSON_TYPE
        return A2A_JSON_TYPE if media_type(sent) == A2A_JSON_TYPE else JSON_TYPE
    accept = headers.get("accept")
    return A2A_JSON_TYPE if accept and A2A_JSON_TYPE in accept.lower() else JSON_TYPE
