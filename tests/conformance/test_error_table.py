"""The error table, per binding and version: every case is sent as raw HTTP (hand-written
wire JSON, not Parley's codecs) to the ASGI app, over JSON-RPC and HTTP+JSON, as a 1.0
and as a 0.3 client, and the answer must have the exact spec error shape:

* JSON-RPC (both versions): HTTP 200, `application/json`, `{"jsonrpc":"2.0","id":…,
  "error":{code,message[,data]}}`, the request id echoed (null when it could not be read,
  R-JSONRPC-1). 1.0: `data` is a list of typed details (R-JSONRPC-4, R-ERR-17/25) whose
  first is a google.rpc.ErrorInfo (`reason`, domain `a2a-protocol.org`, string metadata).
  0.3: `data` is free-form (REFERENCE §6.5): Parley sends the error's metadata as an object.
* REST 1.0: the HTTP status of the v1.0.1 table (R-ERR-20, D17), `application/json`,
  `{"error":{code,status,message,details[ErrorInfo…]}}` with `code` = the HTTP status
  (R-ERR-24, R-REST-8/10, D3: not RFC 9457).
* REST 0.3 (never specified): the official SDK 0.3.x shape `{"message":…}` with its
  statuses (REFERENCE §6.5; docs/decisions.md "Errors").

Expected codes, statuses and reasons are written out here from REFERENCE §6.2/§6.3 and
docs/decisions.md, not read from `parley.wire.errors`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from parley.asgi import A2AApp, build_app
from parley.model import AgentExtension
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from parley.wire.errors import BY_CODE
from parley.wire.limits import Limits

pytestmark = pytest.mark.anyio

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
DOMAIN = "a2a-protocol.org"
REQUIRED_EXTENSION = "urn:parley:test:required-extension:v1"
BODY_LIMIT = 2048
JSON = "application/json"


# ----------------------------------------------------------------------------- expectations


@dataclass(frozen=True)
class Expect:
    """One error on every binding (REFERENCE §6.2, §6.3; 0.3 REST: §6.5 / decisions)."""

    code: int
    reason: str
    http: int
    grpc: str
    http_v03: int


VERSION_NOT_SUPPORTED = Expect(-32009, "VERSION_NOT_SUPPORTED", 400, "FAILED_PRECONDITION", 400)
METHOD_NOT_FOUND = Expect(-32601, "METHOD_NOT_FOUND", 404, "UNIMPLEMENTED", 404)
JSON_PARSE = Expect(-32700, "JSON_PARSE", 400, "INVALID_ARGUMENT", 400)
INVALID_REQUEST = Expect(-32600, "INVALID_REQUEST", 400, "INVALID_ARGUMENT", 400)
INVALID_PARAMS = Expect(-32602, "INVALID_PARAMS", 400, "INVALID_ARGUMENT", 422)
TASK_NOT_FOUND = Expect(-32001, "TASK_NOT_FOUND", 404, "NOT_FOUND", 404)
TASK_NOT_CANCELABLE = Expect(-32002, "TASK_NOT_CANCELABLE", 400, "FAILED_PRECONDITION", 409)
UNSUPPORTED_OPERATION = Expect(-32004, "UNSUPPORTED_OPERATION", 400, "FAILED_PRECONDITION", 501)
EXTENSION_REQUIRED = Expect(-32008, "EXTENSION_SUPPORT_REQUIRED", 400, "FAILED_PRECONDITION", 400)


# ----------------------------------------------------------------------------- the wire


@dataclass(frozen=True)
class Wire:
    """One binding in one protocol version, speaking raw HTTP."""

    binding: str  # "jsonrpc" | "rest"
    version: str  # "1.0" | "0.3"

    def __str__(self) -> str:
        return f"{self.binding}-{self.version}"

    @property
    def v1(self) -> bool:
        return self.version == "1.0"

    @property
    def headers(self) -> dict[str, str]:
        """A 1.0 client sends `A2A-Version: 1.0` (R-VER-3); a 0.3 client sends nothing."""
        return {"A2A-Version": "1.0"} if self.v1 else {}

    @property
    def prefix(self) -> str:
        """REST paths: 1.0 has none, 0.3 lives under `/v1` (REFERENCE §3.2)."""
        return "" if self.v1 else "/v1"

    def message(self, text: str = "hello", task_id: str = "") -> dict[str, Any]:
        """A user message: 1.0 ProtoJSON, 0.3 JSON-RPC (`kind`), or 0.3 REST (proto)."""
        if self.v1:
            out: dict[str, Any] = {
                "messageId": "m-1",
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            }
        elif self.binding == "jsonrpc":
            out = {
                "kind": "message",
                "messageId": "m-1",
                "role": "user",
                "parts": [{"kind": "text", "text": text}],
            }
        else:
            out = {"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": text}]}
        if task_id:
            out["taskId"] = task_id
        return out


WIRES = [Wire(b, v) for b in ("jsonrpc", "rest") for v in ("1.0", "0.3")]

METHODS = {
    "send": ("SendMessage", "message/send"),
    "stream": ("SendStreamingMessage", "message/stream"),
    "get": ("GetTask", "tasks/get"),
    "cancel": ("CancelTask", "tasks/cancel"),
    "subscribe": ("SubscribeToTask", "tasks/resubscribe"),
}


@dataclass
class Req:
    """A raw HTTP request."""

    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None
    request_id: Any = None
    """The JSON-RPC id sent (the error must echo it); None for REST."""
    chunks: bool = False
    """Send the JSON body chunked, without Content-Length."""


def rpc(
    wire: Wire, method: str, params: Any, request_id: Any, headers: dict[str, str] | None = None
) -> Req:
    """A JSON-RPC request (`method` is an operation of METHODS or a literal name)."""
    if method in METHODS:
        method = METHODS[method][0 if wire.v1 else 1]
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    sent = wire.headers if headers is None else headers
    return Req("POST", "/", sent, json=body, request_id=request_id)


def call(wire: Wire, op: str, ctx: Ctx, *, task_id: str = "", message: Any = None) -> Req:
    """Operation `op` on the wire, with the case's id; REST builds the route."""
    if op in ("send", "stream"):
        payload = {"message": message if message is not None else wire.message()}
        if wire.binding == "jsonrpc":
            return rpc(wire, op, payload, ctx.request_id)
        path = f"{wire.prefix}/message:{op if op == 'stream' else 'send'}"
        return Req("POST", path, wire.headers, json=payload)
    if wire.binding == "jsonrpc":
        return rpc(wire, op, {"id": task_id}, ctx.request_id)
    tasks = f"{wire.prefix}/tasks/{task_id}"
    if op == "get":
        return Req("GET", tasks, wire.headers)
    verb = "subscribe" if op == "subscribe" else "cancel"
    return Req("POST", f"{tasks}:{verb}", wire.headers)


