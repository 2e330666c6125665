"""The HTTP+JSON (REST) binding: a router compiled from the operations table's routes; the
`A2A-Version` header (absent = 0.3) picks the version, whose routes alone are matched.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Coroutine, Mapping
from typing import Any
from urllib.parse import unquote

import msgspec

from parley.asgi import streaming
from parley.asgi.calls import (
    Settings,
    admit,
    authenticate,
    call_context,
    echo_headers,
    error_headers,
    open_stream,
    to_a2a_error,
)
from parley.asgi.http import Exchange, Request
from parley.model import StreamEvent
from parley.protocol import generations
from parley.protocol.errors import (
    A2AError,
    InvalidParamsError,
    MethodNotFoundError,
    VersionNotSupportedError,
    invalid_field,
)
from parley.protocol.negotiation import VERSION_HEADER, Version, ask_version
from parley.protocol.operations import OPERATIONS, OperationSpec
from parley.server.context import ANONYMOUS_AUTHENTICATOR, ANONYMOUS_CALLER, Caller
from parley.server.handler import STREAMING, UNARY
from parley.wire import sse
from parley.wire.codec_seam import Codec
from parley.wire.codec_table import REST
from parley.wire.errors import ErrorTable, rest_error
from parley.wire.json_bytes import dumps, loads
from parley.wire.limits import ACTIVE

_PARAMETER = re.compile(r"\{(\w+)\}")


class _Path(msgspec.Struct, frozen=True):
    """One path template and the operation behind each of its verbs."""

    template: str
    pattern: re.Pattern[str]
    verbs: Mapping[str, OperationSpec]


class _WrongVerbError(MethodNotFoundError):
    """The path exists, with other verbs: HTTP 405, MethodNotFoundError's body (§6.3)."""

    def __init__(self, verb: str, allowed: tuple[str, ...]) -> None:
        super().__init__(f"{verb} is not allowed here; allowed: {', '.join(allowed)}")
        self.allowed = allowed


def _compile(template: str) -> re.Pattern[str]:
    """`{name}` is one non-empty path segment, matched still percent-encoded."""
    pieces: list[str] = []
    position = 0
    for match in _PARAMETER.finditer(template):
        pieces.append(re.escape(template[position : match.start()]))
        pieces.append(f"(?P<{match.group(1)}>[^/]+)")
        position = match.end()
    pieces.append(re.escape(template[position:]))
    return re.compile("".join(pieces))


def _precedence(template: str) -> tuple[int, int]:
    """A later first parameter, then more literal text, first: `/tasks/{id}:cancel` before
    `/tasks/{id}`, non-tenant routes before `/{tenant}/…` ones (REFERENCE §3.2)."""
    first = template.find("{")
    return (-(len(template) if first < 0 else first), -len(_PARAMETER.sub("", template)))


def _router(version: Version) -> tuple[_Path, ...]:
    verbs: dict[str, dict[str, OperationSpec]] = {}
    for spec in OPERATIONS.values():
        binding = spec.bindings.get(version)
        for route in binding.routes if binding else ():
            verbs.setdefault(route.path, {})[route.verb] = spec
    ordered = sorted(verbs, key=_precedence)
    return tuple(_Path(t, _compile(t), verbs[t]) for t in ordered)


ROUTERS: Mapping[Version, tuple[_Path, ...]] = {v: _router(v) for v in Version}
"""Each version's paths, most specific first."""


def _literals(paths: tuple[_Path, ...]) -> Mapping[str, _Path]:
    """The paths without parameters that no path before them matches: a request for one
    is routed by a dict lookup instead of a pattern per path (the sends and streams)."""
    found: dict[str, _Path] = {}
    for index, path in enumerate(paths):
        if "{" not in path.template and not any(
            earlier.pattern.fullmatch(path.template) for earlier in paths[:index]
        ):
            found[path.template] = path
    return found


LITERALS: Mapping[Version, Mapping[str, _Path]] = {v: _literals(ROUTERS[v]) for v in Version}

NAMESPACES: Mapping[Version, str] = {
    version: posixpath.commonpath(
        [
            route.path
            for spec in OPERATIONS.values()
            if version in spec.bindings
            for route in spec.bindings[version].routes
        ]
    )
    for version in Version
}
"""The path prefix every route of a version shares (`/v1` for 0.3, `/` for 1.0): a path
inside its own version's namespace that matches nothing is unknown there (404), not a
request for another version (REFERENCE §12.14: no ListTasks on 0.3 surfaces)."""


def _json_name(name: str) -> str:
    """A path parameter under the model's JSON name: `task_id` → `taskId`."""
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def find_route(version: Version, verb: str, path: str) -> tuple[OperationSpec, dict[str, str]]:
    """The operation and decoded path parameters; the first matching path decides.
    405 (`_WrongVerbError`) for another verb; VersionNotSupportedError if only another
    version's routes match; MethodNotFoundError (404) otherwise."""
    literal = LITERALS[version].get(path)
    if literal is not None:
        spec = literal.verbs.get(verb)
        if spec is None:
            raise _WrongVerbError(verb, tuple(literal.verbs))
        return spec, {}
    for candidate in ROUTERS[version]:
        match = candidate.pattern.fullmatch(path)
        if match is None:
            continue
        spec = candidate.verbs.get(verb)
        if spec is None:
            raise _WrongVerbError(verb, tuple(candidate.verbs))
        return spec, {_json_name(k): unquote(v) for k, v in match.groupdict().items()}
    own = NAMESPACES[version]
    inside = own != "/" and (path == own or path.startswith(own + "/"))
    for other, paths in ROUTERS.items():
        if inside:
            break
        if other is not version and any(p.pattern.fullmatch(path) for p in paths):
            raise VersionNotSupportedError(
                f"{path[:200]} is a route of A2A {other.value}; this request is "
                f"A2A {version.value} (set the A2A-Version header)",
                metadata={"requestedVersion": version.value},
            )
    raise MethodNotFoundError(f"No operation at {verb} {path[:200]}")


