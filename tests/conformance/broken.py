"""Deliberately broken A2A servers for the checker's tests: a correct Parley app behind a
pure-ASGI middleware that breaks exactly one rule (a request rewritten on its way in, or
an answer on its way out)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from parley.protocol.negotiation import VERSION_HEADER, Version

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

Json = Any


@dataclass(frozen=True)
class Breakage:
    """One broken rule: how the request or the answer is spoiled."""

    request: Callable[[Scope], Scope] = lambda scope: scope
    answer: Callable[[Scope, Json], Json] | None = None
    """Rewrites a whole JSON answer (buffered)."""
    headers: Callable[[list[tuple[bytes, bytes]]], list[tuple[bytes, bytes]]] | None = None
    """Rewrites an answer's headers."""
    drop_first_event: bool = False


def broken(app: App, breakage: Breakage) -> App:
    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        scope = breakage.request(dict(scope))
        await app(scope, receive, _Sender(scope, send, breakage).send)

    return serve


class _Sender:
    def __init__(self, scope: Scope, send: Send, breakage: Breakage) -> None:
        self.scope, self.inner, self.breakage = scope, send, breakage
        self.start: Message | None = None
        self.body = b""
        self.streaming = False
        self.dropped = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            self.streaming = any(v.startswith(b"text/event-stream") for _, v in headers)
            if self.breakage.headers is not None:
                headers = self.breakage.headers(headers)
            message = {**message, "headers": headers}
            if self.breakage.answer is not None and not self.streaming:
                self.start = message
                return
            await self.inner(message)
            return
        if self.start is not None:
            self.body += message.get("body", b"")
            if not message.get("more_body"):
                await self._flush()
            return
        first = self.streaming and self.breakage.drop_first_event and not self.dropped
        if first and b"data:" in message.get("body", b""):
            self.dropped = True
            message = {**message, "body": b""}
        await self.inner(message)

    async def _flush(self) -> None:
        assert self.start is not None
        assert self.breakage.answer is not None
        body = self.body
        try:
            value = json.loads(body)
        except ValueError:
            pass
        else:
            body = json.dumps(self.breakage.answer(self.scope, value)).encode()
        headers = [(k, v) for k, v in self.start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.inner({**self.start, "headers": headers})
        await self.inner({"type": "http.response.body", "body": body})


def _error_code(scope: Scope, value: Json) -> Json:
    """TaskNotFoundError answered as an internal error (JSON-RPC), or 404 as 500's body."""
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        error = value["error"]
        if error.get("code") == -32001:
            error["code"] = -32603
        for detail in error.get("details", []):
            if detail.get("reason") == "TASK_NOT_FOUND":
                detail["reason"] = "INTERNAL_ERROR"
    return value


def _no_history_length(scope: Scope) -> Scope:
    query = scope.get("query_string", b"").decode()
    kept = "&".join(p for p in query.split("&") if p and not p.startswith("historyLength="))
    return {**scope, "query_string": kept.encode()}


def _no_version_check(scope: Scope) -> Scope:
    name = VERSION_HEADER.lower().encode()
    headers = [
        (k, Version.V1_0.value.encode() if k.lower() == name else v) for k, v in scope["headers"]
    ]
    return {**scope, "headers": headers}


def _no_streams(scope: Scope) -> Scope:
    """Streaming requests go to a path nothing serves (the card still declares streaming)."""
    path = scope["path"]
    if path.endswith(":stream"):
        gone = path.replace(":stream", ":nostream")
        return {**scope, "path": gone, "raw_path": gone.encode()}
    return scope


def _sse_as_text(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [(k, b"text/plain" if v.startswith(b"text/event-stream") else v) for k, v in headers]


def _no_next_page_token(scope: Scope, value: Json) -> Json:
    if isinstance(value, dict):
        result = value.get("result")
        (result if isinstance(result, dict) else value).pop("nextPageToken", None)
    return value


def _card_without_description(scope: Scope, value: Json) -> Json:
    if scope["path"].startswith("/.well-known/") and isinstance(value, dict):
        value.pop("description", None)
    return value


def _card_requiring_auth(scope: Scope, value: Json) -> Json:
    """The card asks for an API key the server never checks."""
    if scope["path"].startswith("/.well-known/") and isinstance(value, dict):
        value["securitySchemes"] = {
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}
        }
        value["securityRequirements"] = [{"schemes": {"key": {"list": []}}}]
        value["security"] = [{"key": []}]
    return value


def _send_history_doubled(scope: Scope, value: Json) -> Json:
    """SendMessage's Task (1.0: wrapped as `task`) returned with its history twice over."""
    result = value.get("result", value) if isinstance(value, dict) else None
    task = result.get("task") if isinstance(result, dict) else None
    if isinstance(task, dict) and task.get("history"):
        task["history"] = task["history"] * 2
    return value


def _untyped_details(scope: Scope, value: Json) -> Json:
    """Error details (HTTP+JSON `details`, JSON-RPC `data`) sent without their `@type`."""
    error = value.get("error") if isinstance(value, dict) else None
    for key in ("details", "data"):
        items = error.get(key) if isinstance(error, dict) else None
        for item in items if isinstance(items, list) else []:
            item.pop("@type", None)
    return value


BREAKAGES: dict[str, tuple[Breakage, str]] = {
    # name: (the breakage, the check that must catch it)
    "wrong-error-code": (Breakage(answer=_error_code), "get.not-found"),
    "history-length-ignored": (Breakage(request=_no_history_length), "get.history-length"),
    "version-not-refused": (Breakage(request=_no_version_check), "version.unsupported"),
    "streaming-declared-unsupported": (Breakage(request=_no_streams), "stream.framing"),
    "sse-content-type": (Breakage(headers=_sse_as_text), "stream.framing"),
    "stream-without-task-first": (Breakage(drop_first_event=True), "stream.order"),
    "no-next-page-token": (Breakage(answer=_no_next_page_token), "list.paging"),
    "card-without-description": (
        Breakage(answer=_card_without_description),
        "card.required-fields",
    ),
    "auth-declared-not-enforced": (Breakage(answer=_card_requiring_auth), "auth.required"),
    "send-history-length-ignored": (
        Breakage(answer=_send_history_doubled),
        "send.history-length",
    ),
    "untyped-error-details": (Breakage(answer=_untyped_details), "error.details-typed"),
}
