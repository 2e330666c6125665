"""Raw HTTP exchanges with one interface of the agent under check: an operation of the
operations table sent as its binding spells it (JSON-RPC envelope or HTTP+JSON route), and
the answer kept as the server sent it (status, content type, body, SSE events), so a check
sees the wire rather than what a forgiving client would make of it."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from parley.client.card import HTTP_JSON_BINDING, JSONRPC_BINDING
from parley.client.rest import plan
from parley.model import Model
from parley.protocol.negotiation import DEFAULT_VERSION, VERSION_HEADER, Version
from parley.protocol.operations import OPERATIONS, Operation
from parley.wire import jsonrpc
from parley.wire.codec_seam import Codec
from parley.wire.codec_table import JSONRPC, REST
from parley.wire.json_bytes import JSON, dumps
from parley.wire.sse import MEDIA_TYPE, SSEParser

HTTP_BINDINGS = (JSONRPC_BINDING, HTTP_JSON_BINDING)
_REQUEST_ID = "parley-check"
HTTP_OK = 200
UNAUTHORIZED = 401


@dataclass(slots=True)
class Answer:
    """What the server sent back for one request."""

    status: int
    content_type: str
    headers: httpx.Headers
    body: JSON = None
    """The parsed JSON body (None when it is not JSON: see `text`)."""
    text: str = ""
    result: JSON = None
    """The operation's result: JSON-RPC `result`, or a 2xx HTTP+JSON body."""
    error: JSON = None
    """The error object: JSON-RPC `error`, or the HTTP+JSON body of a non-2xx answer."""

    grpc_code: str = ""
    """gRPC: the status code's name (`OK` for a result); empty on HTTP."""

    @property
    def is_json(self) -> bool:
        return self.body is not None

    @property
    def succeeded(self) -> bool:
        if self.grpc_code:
            return self.error is None
        return self.error is None and 200 <= self.status < 300


@dataclass(slots=True)
class StreamAnswer:
    """A streaming call's answer: the status, content type and each SSE event's data."""

    status: int
    content_type: str
    events: list[JSON] = field(default_factory=list)
    """Each event's `data`, parsed (JSON-RPC: the `result` of each envelope)."""
    errors: list[JSON] = field(default_factory=list)
    """JSON-RPC error envelopes met in the stream."""
    malformed: list[str] = field(default_factory=list)
    """Event data that is not JSON (or not a JSON-RPC response), as sent."""
    ended: bool = False
    """Whether the server closed the stream (rather than the checker's limit)."""
    text: str = ""
    """The body of a non-stream answer (gRPC: the error status's message)."""
    grpc_code: str = ""
    """gRPC: the status the stream ended with (`OK` unless it failed); empty on HTTP."""