# ----------------------------------------------------------------------------- the apps


def make_agent(**card: Any) -> Agent:
    agent = Agent("Errors", description="Answers with what it is told.", **card)

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    return agent


def make_app(kind: str) -> A2AApp:
    """`default`; `no-streaming` (capabilities.streaming false); `extension` (declares a
    required extension); `small-body` (a 2 KiB body limit)."""
    if kind == "no-streaming":
        agent = make_agent(streaming=False)
    elif kind == "extension":
        required = AgentExtension(uri=REQUIRED_EXTENSION, description="test", required=True)
        agent = make_agent(extensions=[required])
    else:
        agent = make_agent()
    service = AgentService(agent.executor(), agent.card("http://127.0.0.1"))
    if kind == "small-body":
        return build_app(service, limits=Limits(max_body_bytes=BODY_LIMIT))
    return build_app(service)


@dataclass
class Ctx:
    """What a case may need: the request id to send, and a COMPLETED task's id."""

    request_id: Any
    completed: str = ""


async def completed_task(client: httpx.AsyncClient) -> str:
    """A task run to COMPLETED (created over 1.0 JSON-RPC; tasks are version-agnostic)."""
    body = {
        "jsonrpc": "2.0",
        "id": "setup",
        "method": "SendMessage",
        "params": {"message": Wire("jsonrpc", "1.0").message("done")},
    }
    response = await client.post("/", json=body, headers={"A2A-Version": "1.0"})
    task = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id: str = task["id"]
    return task_id


# ----------------------------------------------------------------------------- the cases

Build = Callable[[Wire, Ctx], Req]


