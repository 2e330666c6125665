"""The JSON-RPC binding over httpx's ASGI transport: method families, version checks,
envelope errors, limits, notifications, extensions, tenants and authentication
(REFERENCE §1.2, §1.3, §1.4, §3.1, §6.3, §6.5)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import httpx
import pytest
from msgspec.structs import replace

from parley.asgi import build_app
from parley.model import (
    AgentExtension,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Model,
    TaskPushNotificationConfig,
)
from parley.protocol.errors import UnauthenticatedError
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation
from parley.server.context import AuthRequest, Caller
from parley.wire.codec_table import JSONRPC
from parley.wire.limits import Limits
from tests.asgi.fakes import CARD, ECHO_EXTENSION, REQUIRED_EXTENSION, TRACE_EXTENSION, FakeHandler
from tests.asgi.helpers import V1, error_reason, params, rpc, send_params

pytestmark = pytest.mark.anyio

V03 = Version.V0_3
V10 = Version.V1_0

JSONRPC_METHOD = {
    operation: {version: binding.jsonrpc_method for version, binding in spec.bindings.items()}
    for operation, spec in OPERATIONS.items()
}


async def call(
    client: httpx.AsyncClient, body: Any, headers: Mapping[str, str] | None = None
) -> dict[str, Any]:
    response = await client.post("/", json=body, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    result: dict[str, Any] = response.json()
    return result


async def test_send_message_1_0(client: httpx.AsyncClient, handler: FakeHandler) -> None:
    """1.0 method family with `A2A-Version: 1.0` (R-VER-4); result is a SendMessageResponse."""
    body = await call(client, rpc("SendMessage", send_params(V10), "req-7"), V1)
    assert body["id"] == "req-7"
    assert body["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    ctx, _ = handler.last("send_message")
    assert ctx.version is V10


async def test_send_message_0_3_without_header(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """No header means 0.3 (R-VER-6): the 0.3 family is served with 0.3 JSON."""
    body = await call(client, rpc("message/send", send_params(V03), 3))
    assert body["result"]["kind"] == "task"
    assert body["result"]["status"]["state"] == "completed"
    assert handler.last("send_message")[0].version is V03


async def test_send_message_can_answer_a_message(client: httpx.AsyncClient) -> None:
    body = await call(client, rpc("SendMessage", send_params(V10, "reply")), V1)
    assert body["result"]["message"]["parts"] == [{"text": "hi"}]


UNARY: list[tuple[Operation, Model, str]] = [
    (Operation.GET_TASK, GetTaskRequest(id="task-1", history_length=2), "get_task"),
    (Operation.LIST_TASKS, ListTasksRequest(page_size=5), "list_tasks"),
    (
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        TaskPushNotificationConfig(url="https://hook.example/x", task_id="task-1", id="c1"),
        "create_task_push_notification_config",
    ),
    (
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        ListTaskPushNotificationConfigsRequest(task_id="task-1"),
        "list_task_push_notification_configs",
    ),
    (Operation.GET_EXTENDED_AGENT_CARD, GetExtendedAgentCardRequest(), "get_extended_agent_card"),
]


CASES = [
    (version, case)
    for case in UNARY
    for version in (V10, V03)
    if version in OPERATIONS[case[0]].bindings  # ListTasks has no 0.3 method
]


@pytest.mark.parametrize(
    ("version", "case"), CASES, ids=[f"{c[0].value}-{v.name}" for v, c in CASES]
)
async def test_every_unary_method_family(
    client: httpx.AsyncClient,
    handler: FakeHandler,
    version: Version,
    case: tuple[Operation, Model, str],
) -> None:
    """Each operation under its method name of each version (REFERENCE §3.1)."""
    operation, request, method = case
    name = JSONRPC_METHOD[operation][version]
    headers = V1 if version is V10 else {}
    body = await call(client, rpc(name, params(version, operation, request)), headers)
    assert "result" in body, body
    ctx, decoded = handler.last(method)
    assert ctx.version is version
    assert type(decoded) is type(request)


@pytest.mark.parametrize(("version", "headers"), [(V10, V1), (V03, {})])
async def test_push_config_get_and_delete(
    client: httpx.AsyncClient, handler: FakeHandler, version: Version, headers: dict[str, str]
) -> None:
    handler.configs[("task-1", "c1")] = TaskPushNotificationConfig(
        url="https://hook.example/x", task_id="task-1", id="c1"
    )
    names = JSONRPC_METHOD[Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG]
    get = GetTaskPushNotificationConfigRequest(task_id="task-1", id="c1")
    body = await call(
        client,
        rpc(names[version], params(version, Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, get)),
        headers,
    )
    decoded = JSONRPC[version].decode_response(
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, body["result"]
    )
    assert decoded.url == "https://hook.example/x"
    delete = DeleteTaskPushNotificationConfigRequest(task_id="task-1", id="c1")
    op = Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG
    body = await call(
        client, rpc(JSONRPC_METHOD[op][version], params(version, op, delete)), headers
    )
    assert "result" in body
    assert handler.configs == {}


async def test_cancel_task(client: httpx.AsyncClient) -> None:
    body = await call(client, rpc("tasks/cancel", {"id": "task-1"}))
    assert body["result"]["status"]["state"] == "canceled"


async def test_handler_error_is_its_code_with_error_info(client: httpx.AsyncClient) -> None:
    """A2A errors keep their code; 1.0 `data` is the typed details array (R-JSONRPC-4)."""
    body = await call(client, rpc("GetTask", {"id": "nope"}, 9), V1)
    assert body["id"] == 9
    assert body["error"]["code"] == -32001
    assert error_reason(body["error"]) == "TASK_NOT_FOUND"
    assert body["error"]["data"][0]["metadata"] == {"taskId": "nope"}


async def test_handler_error_0_3_has_free_form_data(client: httpx.AsyncClient) -> None:
    body = await call(client, rpc("tasks/get", {"id": "nope"}))
    assert body["error"]["code"] == -32001
    assert body["error"]["data"] == {"taskId": "nope"}


async def test_unexpected_exception_is_internal_error_without_traceback(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Anything but an A2AError is -32603, logged, never leaked (R-ERR-15)."""
    with caplog.at_level(logging.ERROR, logger="parley.asgi"):
        response = await client.post(
            "/", json=rpc("SendMessage", send_params(V10, "boom")), headers=V1
        )
    body = response.json()
    assert body["error"]["code"] == -32603
    assert body["error"]["message"] == "Internal error"
    assert "secret" not in response.text
    assert "secret internals" in caplog.text