class Exchange(Protocol):
    """One interface under check, spoken in its binding: HTTP (`Subject`) or gRPC
    (`parley.conformance.grpc_exchange.GrpcSubject`)."""

    @property
    def binding(self) -> str: ...
    @property
    def version(self) -> Version: ...
    @property
    def url(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def codec(self) -> Codec[Any]: ...

    async def call(
        self,
        operation: Operation,
        request: Model,
        *,
        version_header: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer: ...

    async def stream(
        self,
        operation: Operation,
        request: Model,
        *,
        headers: dict[str, str] | None = None,
        max_events: int = 64,
    ) -> StreamAnswer: ...

    def framing_problem(self, answer: StreamAnswer) -> str | None:
        """What makes a stream's answer no stream of events in this binding (None: fine)."""

    def unauthenticated(self, answer: Answer) -> str | None:
        """The binding's refusal of a call without credentials, described (None: not one)."""

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Subject:
    """One interface under check: its binding, version, URL and tenant."""

    http: httpx.AsyncClient
    binding: str
    version: Version
    url: str
    tenant: str = ""
    stream_seconds: float = 10.0

    @property
    def label(self) -> str:
        return f"{self.binding} {self.version.value} {self.url}"

    @property
    def codec(self) -> Codec[Any]:
        return (JSONRPC if self.binding == JSONRPC_BINDING else REST)[self.version]

    def headers(self, version_header: str | None) -> dict[str, str]:
        """`A2A-Version` as the interface's version sends it (0.3 sends none, R-VER-3)."""
        if version_header is None and self.version is not DEFAULT_VERSION:
            version_header = self.version.value
        return {VERSION_HEADER: version_header} if version_header else {}

    def _request(self, operation: Operation, request: Model) -> tuple[str, str, Any, Any]:
        """(verb, url, query, JSON body) of the operation in this binding."""
        binding = OPERATIONS[operation].bindings[self.version]
        payload = self.codec.encode_request(operation, request)
        if self.binding == JSONRPC_BINDING:
            return (
                "POST",
                self.url,
                None,
                jsonrpc.request(binding.jsonrpc_method, payload, _REQUEST_ID),
            )
        call = plan(binding.routes, payload)[0]
        base = self.url.rstrip("/")
        body = json.loads(call.body) if call.body is not None else None
        return call.verb, base + call.path, call.query or None, body

    async def call(
        self,
        operation: Operation,
        request: Model,
        *,
        version_header: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        verb, url, query, body = self._request(operation, request)
        sent = self.headers(version_header) | (headers or {})
        reply = await self.http.request(
            verb,
            url,
            params=query,
            content=None if body is None else dumps(body),
            headers={**sent, **({"Content-Type": "application/json"} if body is not None else {})},
        )
        return self._answer(reply)

    def _answer(self, reply: httpx.Response) -> Answer:
        answer = Answer(reply.status_code, _media_type(reply), reply.headers, text=reply.text)
        try:
            answer.body = json.loads(reply.content) if reply.content else None
        except ValueError:
            return answer
        body = answer.body
        if self.binding == JSONRPC_BINDING:
            if isinstance(body, dict):
                answer.result, answer.error = body.get("result"), body.get("error")
        elif reply.is_success:
            answer.result = body
        else:
            answer.error = body
        return answer

    async def stream(
        self,
        operation: Operation,
        request: Model,
        *,
        headers: dict[str, str] | None = None,
        max_events: int = 64,
    ) -> StreamAnswer:
        verb, url, query, body = self._request(operation, request)
        headers = self.headers(None) | (headers or {}) | {"Accept": "text/event-stream"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        content = None if body is None else dumps(body)
        deadline = time.monotonic() + self.stream_seconds
        async with self.http.stream(
            verb, url, params=query, content=content, headers=headers
        ) as reply:
            answer = StreamAnswer(reply.status_code, _media_type(reply))
            if not reply.is_success or answer.content_type != "text/event-stream":
                answer.text = (await reply.aread()).decode("utf-8", "replace")
                self._stream_error(answer)
                return answer
            parser = SSEParser()
            try:
                async for chunk in reply.aiter_bytes():
                    for event in parser.feed(chunk):
                        self._event(answer, event.data)
                    if len(answer.events) >= max_events or time.monotonic() > deadline:
                        return answer
            except httpx.ReadTimeout:  # open, but quiet: the checker's limit
                return answer
            answer.ended = True
        return answer

    def framing_problem(self, answer: StreamAnswer) -> str | None:
        if answer.status != HTTP_OK:
            return f"HTTP {answer.status}: {answer.text[:160]}"
        if answer.content_type != MEDIA_TYPE:
            return f"content type {answer.content_type or 'missing'}, not {MEDIA_TYPE}"
        return None

    def unauthenticated(self, answer: Answer) -> str | None:
        return f"HTTP {UNAUTHORIZED}" if answer.status == UNAUTHORIZED else None

    async def aclose(self) -> None:
        """The HTTP client is the runner's."""

    def _stream_error(self, answer: StreamAnswer) -> None:
        """A stream refused up front: its error body, as an error of the stream."""
        try:
            body = json.loads(answer.text)
        except ValueError:
            return
        jsonrpc_error = self.binding == JSONRPC_BINDING and isinstance(body, dict)
        answer.errors.append(body.get("error") if jsonrpc_error else body)

    def _event(self, answer: StreamAnswer, data: str) -> None:
        try:
            value = json.loads(data)
        except ValueError:
            answer.malformed.append(data)
            return
        if self.binding != JSONRPC_BINDING:
            answer.events.append(value)
        elif isinstance(value, dict) and "result" in value:
            answer.events.append(value["result"])
        elif isinstance(value, dict) and "error" in value:
            answer.errors.append(value["error"])
        else:
            answer.malformed.append(data)


def _media_type(reply: httpx.Response) -> str:
    return str(reply.headers.get("content-type", "")).split(";")[0].strip().lower()