@dataclass(frozen=True)
class Case:
    """One row of the table. `build` makes the request for a wire; `applies` says on which
    wires the case exists; `answer` is the version the error is answered in (default: the
    wire's); `meta` is what the ErrorInfo metadata (0.3 JSON-RPC: `data`) must contain;
    `violation` the field a BadRequest (0.3 JSON-RPC: `data.fieldViolations`) must name."""

    name: str
    refs: str
    expect: Expect
    build: Build
    app: str = "default"
    needs_task: bool = False
    id_readable: bool = True
    applies: Callable[[Wire], bool] = lambda wire: True
    answer: Callable[[Wire], str] | None = None
    meta: Callable[[Wire, Ctx], dict[str, str]] | None = None
    violation: Callable[[Wire], str] | None = None


BROKEN_JSON = b'{"jsonrpc": "2.0", "id": "lost", "method": "SendMessage", "params": {'
JSON_HEADERS = {"Content-Type": JSON}


def unknown_version(wire: Wire, ctx: Ctx) -> Req:
    """`A2A-Version: 2.0`, which nothing serves."""
    headers = {"A2A-Version": "2.0"}
    if wire.binding == "jsonrpc":
        return rpc(wire, "get", {"id": "t-1"}, ctx.request_id, headers)
    return Req("GET", f"{wire.prefix}/tasks/t-1", headers)


def version_mismatch(wire: Wire, ctx: Ctx) -> Req:
    """The call belongs to the wire's version, the header names the other one: a 1.0
    method or route without the header (absent = 0.3, R-VER-6), a 0.3 method with
    `A2A-Version: 1.0` (REFERENCE §1.3)."""
    if wire.binding == "jsonrpc":
        headers = {} if wire.v1 else {"A2A-Version": "1.0"}
        return rpc(wire, "get", {"id": "t-1"}, ctx.request_id, headers)
    return Req("POST", "/message:send", {}, json={"message": wire.message()})


def unknown_method(wire: Wire, ctx: Ctx) -> Req:
    if wire.binding == "jsonrpc":
        name = "FrobnicateTask" if wire.v1 else "tasks/frobnicate"
        return rpc(wire, name, {}, ctx.request_id)
    return Req("GET", f"{wire.prefix}/no/such/route", wire.headers)


def malformed_json(wire: Wire, ctx: Ctx) -> Req:
    path = "/" if wire.binding == "jsonrpc" else f"{wire.prefix}/message:send"
    return Req("POST", path, {**wire.headers, **JSON_HEADERS}, content=BROKEN_JSON)


def invalid_envelope(wire: Wire, ctx: Ctx) -> Req:
    """JSON, but not JSON-RPC 2.0 (`"jsonrpc": "1.0"`)."""
    body = {"jsonrpc": "1.0", "id": ctx.request_id, "method": METHODS["get"][0 if wire.v1 else 1]}
    return Req("POST", "/", wire.headers, json=body, request_id=ctx.request_id)


def empty_parts(wire: Wire, ctx: Ctx) -> Req:
    """A message without parts (R-DATA-10: REQUIRED arrays hold at least one element)."""
    message = wire.message()
    message["content" if wire == Wire("rest", "0.3") else "parts"] = []
    return call(wire, "send", ctx, message=message)


def negative_history(wire: Wire, ctx: Ctx) -> Req:
    if wire.binding == "jsonrpc":
        return rpc(wire, "get", {"id": "t-1", "historyLength": -1}, ctx.request_id)
    return Req("GET", f"{wire.prefix}/tasks/t-1?historyLength=-1", wire.headers)


def oversized(wire: Wire, ctx: Ctx) -> Req:
    """A body over the app's 2 KiB limit (Content-Length declared)."""
    return call(wire, "send", ctx, message=wire.message("x" * (2 * BODY_LIMIT)))


def oversized_chunked(wire: Wire, ctx: Ctx) -> Req:
    """The same, sent chunked: no Content-Length, refused while reading."""
    request = oversized(wire, ctx)
    request.chunks = True
    return request


def get_unknown(wire: Wire, ctx: Ctx) -> Req:
    return call(wire, "get", ctx, task_id="no-such-task")


def cancel_terminal(wire: Wire, ctx: Ctx) -> Req:
    return call(wire, "cancel", ctx, task_id=ctx.completed)


def subscribe_terminal(wire: Wire, ctx: Ctx) -> Req:
    return call(wire, "subscribe", ctx, task_id=ctx.completed)