@pytest.mark.parametrize(
    ("method", "headers", "data_is_list"),
    [
        ("SendMessage", {}, True),  # 1.0 method, no header: a 0.3 request (§1.2)
        ("SendMessage", {"A2A-Version": "0.3"}, True),
        ("message/send", V1, False),  # 0.3 method, 1.0 header
        ("SendMessage", {"A2A-Version": "2.0"}, True),
        ("SendMessage", {"A2A-Version": "one"}, True),
    ],
)
async def test_version_mismatch_is_32009(
    client: httpx.AsyncClient,
    handler: FakeHandler,
    method: str,
    headers: dict[str, str],
    data_is_list: bool,
) -> None:
    """The header must name the method family's version (R-VER-5, REFERENCE §1.3); the
    error is written in the method family's version."""
    version = V10 if data_is_list else V03
    body = await call(client, rpc(method, send_params(version), 4), headers)
    assert body["id"] == 4
    assert body["error"]["code"] == -32009
    assert isinstance(body["error"].get("data"), list) is data_is_list
    assert not handler.calls


async def test_version_in_query_parameter(client: httpx.AsyncClient) -> None:
    """`?A2A-Version=1.0` is accepted like the header (REFERENCE §1.2)."""
    response = await client.post("/?A2A-Version=1.0", json=rpc("GetTask", {"id": "task-1"}))
    assert response.json()["result"]["id"] == "task-1"


async def test_patch_version_is_ignored(client: httpx.AsyncClient) -> None:
    """R-VER-2: `1.0.3` negotiates as 1.0."""
    body = await call(client, rpc("GetTask", {"id": "task-1"}), {"A2A-Version": "1.0.3"})
    assert body["result"]["id"] == "task-1"


@pytest.mark.parametrize("request_id", ["abc", 12, 1.5, None])
async def test_unknown_method_echoes_id(client: httpx.AsyncClient, request_id: Any) -> None:
    """-32601 with the request's id (REFERENCE §6.3)."""
    body = await call(client, rpc("tasks/explode", {}, request_id), V1)
    assert body["id"] == request_id
    assert body["error"]["code"] == -32601
    assert error_reason(body["error"]) == "METHOD_NOT_FOUND"  # written in the header's 1.0


async def test_unknown_method_without_header_is_answered_in_0_3(
    client: httpx.AsyncClient,
) -> None:
    body = await call(client, rpc("Nope", {}, 2))
    assert body["error"]["code"] == -32601
    assert "data" not in body["error"] or not isinstance(body["error"]["data"], list)