def _query(request: Request) -> dict[str, Any]:
    """Query parameters by their (camelCase) names; a repeated key becomes a list."""
    out: dict[str, Any] = {}
    for key, value in request.query:
        if key.lower() == VERSION_HEADER.lower():
            continue
        if key in out:
            known = out[key]
            out[key] = [*known, value] if isinstance(known, list) else [known, value]
        else:
            out[key] = value
    return out


def _payload(
    settings: Settings, request: Request, raw: bytes | None, parameters: dict[str, str]
) -> dict[str, Any]:
    """Query, then the POST body `raw` (an object; empty is `{}`), then the path
    parameters, which a body or query value may repeat but not contradict."""
    payload = _query(request) if request.query else {}
    if raw is not None:
        body = loads(raw, settings.limits) if raw.strip() else {}
        if not isinstance(body, dict):
            raise InvalidParamsError("The request body must be a JSON object")
        if payload:
            payload.update(body)
        else:
            payload = body  # (a fresh dict of ours: no copy)
    for key, value in parameters.items():
        given = payload.get(key)
        if given not in (None, "", value):
            raise invalid_field(key, f"contradicts the path ({value!r})")
        payload[key] = value
    return payload


async def serve_rest(settings: Settings, exchange: Exchange) -> None:
    """Answer one request on any path that is not the JSON-RPC URL, a card or health."""
    asked = ask_version(exchange.request.version_header, settings.served)
    version = asked.answer
    limits = settings.limits
    token = None if limits is ACTIVE.get() else ACTIVE.set(limits)  # (`applied`, inline)
    try:
        caller = (  # (no coroutine of `authenticate` for an app without security)
            ANONYMOUS_CALLER
            if settings.authenticator is ANONYMOUS_AUTHENTICATOR
            else await authenticate(settings, exchange)
        )
        named = asked.asked  # (`required`'s work, without its call, for a served version)
        version = named if type(named) is Version else asked.required()
        stream = await _serve(settings, exchange, version, caller)
        if stream is not None:  # `_serve`'s frame (the body, its JSON) is gone by now
            await stream
    except _WrongVerbError as err:
        status, body = rest_error(err, version, 405, settings.errors)
        await exchange.respond_json(status, body, [("Allow", ", ".join(err.allowed))])
    except A2AError as err:
        status, body = rest_error(err, version, table=settings.errors)
        await exchange.respond_json(status, body, error_headers(err))
    finally:
        if token is not None:
            ACTIVE.reset(token)


async def _serve(
    settings: Settings, exchange: Exchange, version: Version, caller: Caller
) -> Coroutine[Any, Any, None] | None:
    """Answer a unary call (None); a streaming one's SSE response, to be awaited once the
    request's body and JSON are no longer held: only the stream's own state is."""
    request = exchange.request
    spec, parameters = find_route(version, request.method, request.path)
    codec = REST[version]
    raw = await exchange.read_body(settings.limits) if request.method == "POST" else None
    payload = _payload(settings, request, raw, parameters)
    operation = spec.operation
    quota = None
    if settings.rate_limiter is not None:
        quota = await admit(settings, caller, request, operation)
    ctx, model_request = call_context(
        settings,
        request,
        version,
        decode=codec.decode_request,
        operation=operation,
        payload=payload,
        caller=caller,
        quota=quota,
    )
    if not spec.streaming:
        try:  # (awaited here: no coroutine of ours between the binding and the handler)
            result = await UNARY[operation].call(settings.handler, ctx, model_request)
        except Exception as exc:
            raise to_a2a_error(exc, operation.value) from None
        body = codec.encode_response(operation, result)
        echoed = echo_headers(ctx) if ctx.activated_extensions or ctx.quota is not None else ()
        await exchange.respond_json(200, body, echoed)
        return None

    events = open_stream(settings.handler, STREAMING[operation], ctx, model_request)
    return streaming.stream(
        exchange,
        events,
        _framing(codec, version, settings.errors),
        settings.keepalive_seconds,
        echo_headers(ctx),
    )


def _framing(codec: Codec[Any], version: Version, errors: ErrorTable) -> streaming.Framing:
    """Each event as its own frame; an error as an `error` event with the error's body."""
    frames = _Frames(codec, version, errors)
    return streaming.Framing(frames.event, frames.error)


class _Frames:
    """One stream's framing state: a few slots (closures would hold a cell apiece for as
    long as the stream is open)."""

    __slots__ = ("codec", "errors", "numbering", "version")

    def __init__(self, codec: Codec[Any], version: Version, errors: ErrorTable) -> None:
        self.codec = codec
        self.version = version
        self.errors = errors
        self.numbering = codec.version in generations.SHOWN_IN  # (the events carry none)

    def event(self, item: StreamEvent, sequence: int | None) -> bytes:
        if self.numbering:
            item = generations.numbered(item, sequence)
        data = dumps(self.codec.encode_event(item))
        # `sse.encode`'s frame, written out: compact JSON is one line (no CR or LF in it).
        if sequence is None:
            return b"data: %s\n\n" % data
        return b"id: %d\ndata: %s\n\n" % (sequence, data)

    def error(self, err: A2AError) -> bytes:
        body = rest_error(err, self.version, table=self.errors)[1]
        return sse.encode(dumps(body), event="error")
