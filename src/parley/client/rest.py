"""The HTTP+JSON (REST) transport: routes from the operations table (1.0, with its
`/{tenant}` forms; 0.3 under `/v1`), path parameters taken out of the codec's payload and
the rest sent as the query (GET, DELETE) or the JSON body (POST); errors decoded from
status and body; streams as SSE whose `event: error` frames carry an error body.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from parley.client.auth import Auth
from parley.client.errors import ClientProtocolError
from parley.client.http import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RESPONSE_BYTES,
    WRONG_VERB,
    HttpChannel,
    Reply,
    SSEEventStream,
    decoding,
    parse_json,
    unexpected,
)
from parley.client.transport import BaseTransport, CallOptions, EventStream
from parley.model import Model, StreamEvent
from parley.protocol.errors import A2AError, InternalError, MethodNotFoundError, invalid_field
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation, Route
from parley.wire import sse
from parley.wire.codec_table import REST
from parley.wire.errors import BY_REASON, ERROR_INFO_TYPE, ERROR_TABLE, from_rest_error
from parley.wire.json_bytes import JSON, dumps, loads
from parley.wire.limits import Limits

_PARAMETER = re.compile(r"\{(\w+)\}")
_TENANT = "{tenant}"
_QUERY_VERBS = frozenset({"GET", "DELETE"})

A2A_STATUSES = frozenset(
    {row.http_status for row in ERROR_TABLE.values()}
    | {row.http_status_v03 for row in ERROR_TABLE.values()}
    | {WRONG_VERB}
)
"""The HTTP statuses an A2A error may come with (both versions; 405 for a wrong verb)."""


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """One HTTP request for an operation: verb, path, and query or body."""

    verb: str
    path: str
    query: list[tuple[str, str]]
    body: bytes | None


def _json_name(name: str) -> str:
    """A path parameter under the payload's JSON name: `task_id` → `taskId`."""
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def _scalar(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    return None


def _query(payload: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Scalars (and lists of scalars, repeated) as query parameters; objects have no
    query form and are left out (no GET or DELETE request carries one)."""
    out: list[tuple[str, str]] = []
    for key, value in payload.items():
        for item in value if isinstance(value, list) else [value]:
            text = _scalar(item)
            if text is not None:
                out.append((key, text))
    return out


def _plan_one(route: Route, payload: Mapping[str, Any]) -> PlannedCall:
    rest = dict(payload)

    def fill(match: re.Match[str]) -> str:
        key = _json_name(match.group(1))
        value = rest.pop(key, None)
        if not isinstance(value, str) or not value:
            raise invalid_field(key, "is required")
        return quote(value, safe="")

    path = _PARAMETER.sub(fill, route.path)
    if route.verb in _QUERY_VERBS:
        return PlannedCall(route.verb, path, _query(rest), None)
    return PlannedCall(route.verb, path, [], dumps(rest))


def plan(routes: tuple[Route, ...], payload: Mapping[str, Any]) -> list[PlannedCall]:
    """The requests that can carry `payload`, in the table's order: the `/{tenant}` routes
    when it names a tenant (and the version has them), else the plain ones."""
    tenanted = bool(payload.get("tenant")) and any(_TENANT in r.path for r in routes)
    chosen = [r for r in routes if (_TENANT in r.path) == tenanted]
    return [_plan_one(route, payload) for route in chosen]


def _known_reason(body: Mapping[str, Any]) -> bool:
    """Whether a Status body names an A2A error (an ErrorInfo with one of its reasons)."""
    details = body["error"].get("details")
    return isinstance(details, list) and any(
        isinstance(d, dict) and d.get("@type") == ERROR_INFO_TYPE and d.get("reason") in BY_REASON
        for d in details
    )


def error_of(reply: Reply, limits: Limits) -> Exception:
    """The A2A error a REST answer carries (1.0 `{"error": Status}` or 0.3 `{"message"}`),
    or ClientProtocolError when it is not an A2A error answer."""
    try:
        body = loads(reply.body, limits)
    except A2AError:
        return unexpected(reply)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        if reply.status in A2A_STATUSES or _known_reason(body):
            return _decoded(reply.status, body)
    elif (
        isinstance(body, dict)
        and isinstance(body.get("message"), str)
        and reply.status in A2A_STATUSES
    ):
        return _decoded(reply.status, body)
    return unexpected(reply)


def _decoded(status: int, body: JSON) -> A2AError:
    """The error of a REST answer; a 405 without a reason is the server's answer to a
    known path with another verb: MethodNotFoundError (REFERENCE §6.3)."""
    error = from_rest_error(status, body)
    if status == WRONG_VERB and type(error) is InternalError:
        return MethodNotFoundError(error.message)
    return error


def _frame_error(data: JSON) -> A2AError:
    """An `event: error` frame: its status is the body's `error.code` (1.0), else 500."""
    inner = data.get("error") if isinstance(data, dict) else None
    code = inner.get("code") if isinstance(inner, dict) else None
    return from_rest_error(code if type(code) is int else 500, data)


class RestTransport(BaseTransport):
    """HTTP+JSON to one interface (its URL is the base of every route), in one version.

    `http`: an httpx client to share (the caller closes it); by default the transport
    makes and closes its own. `auth` adds credentials to every request.
    """

    def __init__(
        self,
        url: str,
        version: Version = Version.V1_0,
        *,
        http: httpx.AsyncClient | None = None,
        auth: Auth | None = None,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.url = url.rstrip("/")
        self.channel = HttpChannel(
            version,
            http=http,
            auth=auth,
            headers=headers,
            connect_timeout=connect_timeout,
            max_response_bytes=max_response_bytes,
        )
        self.codec = REST[version]

    @property
    def version(self) -> Version:
        return self.channel.version

    def _plan(self, operation: Operation, request: Model) -> list[PlannedCall]:
        binding = OPERATIONS[operation].bindings.get(self.version)
        if binding is None:
            raise MethodNotFoundError(
                f"{operation.value} does not exist in A2A {self.version.value}",
                metadata={"method": operation.value},
            )
        payload = self.codec.encode_request(operation, request)
        return plan(binding.routes, payload)

    async def unary(self, operation: Operation, request: Model, options: CallOptions) -> Any:
        """The first route's request (only SubscribeToTask, a stream, has alternatives)."""
        call = self._plan(operation, request)[0]
        reply = await self.channel.call(
            call.verb, self.url + call.path, options, params=call.query, body=call.body
        )
        if not 200 <= reply.status < 300:
            raise error_of(reply, self.channel.limits)
        what = f"{operation.value} result"
        payload = parse_json(reply.body, self.channel.limits, what) if reply.body.strip() else None
        with decoding(what, reply.status):
            return self.codec.decode_response(operation, payload)

    def stream(self, operation: Operation, request: Model, options: CallOptions) -> EventStream:
        calls: list[PlannedCall] = []

        async def build(attempt: int) -> httpx.Request | None:
            if not calls:
                calls.extend(self._plan(operation, request))
            if attempt >= len(calls):
                return None
            call = calls[attempt]
            return await self.channel.build(
                call.verb,
                self.url + call.path,
                options,
                accept=sse.MEDIA_TYPE,
                params=call.query,
                body=call.body,
            )

        def decode(event: sse.SSEEvent) -> StreamEvent:
            data = parse_json(event.data, self.channel.limits, "stream event")
            if event.event == "error":
                raise _frame_error(data)
            with decoding(f"{operation.value} event"):
                return self.codec.decode_event(data)

        def fail(reply: Reply) -> Exception:
            if 200 <= reply.status < 300:
                return ClientProtocolError(
                    f"Expected an event stream, got {reply.media_type or 'no content type'}",
                    status_code=reply.status,
                )
            return error_of(reply, self.channel.limits)

        return SSEEventStream(self.channel, build, options, decode, fail)

    async def aclose(self) -> None:
        await self.channel.aclose()
