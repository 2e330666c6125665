"""The ceiling: a bare ASGI app with no A2A machinery. It parses the JSON-RPC body with
`json`, and answers what the echo agent answers — a same-shaped, same-sized completed Task
(fresh ids and timestamp, the user's message in the history, its text as the artifact) — or,
for `SendStreamingMessage`, the same 103 SSE events (task, working, 100 artifact chunks,
completed), each its own body write. The `wait` skill sends the first event and then holds
the stream open. Each sent task is kept as its JSON bytes in a dict (the floor for "memory per
stored task", and no burden on the garbage collector).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _status(state: str) -> dict[str, str]:
    return {"state": state, "timestamp": _now()}


def _artifact(artifact_id: str, text: str) -> dict[str, Any]:
    return {"artifactId": artifact_id, "parts": [{"text": text}]}


def _text(message: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in message.get("parts", ()))


def _result(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def _read_body(receive: Receive) -> bytes:
    body = b""
    while True:
        event = await receive()
        body += bytes(event.get("body", b""))
        if not event.get("more_body"):
            return body


async def _send_task(send: Send, request_id: Any, message: dict[str, Any]) -> None:
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    history = {**message, "contextId": context_id, "taskId": task_id}
    task = {
        "id": task_id,
        "contextId": context_id,
        "status": _status("TASK_STATE_COMPLETED"),
        "artifacts": [_artifact(str(uuid.uuid4()), _text(message))],
        "history": [history],
    }
    body = json.dumps(_result(request_id, {"task": task}), separators=(",", ":")).encode()
    tasks[task_id] = body
    headers = [*_JSON, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _frame(request_id: Any, result: dict[str, Any]) -> bytes:
    data = json.dumps(_result(request_id, result), separators=(",", ":"))
    return f"data: {data}\n\n".encode()


async def _stream(send: Send, request_id: Any, message: dict[str, Any]) -> None:
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    history = {**message, "contextId": context_id, "taskId": task_id}
    ids = {"taskId": task_id, "contextId": context_id}
    task = {
        "id": task_id,
        "contextId": context_id,
        "status": _status("TASK_STATE_SUBMITTED"),
        "history": [history],
    }
    await send({"type": "http.response.start", "status": 200, "headers": _SSE})
    body = {"type": "http.response.body", "more_body": True}
    await send({**body, "body": _frame(request_id, {"task": task})})
    if (message.get("metadata") or {}).get("skill") == "wait":
        await _never.wait()
    working = {"statusUpdate": {**ids, "status": _status("TASK_STATE_WORKING")}}
    await send({**body, "body": _frame(request_id, working)})
    artifact_id, text = str(uuid.uuid4()), _text(message)
    for index in range(STREAM_CHUNKS):
        update: dict[str, Any] = {**ids, "artifact": _artifact(artifact_id, text)}
        if index:
            update["append"] = True
        if index == STREAM_CHUNKS - 1:
            update["lastChunk"] = True
        await send({**body, "body": _frame(request_id, {"artifactUpdate": update})})
    done = {"statusUpdate": {**ids, "status": _status("TASK_STATE_COMPLETED")}}
    await send({**body, "body": _frame(request_id, done)})
    await send({"type": "http.response.body", "body": b""})


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] != "http":
        return
    if scope["method"] == "GET":
        await send({"type": "http.response.start", "status": 200, "headers": _JSON})
        await send({"type": "http.response.body", "body": _CARD})
        return
    request = json.loads(await _read_body(receive))
    message = request["params"]["message"]
    if request["method"] == "SendStreamingMessage":
        await _stream(send, request["id"], message)
    else:
        await _send_task(send, request["id"], message)


app = instrumented(_app)