def send_terminal(wire: Wire, ctx: Ctx) -> Req:
    return call(wire, "send", ctx, message=wire.message("again", task_id=ctx.completed))


def stream_terminal(wire: Wire, ctx: Ctx) -> Req:
    return call(wire, "stream", ctx, message=wire.message("again", task_id=ctx.completed))


def stream(wire: Wire, ctx: Ctx) -> Req:
    return call(wire, "stream", ctx)


def subscribe_unknown(wire: Wire, ctx: Ctx) -> Req:
    """An unknown task: the capability is checked first (not TaskNotFound)."""
    return call(wire, "subscribe", ctx, task_id="no-such-task")


def send(wire: Wire, ctx: Ctx) -> Req:
    return call(wire, "send", ctx)


def list_tasks(wire: Wire, ctx: Ctx) -> Req:
    if wire.binding == "jsonrpc":
        return rpc(wire, "tasks/list", {}, ctx.request_id)
    return Req("GET", "/v1/tasks", wire.headers)


def task_meta(wire: Wire, ctx: Ctx) -> dict[str, str]:
    return {"taskId": ctx.completed}


def unknown_task_meta(wire: Wire, ctx: Ctx) -> dict[str, str]:
    return {"taskId": "no-such-task"}


def is_jsonrpc(wire: Wire) -> bool:
    return wire.binding == "jsonrpc"