@pytest.mark.parametrize("raw", [b"{not json", b"", b'{"jsonrpc": "2.0", "id": 1,'])
async def test_malformed_json_is_32700_with_null_id(client: httpx.AsyncClient, raw: bytes) -> None:
    response = await client.post("/", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 200
    body = response.json()
    assert body["id"] is None
    assert body["error"]["code"] == -32700


@pytest.mark.parametrize(
    ("payload", "expected_id"),
    [
        ({"jsonrpc": "1.0", "id": 5, "method": "GetTask"}, 5),
        ({"jsonrpc": "2.0", "id": 6, "method": 42}, 6),
        ({"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": "x"}, 7),
        ({"jsonrpc": "2.0", "id": {"bad": 1}, "method": "GetTask"}, None),
        ([rpc("GetTask", {"id": "task-1"})], None),
        ("just a string", None),
    ],
)
async def test_invalid_envelope_is_32600(
    client: httpx.AsyncClient, payload: Any, expected_id: Any
) -> None:
    body = await call(client, payload, V1)
    assert body["error"]["code"] == -32600
    assert body["id"] == expected_id


async def test_invalid_params_name_the_field(client: httpx.AsyncClient) -> None:
    body = await call(client, rpc("SendMessage", {"message": {"role": "ROLE_USER"}}), V1)
    assert body["error"]["code"] == -32602
    details = body["error"]["data"]
    assert any(d["@type"].endswith("BadRequest") for d in details)


async def test_absent_params_are_an_empty_object(client: httpx.AsyncClient) -> None:
    """JSON-RPC lets `params` be omitted: GetExtendedAgentCard needs none."""
    body = await call(client, rpc("GetExtendedAgentCard"), V1)
    assert body["result"]["name"] == "Fake agent"
    body = await call(client, rpc("agent/getAuthenticatedExtendedCard"))
    assert body["result"]["protocolVersion"].startswith("0.3")


async def test_notification_gets_204_and_is_not_executed(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """A valid request without `id`: no response body, nothing run."""
    payload = {"jsonrpc": "2.0", "method": "SendMessage", "params": send_params(V10)}
    response = await client.post("/", json=payload, headers=V1)
    assert response.status_code == 204
    assert response.content == b""
    assert not handler.calls


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [("message/ssend", {}, -32601), ("message/send", {"": "not_a_dict"}, -32602)],
)
async def test_request_without_id_gets_its_error(
    client: httpx.AsyncClient, handler: FakeHandler, method: str, params: Any, code: int
) -> None:
    """A2A has no notifications: an invalid request without `id` is answered (id null)."""
    body = await call(client, {"jsonrpc": "2.0", "method": method, "params": params})
    assert body["id"] is None
    assert body["error"]["code"] == code
    assert not handler.calls


async def test_declared_content_length_over_limit_is_refused(handler: FakeHandler) -> None:
    """R-OPS-3: a too large Content-Length is refused before reading (-32600, HTTP 200)."""
    app = build_app(handler, limits=Limits(max_body_bytes=64))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        body = await call(client, rpc("SendMessage", send_params(V10, "x" * 100)), V1)
    assert body["id"] is None
    assert body["error"]["code"] == -32600
    assert body["error"]["data"][0]["metadata"] == {"limit": "64"}
    assert not handler.calls


async def test_streamed_body_over_limit_is_refused(handler: FakeHandler) -> None:
    """Without Content-Length the bytes are counted as they arrive."""
    app = build_app(handler, limits=Limits(max_body_bytes=64))

    async def chunks() -> Any:
        for _ in range(10):
            yield b'{"padding": "' + b"x" * 20 + b'"}'

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        response = await client.post("/", content=chunks(), headers=V1)
    assert "content-length" not in response.request.headers
    assert response.json()["error"]["code"] == -32600


async def test_extensions_are_negotiated_and_echoed(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """Requested and declared extensions are activated and echoed; undeclared ones are
    ignored (R-EXT-3, REFERENCE §1.4)."""
    headers = {**V1, "A2A-Extensions": f"urn:unknown, {TRACE_EXTENSION},{ECHO_EXTENSION}"}
    response = await client.post("/", json=rpc("GetTask", {"id": "task-1"}), headers=headers)
    assert response.headers["a2a-extensions"] == f"{ECHO_EXTENSION}, {TRACE_EXTENSION}"
    ctx, _ = handler.last("get_task")
    assert ctx.requested_extensions == ("urn:unknown", TRACE_EXTENSION, ECHO_EXTENSION)
    assert ctx.activated_extensions == (ECHO_EXTENSION, TRACE_EXTENSION)


async def test_extensions_0_3_header_name(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/", json=rpc("tasks/get", {"id": "task-1"}), headers={"X-A2A-Extensions": ECHO_EXTENSION}
    )
    assert response.headers["x-a2a-extensions"] == ECHO_EXTENSION
    assert "a2a-extensions" not in response.headers


async def test_no_extension_header_when_none_active(client: httpx.AsyncClient) -> None:
    response = await client.post("/", json=rpc("GetTask", {"id": "task-1"}), headers=V1)
    assert "a2a-extensions" not in response.headers


async def test_required_extension_not_requested_is_32008() -> None:
    """R-CAP-2: a declared `required` extension the client did not request."""
    capabilities = replace(
        CARD.capabilities,
        extensions=(AgentExtension(uri=REQUIRED_EXTENSION, required=True),),
    )
    handler = FakeHandler(card=replace(CARD, capabilities=capabilities))
    app = build_app(handler)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        body = await call(client, rpc("GetTask", {"id": "task-1"}), V1)
        assert body["error"]["code"] == -32008
        assert not handler.calls
        ok = await call(
            client,
            rpc("GetTask", {"id": "task-1"}),
            {**V1, "A2A-Extensions": REQUIRED_EXTENSION},
        )
    assert ok["result"]["id"] == "task-1"


async def test_tenant_comes_from_the_request(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """The CallContext's tenant is the decoded request's `tenant` (REFERENCE §10)."""
    await call(client, rpc("GetTask", {"id": "task-1", "tenant": "acme"}), V1)
    ctx, _ = handler.last("get_task")
    assert ctx.tenant == "acme"
    assert ctx.scope == ("acme", "anonymous")


class _Authenticator:
    async def authenticate(self, request: AuthRequest) -> Caller:
        token = request.headers.get("authorization", "")
        if token != "Bearer good":
            raise UnauthenticatedError("no such principal", challenges=('Bearer realm="a2a"',))
        return Caller(id="alice")


async def test_authenticator_sets_the_caller(handler: FakeHandler) -> None:
    app = build_app(handler, authenticator=_Authenticator())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        body = await call(
            client, rpc("GetTask", {"id": "task-1"}), {**V1, "Authorization": "Bearer good"}
        )
        assert body["result"]["id"] == "task-1"
        ctx, _ = handler.last("get_task")
        assert ctx.caller.id == "alice"
        assert ctx.headers["authorization"] == "Bearer good"
        refused = await client.post("/", json=rpc("GetTask", {"id": "task-1"}), headers=V1)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'Bearer realm="a2a"'
    assert refused.json()["error"]["code"] == -31401


async def test_authentication_comes_before_validation(handler: FakeHandler) -> None:
    """A caller without credentials learns nothing about its request (R-ERR-3, R-SCOPE-8)."""
    app = build_app(handler, authenticator=_Authenticator())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        bad = await client.post("/", content=b"{not json", headers=V1)
        invalid = await client.post(
            "/", json=rpc("SendMessage", {"message": "not a message"}), headers=V1
        )
    # the authenticator's error, not -32700 or -32602
    assert [r.json()["error"]["code"] for r in (bad, invalid)] == [-31401, -31401]


async def test_authenticator_crash_is_internal_error(handler: FakeHandler) -> None:
    class Crashing:
        async def authenticate(self, request: AuthRequest) -> Caller:
            raise RuntimeError("secret internals")

    app = build_app(handler, authenticator=Crashing())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        body = await call(client, rpc("GetTask", {"id": "task-1"}, 8), V1)
    # authentication comes before the body is read: the request's id is not known yet
    assert (body["id"], body["error"]["code"]) == (None, -32603)
    assert "secret" not in str(body)


async def test_custom_jsonrpc_path(handler: FakeHandler) -> None:
    app = build_app(handler, jsonrpc_path="/a2a/jsonrpc")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        response = await client.post(
            "/a2a/jsonrpc", json=rpc("GetTask", {"id": "task-1"}), headers=V1
        )
        assert response.json()["result"]["id"] == "task-1"
        card = await client.get("/a2a/jsonrpc")
        assert card.json()["name"] == "Fake agent"
        root = await client.post("/", json=rpc("GetTask", {"id": "task-1"}), headers=V1)
    assert root.status_code == 404  # "/" is now just a (non-existent) REST path


async def test_get_on_the_jsonrpc_url_answers_the_card(client: httpx.AsyncClient) -> None:
    """The 0.3 TCK GETs the card's JSON-RPC `url` and expects 200."""
    response = await client.get("/")
    assert response.status_code == 200
    assert response.json()["url"] == "http://testserver/"


async def test_other_verbs_on_the_jsonrpc_url_are_405(client: httpx.AsyncClient) -> None:
    response = await client.put("/", json=rpc("GetTask", {"id": "task-1"}))
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"


async def test_served_versions_subset(handler: FakeHandler) -> None:
    """An interface serving only 1.0 refuses 0.3 requests (R-VER-5)."""
    app = build_app(handler, served_versions=(V10,))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        refused = await call(client, rpc("tasks/get", {"id": "task-1"}))
        served = await call(client, rpc("GetTask", {"id": "task-1"}), V1)
    assert refused["error"]["code"] == -32009
    assert served["result"]["id"] == "task-1"
