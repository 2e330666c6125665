"""The ceiling: a bare ASGI app with no A2A machinery. It parses the request body with
`json`, and answers what the echo agent answers, in the same binding and version, with the
same shapes and sizes: a completed Task (fresh ids and timestamp, the user's message in the
history, its text as the artifact) or, for a streaming send, the same 103 SSE events (task,
working, 100 artifact chunks, completed), each its own body write and numbered like
Parley's (`id: N`). The `wait` skill sends the first event and then holds the stream open.

Bindings, as Parley routes them: JSON-RPC on `/` (1.0 with `A2A-Version: 1.0`, else 0.3:
`kind`-tagged objects, lower-case states, `final`), HTTP+JSON 1.0 on `/message:send|stream`
and 0.3 on `/v1/message:send|stream` (ProtoJSON; a 0.3 message's parts are `content`). A
send with `returnImmediately` (0.3: `blocking: false`) answers the submitted task; `GetTask`
(`tasks/get`, `GET /tasks/{id}`) answers the stored task. Each sent task is kept as its
JSON bytes in a dict (the floor for "memory per stored task", and no burden on the garbage
collector), spliced into the answers as they are.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from benchmarks.servers import STREAM_CHUNKS, instrumented

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_JSON = [(b"content-type", b"application/json")]
_SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
_CARD = json.dumps(
    {
        "name": "Echo",
        "description": "Repeats what you say.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {
                "url": "http://127.0.0.1:8000/",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }
).encode()

tasks: dict[str, bytes] = {}
_never = asyncio.Event()


@dataclass(frozen=True)
class Dialect:
    """How one binding and version spells the answers."""

    jsonrpc: bool
    kinds: bool  # 0.3 JSON-RPC: `kind` on every object, bare results, lower-case states
    final: bool  # 0.3: status updates carry `final`

    def state(self, name: str) -> str:
        return name.lower() if self.kinds else f"TASK_STATE_{name}"

    def part(self, text: str) -> dict[str, str]:
        return {"kind": "text", "text": text} if self.kinds else {"text": text}

    def wrap(self, member: str, kind: str, value: dict[str, Any]) -> dict[str, Any]:
        return {"kind": kind, **value} if self.kinds else {member: value}


V1_JSONRPC = Dialect(jsonrpc=True, kinds=False, final=False)
V1_REST = Dialect(jsonrpc=False, kinds=False, final=False)
V03_JSONRPC = Dialect(jsonrpc=True, kinds=True, final=True)
V03_REST = Dialect(jsonrpc=False, kinds=False, final=True)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _status(dialect: Dialect, state: str) -> dict[str, str]:
    return {"state": dialect.state(state), "timestamp": _now()}


def _text(message: dict[str, Any]) -> str:
    parts = message.get("parts") or message.get("content") or ()
    return "".join(part.get("text", "") for part in parts)


def _task(
    dialect: Dialect, message: dict[str, Any], state: str, artifact_id: str | None = None
) -> dict[str, Any]:
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    task: dict[str, Any] = {"id": task_id, "contextId": context_id}
    task["status"] = _status(dialect, state)
    if artifact_id is not None:
        task["artifacts"] = [{"artifactId": artifact_id, "parts": [dialect.part(_text(message))]}]
    task["history"] = [{**message, "contextId": context_id, "taskId": task_id}]
    return task


def _update(dialect: Dialect, task: dict[str, Any], state: str) -> dict[str, Any]:
    update: dict[str, Any] = {"taskId": task["id"], "contextId": task["contextId"]}
    update["status"] = _status(dialect, state)
    if dialect.final:
        update["final"] = state == "COMPLETED"
    return dialect.wrap("statusUpdate", "status-update", update)


def _chunk(dialect: Dialect, task: dict[str, Any], artifact_id: str, index: int) -> dict[str, Any]:
    update: dict[str, Any] = {"taskId": task["id"], "contextId": task["contextId"]}
    text = _text(task["history"][0])
    update["artifact"] = {"artifactId": artifact_id, "parts": [dialect.part(text)]}
    if index:
        update["append"] = True
    if index == STREAM_CHUNKS - 1:
        update["lastChunk"] = True
    return dialect.wrap("artifactUpdate", "artifact-update", update)


def _dumps(dialect: Dialect, request_id: Any, result: dict[str, Any]) -> str:
    if dialect.jsonrpc:
        result = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return json.dumps(result, separators=(",", ":"))


def _encoded(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _enveloped(dialect: Dialect, request_id: Any, result: bytes) -> bytes:
    if dialect.jsonrpc:
        return b'{"jsonrpc":"2.0","id":' + _encoded(request_id) + b',"result":' + result + b"}"
    return result


async def _read_body(receive: Receive) -> bytes:
    body = b""
    while True:
        event = await receive()
        body += bytes(event.get("body", b""))
        if not event.get("more_body"):
            return body


async def _answer(send: Send, body: bytes) -> None:
    headers = [*_JSON, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _returns_at_once(params: dict[str, Any]) -> bool:
    configuration = params.get("configuration") or {}
    return bool(configuration.get("returnImmediately")) or configuration.get("blocking") is False


async def _send_task(send: Send, dialect: Dialect, request_id: Any, params: dict[str, Any]) -> None:
    message = params["message"]
    task = _task(dialect, message, "COMPLETED", str(uuid.uuid4()))
    stored = _encoded({"kind": "task", **task} if dialect.kinds else task)
    tasks[task["id"]] = stored
    if _returns_at_once(params):
        answer = {key: task[key] for key in ("id", "contextId", "history")}
        answer["status"] = _status(dialect, "SUBMITTED")
        stored = _encoded({"kind": "task", **answer} if dialect.kinds else answer)
    result = stored if dialect.kinds else b'{"task":' + stored + b"}"
    await _answer(send, _enveloped(dialect, request_id, result))


async def _get_task(send: Send, dialect: Dialect, request_id: Any, task_id: str) -> None:
    await _answer(send, _enveloped(dialect, request_id, tasks[task_id]))


async def _stream(send: Send, dialect: Dialect, request_id: Any, message: dict[str, Any]) -> None:
    task = _task(dialect, message, "SUBMITTED")
    await send({"type": "http.response.start", "status": 200, "headers": _SSE})
    more = {"type": "http.response.body", "more_body": True}
    number = 0

    async def frame(result: dict[str, Any]) -> None:
        nonlocal number
        number += 1
        data = f"id: {number}\ndata: {_dumps(dialect, request_id, result)}\n\n"
        await send({**more, "body": data.encode()})

    await frame(dialect.wrap("task", "task", task))
    if (message.get("metadata") or {}).get("skill") == "wait":
        await _never.wait()
    await frame(_update(dialect, task, "WORKING"))
    artifact_id = str(uuid.uuid4())
    for index in range(STREAM_CHUNKS):
        await frame(_chunk(dialect, task, artifact_id, index))
    await frame(_update(dialect, task, "COMPLETED"))
    await send({"type": "http.response.body", "body": b""})


def _version_1(scope: Scope) -> bool:
    return any(name == b"a2a-version" and value == b"1.0" for name, value in scope["headers"])


async def _jsonrpc(scope: Scope, receive: Receive, send: Send) -> None:
    dialect = V1_JSONRPC if _version_1(scope) else V03_JSONRPC
    request = json.loads(await _read_body(receive))
    method, params, request_id = request["method"], request["params"], request["id"]
    if method in ("SendStreamingMessage", "message/stream"):
        await _stream(send, dialect, request_id, params["message"])
    elif method in ("GetTask", "tasks/get"):
        await _get_task(send, dialect, request_id, params["id"])
    else:
        await _send_task(send, dialect, request_id, params)


async def _rest(scope: Scope, receive: Receive, send: Send) -> None:
    path: str = scope["path"]
    dialect = V03_REST if path.startswith("/v1/") else V1_REST
    if scope["method"] == "GET":
        await _get_task(send, dialect, None, path.rsplit("/", 1)[1])
        return
    params = json.loads(await _read_body(receive))
    if path.endswith(":stream"):
        await _stream(send, dialect, None, params["message"])
    else:
        await _send_task(send, dialect, None, params)


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] != "http":
        return
    path = scope["path"]
    if scope["method"] == "GET" and "/tasks/" not in path:
        await send({"type": "http.response.start", "status": 200, "headers": _JSON})
        await send({"type": "http.response.body", "body": _CARD})
    elif path == "/":
        await _jsonrpc(scope, receive, send)
    else:
        await _rest(scope, receive, send)


app = instrumented(_app)