CASES = [
    Case(
        "unknown-version",
        "R-VER-5, R-ERR-20, REFERENCE §1.2",
        VERSION_NOT_SUPPORTED,
        unknown_version,
        # JSON-RPC answers in the version of the method's family; REST cannot tell, and
        # answers a header it cannot serve in 1.0 (such a client is newer than 0.3).
        answer=lambda wire: wire.version if is_jsonrpc(wire) else "1.0",
        meta=lambda wire, ctx: {"requestedVersion": "2.0"},
    ),
    Case(
        "version-mismatch",
        "R-VER-4/5/6, REFERENCE §1.3",
        VERSION_NOT_SUPPORTED,
        version_mismatch,
        # 0.3 REST has no such call: every `/v1/…` route is also a 1.0 tenant route
        # (`/{tenant}/…`, tenant `v1`), see test_v1_path_with_a_1_0_header_is_tenant_v1.
        applies=lambda wire: wire != Wire("rest", "0.3"),
        # REST: the headerless request is 0.3, and is answered in 0.3.
        answer=lambda wire: wire.version if is_jsonrpc(wire) else "0.3",
        meta=lambda wire, ctx: {"requestedVersion": "0.3" if wire.v1 else "1.0"},
    ),
    Case(
        "unknown-method-or-route",
        "R-ERR-20, REFERENCE §6.3",
        METHOD_NOT_FOUND,
        unknown_method,
        meta=lambda wire, ctx: (
            {"method": "FrobnicateTask" if wire.v1 else "tasks/frobnicate"}
            if is_jsonrpc(wire)
            else {}
        ),
    ),
    Case(
        "malformed-json",
        "R-ERR-20, REFERENCE §6.3 (JSON-RPC id null)",
        JSON_PARSE,
        malformed_json,
        id_readable=False,
    ),
    Case(
        "invalid-jsonrpc-envelope",
        "R-JSONRPC-1, REFERENCE §6.3 (JSON-RPC only)",
        INVALID_REQUEST,
        invalid_envelope,
        applies=is_jsonrpc,
    ),
    Case(
        "invalid-params-empty-parts",
        "R-ERR-9/10, R-DATA-10, R-REST-9",
        INVALID_PARAMS,
        empty_parts,
        violation=lambda wire: (
            "message.content" if wire == Wire("rest", "0.3") else "message.parts"
        ),
    ),
    Case(
        "invalid-params-history-length",
        "R-ERR-9/10, REFERENCE §8.4 (negative historyLength)",
        INVALID_PARAMS,
        negative_history,
        violation=lambda wire: "historyLength",
    ),
    Case(
        "oversized-body",
        "R-OPS-3, decisions 'Limits' (InvalidRequestError, -32600 / 400)",
        INVALID_REQUEST,
        oversized,
        app="small-body",
        id_readable=False,
        meta=lambda wire, ctx: {"limit": str(BODY_LIMIT)},
    ),
    Case(
        "oversized-body-chunked",
        "R-OPS-3 (no Content-Length: refused while reading)",
        INVALID_REQUEST,
        oversized_chunked,
        app="small-body",
        id_readable=False,
        meta=lambda wire, ctx: {"limit": str(BODY_LIMIT)},
    ),
    Case(
        "task-not-found",
        "R-CTX-11, R-ERR-12, R-SUB-4",
        TASK_NOT_FOUND,
        get_unknown,
        meta=unknown_task_meta,
    ),
    Case(
        "cancel-terminal-task",
        "R-TASK-10, REFERENCE §8.6",
        TASK_NOT_CANCELABLE,
        cancel_terminal,
        needs_task=True,
        meta=task_meta,
    ),
    Case(
        "subscribe-terminal-task",
        "R-SUB-3, REFERENCE §7.1 (plain error before the stream), §7.3",
        UNSUPPORTED_OPERATION,
        subscribe_terminal,
        needs_task=True,
        meta=task_meta,
    ),
    Case(
        "message-to-terminal-task",
        "R-SEND-8, REFERENCE §8.2",
        UNSUPPORTED_OPERATION,
        send_terminal,
        needs_task=True,
        meta=task_meta,
    ),
    Case(
        "stream-message-to-terminal-task",
        "R-SEND-8, REFERENCE §7.1 (plain error before the stream)",
        UNSUPPORTED_OPERATION,
        stream_terminal,
        needs_task=True,
        meta=task_meta,
    ),
    Case(
        "streaming-not-declared",
        "R-STREAM-12, R-CAP-1, REFERENCE §6.4",
        UNSUPPORTED_OPERATION,
        stream,
        app="no-streaming",
    ),
    Case(
        "subscribe-not-declared",
        "R-STREAM-12, R-CAP-1 (before the task lookup)",
        UNSUPPORTED_OPERATION,
        subscribe_unknown,
        app="no-streaming",
    ),
    Case(
        # New in 1.0; Parley applies the rule to 0.3 calls too (-32008 in 0.3 JSON-RPC,
        # the generic 400 in 0.3 REST, whose error table has no such error).
        "missing-required-extension",
        "R-CAP-2, R-EXT-4, REFERENCE §11",
        EXTENSION_REQUIRED,
        send,
        app="extension",
        meta=lambda wire, ctx: {"extension": REQUIRED_EXTENSION},
    ),
    Case(
        # 0.3 has no ListTasks (D13): `tasks/list` is an unknown method.
        "list-tasks-0.3-jsonrpc",
        "D13, R-ERR-20",
        METHOD_NOT_FOUND,
        list_tasks,
        applies=lambda wire: wire == Wire("jsonrpc", "0.3"),
        meta=lambda wire, ctx: {"method": "tasks/list"},
    ),
    Case(
        # 0.3 REST `GET /v1/tasks` lies in 0.3's `/v1` namespace, where no ListTasks
        # exists: MethodNotFound, as 0.3 JSON-RPC says for the same missing operation
        # (not the 1.0 tenant route `/{tenant}/tasks` with tenant `v1`).
        "list-tasks-0.3-rest",
        "D13, REFERENCE §12.14, R-BIND-3",
        METHOD_NOT_FOUND,
        list_tasks,
        applies=lambda wire: wire == Wire("rest", "0.3"),
    ),
]


# ----------------------------------------------------------------------------- checks


def check_details(details: Any, reason: str, meta: dict[str, str]) -> list[dict[str, Any]]:
    """R-ERR-17/24/25, R-JSONRPC-4, R-REST-8/10: typed details, ErrorInfo first."""
    assert isinstance(details, list)
    assert details
    assert all(isinstance(d, dict) and isinstance(d.get("@type"), str) for d in details)
    info = details[0]
    assert info["@type"] == ERROR_INFO
    assert set(info) <= {"@type", "reason", "domain", "metadata"}
    assert (info["reason"], info["domain"]) == (reason, DOMAIN)
    metadata = info.get("metadata", {})
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    assert meta.items() <= metadata.items()
    for extra in details[1:]:
        assert extra["@type"] == BAD_REQUEST
        assert all(set(v) == {"field", "description"} for v in extra["fieldViolations"])
    return details


def violations(details: list[dict[str, Any]]) -> list[str]:
    return [v["field"] for d in details if d["@type"] == BAD_REQUEST for v in d["fieldViolations"]]


def check_jsonrpc(response: httpx.Response, case: Case, wire: Wire, ctx: Ctx, request: Req) -> None:
    answer = case.answer(wire) if case.answer else wire.version
    meta = case.meta(wire, ctx) if case.meta else {}
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "error"}
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == (request.request_id if case.id_readable else None)
    error = body["error"]
    assert set(error) <= {"code", "message", "data"}
    assert error["code"] == case.expect.code
    assert isinstance(error["message"], str)
    assert error["message"]
    if answer == "1.0":
        details = check_details(error["data"], case.expect.reason, meta)
        if case.violation:
            assert case.violation(wire) in violations(details)
        return
    data = error.get("data")
    assert data is None or isinstance(data, dict)  # free-form, never the 1.0 list
    assert meta.items() <= (data or {}).items()
    if case.violation:
        assert data is not None
        assert case.violation(wire) in [v["field"] for v in data["fieldViolations"]]


def check_rest(response: httpx.Response, case: Case, wire: Wire, ctx: Ctx) -> None:
    answer = case.answer(wire) if case.answer else wire.version
    body = response.json()
    if answer == "0.3":
        # The JSON-RPC error object (@a2a-js/sdk reads `code`) with the class name as
        # `type` (a2a-sdk's compat transport reads it).
        assert response.status_code == case.expect.http_v03
        assert {"code", "message", "type"} <= set(body) <= {"code", "message", "type", "data"}
        assert body["code"] == case.expect.code
        assert body["type"] == BY_CODE[case.expect.code].__name__
        assert isinstance(body["message"], str)
        assert body["message"]
        return
    meta = case.meta(wire, ctx) if case.meta else {}
    assert response.status_code == case.expect.http
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"code", "status", "message", "details"}
    assert error["code"] == response.status_code
    assert error["status"] == case.expect.grpc
    assert isinstance(error["message"], str)
    assert error["message"]
    details = check_details(error["details"], case.expect.reason, meta)
    if case.violation:
        assert case.violation(wire) in violations(details)


# ----------------------------------------------------------------------------- the tests


async def chunked(body: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(body), 512):
        yield body[start : start + 512]


async def perform(client: httpx.AsyncClient, request: Req) -> httpx.Response:
    content: Any = request.content
    headers = dict(request.headers)
    if request.json is not None:
        content = json.dumps(request.json).encode()
        headers["Content-Type"] = JSON
    if request.chunks:
        content = chunked(content)
    response = await client.request(request.method, request.path, headers=headers, content=content)
    if request.chunks:
        assert "content-length" not in response.request.headers
    return response


@asynccontextmanager
async def app_client(kind: str) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=make_app(kind))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


PARAMS = [
    pytest.param(case, wire, id=f"{case.name}-{wire}")
    for case in CASES
    for wire in WIRES
    if case.applies(wire)
]


@pytest.mark.parametrize(("case", "wire"), PARAMS)
async def test_error_table(case: Case, wire: Wire) -> None:
    """Each case on each wire answers the exact error shape (the case's `refs`)."""
    async with app_client(case.app) as client:
        ctx = Ctx(request_id=f"req-{case.name}" if wire.v1 else 42)
        if case.needs_task:
            ctx.completed = await completed_task(client)
        request = case.build(wire, ctx)
        response = await perform(client, request)
    if response.headers["content-type"].startswith("text/event-stream"):
        response = in_band_error(response, wire)
    try:
        assert response.headers["content-type"] == JSON  # never SSE, never problem+json
        if wire.binding == "jsonrpc":
            check_jsonrpc(response, case, wire, ctx, request)
        else:
            check_rest(response, case, wire, ctx)
    except AssertionError as exc:
        raise AssertionError(f"{case.name} on {wire} ({case.refs}): {response.text}") from exc


def in_band_error(response: httpx.Response, wire: Wire) -> httpx.Response:
    """0.3 JSON-RPC streaming calls answer an early error inside the stream, as the
    official 0.3 SDK sends and expects it (decisions.md): exactly one SSE event holding
    the JSON-RPC error response. Returned as the plain response it stands for."""
    assert wire.binding == "jsonrpc"
    assert not wire.v1
    frames = [
        line[len("data: ") :] for line in response.text.splitlines() if line.startswith("data: ")
    ]
    assert len(frames) == 1, response.text
    return httpx.Response(200, content=frames[0].encode(), headers={"content-type": JSON})


def test_every_case_cites_r_lines_and_runs_somewhere() -> None:
    assert len({case.name for case in CASES}) == len(CASES)
    for case in CASES:
        assert case.refs
        assert any(case.applies(wire) for wire in WIRES)


WRONG_VERBS = [
    pytest.param(Wire("rest", "1.0"), "DELETE", "/message:send", "POST", id="rest-1.0"),
    pytest.param(Wire("rest", "0.3"), "DELETE", "/v1/message:send", "POST", id="rest-0.3"),
    pytest.param(Wire("jsonrpc", "1.0"), "PUT", "/", "GET, POST", id="jsonrpc-url-1.0"),
    pytest.param(Wire("jsonrpc", "0.3"), "PUT", "/", "GET, POST", id="jsonrpc-url-0.3"),
]


@pytest.mark.parametrize(("wire", "verb", "path", "allow"), WRONG_VERBS)
async def test_wrong_verb_is_405_with_allow(wire: Wire, verb: str, path: str, allow: str) -> None:
    """REFERENCE §6.3: an existing path with another verb is HTTP 405 (with `Allow`), its
    body the MethodNotFound error of the request's version; on the JSON-RPC URL too (an
    HTTP-level error, so no JSON-RPC envelope). The body's `code` is checked separately
    (test_wrong_verb_status_body_code_is_405)."""
    async with app_client("default") as client:
        response = await client.request(verb, path, headers=wire.headers)
    assert response.status_code == 405
    assert response.headers["allow"] == allow
    assert response.headers["content-type"] == JSON
    body = response.json()
    if not wire.v1:
        assert (body["code"], body["type"]) == (-32601, "MethodNotFoundError")
        return
    error = body["error"]
    assert set(error) == {"code", "status", "message", "details"}
    assert error["status"] == METHOD_NOT_FOUND.grpc
    check_details(error["details"], METHOD_NOT_FOUND.reason, {})


@pytest.mark.parametrize(("verb", "path"), [("DELETE", "/message:send"), ("PUT", "/")])
async def test_wrong_verb_status_body_code_is_405(verb: str, path: str) -> None:
    """R-ERR-19/24, REFERENCE §6.5 (AIP-193): the Status body's `code` is the HTTP status."""
    async with app_client("default") as client:
        response = await client.request(verb, path, headers={"A2A-Version": "1.0"})
    assert response.status_code == 405
    assert response.json()["error"]["code"] == 405


@pytest.mark.parametrize("header", ["A2A-Extensions", "X-A2A-Extensions"])
@pytest.mark.parametrize("wire", WIRES, ids=str)
async def test_required_extension_when_requested_is_accepted(wire: Wire, header: str) -> None:
    """The control for missing-required-extension: requested under either header name (a
    dual server reads both, REFERENCE §1.4), the call succeeds and the activated
    extension is echoed under the version's header name (R-EXT, REFERENCE §11)."""
    async with app_client("extension") as client:
        request = call(wire, "send", Ctx(request_id=1))
        request.headers = {**request.headers, header: REQUIRED_EXTENSION}
        response = await perform(client, request)
    assert response.status_code == 200
    body = response.json()
    result = body["result"] if wire.binding == "jsonrpc" else body
    if wire == Wire("jsonrpc", "0.3"):
        assert result["status"]["state"] == "completed"
    else:
        assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    echoed = "A2A-Extensions" if wire.v1 else "X-A2A-Extensions"
    assert response.headers[echoed] == REQUIRED_EXTENSION


async def test_v1_path_with_a_1_0_header_is_tenant_v1() -> None:
    """REFERENCE §1.3 collision hazard: with `A2A-Version: 1.0`, `/v1/message:send` is the
    1.0 route `/{tenant}/message:send` for tenant `v1` (Parley routes REST by the header,
    so a 0.3 path never meets a version error: it is a different 1.0 call)."""
    async with app_client("default") as client:
        wire = Wire("rest", "1.0")
        response = await client.post(
            "/v1/message:send", json={"message": wire.message()}, headers=wire.headers
        )
    assert response.status_code == 200
    assert response.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
