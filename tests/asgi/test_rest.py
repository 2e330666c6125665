"""The HTTP+JSON binding over httpx's ASGI transport: routes of both versions, tenant
routes, the `/v1` ambiguity, 404/405, query and path parameters, errors and limits
(REFERENCE §1.3, §3.2, §6.3, §6.5)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from parley.asgi import build_app
from parley.asgi.rest import LITERALS, ROUTERS
from parley.model import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.codec_table import REST
from parley.wire.limits import Limits
from tests.asgi.fakes import ECHO_EXTENSION, FakeHandler
from tests.asgi.helpers import V1, error_reason, send_body

pytestmark = pytest.mark.anyio

V03 = Version.V0_3
V10 = Version.V1_0


def decode(version: Version, operation: Operation, response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    return REST[version].decode_response(operation, response.json())


async def test_send_message_1_0(client: httpx.AsyncClient, handler: FakeHandler) -> None:
    """POST /message:send with `A2A-Version: 1.0` (REFERENCE §3.2)."""
    response = await client.post("/message:send", json=send_body(V10), headers=V1)
    result = decode(V10, Operation.SEND_MESSAGE, response)
    assert isinstance(result, Task)
    assert result.status.state is TaskState.COMPLETED
    ctx, request = handler.last("send_message")
    assert (ctx.version, ctx.tenant) == (V10, "")
    assert isinstance(request, SendMessageRequest)


async def test_send_message_0_3(client: httpx.AsyncClient, handler: FakeHandler) -> None:
    """POST /v1/message:send without a header is 0.3 REST (R-VER-6)."""
    response = await client.post("/v1/message:send", json=send_body(V03, "reply"))
    result = decode(V03, Operation.SEND_MESSAGE, response)
    assert isinstance(result, Message)
    assert handler.last("send_message")[0].version is V03


async def test_tenant_route(client: httpx.AsyncClient, handler: FakeHandler) -> None:
    """Every 1.0 route also exists under `/{tenant}` (REFERENCE §3.2, §10)."""
    response = await client.post("/acme%20corp/message:send", json=send_body(V10), headers=V1)
    decode(V10, Operation.SEND_MESSAGE, response)
    ctx, request = handler.last("send_message")
    assert ctx.tenant == "acme corp"
    assert isinstance(request, SendMessageRequest)
    assert request.tenant == "acme corp"


async def test_v1_prefix_is_0_3_without_header_and_a_tenant_with_it(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """The collision of REFERENCE §1.3: `/v1/message:send` is the 0.3 route unless the
    request says 1.0, then the 1.0 tenant route with tenant `v1`."""
    await client.post("/v1/message:send", json=send_body(V03))
    ctx, _ = handler.last("send_message")
    assert (ctx.version, ctx.tenant) == (V03, "")
    response = await client.post("/v1/message:send", json=send_body(V10), headers=V1)
    decode(V10, Operation.SEND_MESSAGE, response)
    ctx, _ = handler.last("send_message")
    assert (ctx.version, ctx.tenant) == (V10, "v1")


async def test_1_0_route_without_header_is_version_not_supported(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """A 1.0 route without the header is a 0.3 request for a path 0.3 lacks (R-VER-5)."""
    response = await client.post("/message:send", json=send_body(V10))
    assert response.status_code == 400
    assert "A2A-Version" in response.json()["message"]  # the 0.3 error body
    assert not handler.calls


async def test_0_3_route_with_1_0_header_is_a_tenant_route_or_version_error(
    client: httpx.AsyncClient,
) -> None:
    """`/v1/card` has no 1.0 reading (no 1.0 route ends in `/card`)."""
    response = await client.get("/v1/card", headers=V1)
    assert response.status_code == 400
    assert error_reason(response.json()["error"]) == "VERSION_NOT_SUPPORTED"


async def test_unserved_version_header(client: httpx.AsyncClient) -> None:
    """An unknown `A2A-Version` is answered in the first served version's format."""
    response = await client.get("/tasks/task-1", headers={"A2A-Version": "7.1"})
    assert response.status_code == 400
    body = response.json()["error"]
    assert body["status"] == "FAILED_PRECONDITION"
    assert error_reason(body) == "VERSION_NOT_SUPPORTED"


@pytest.mark.parametrize(("version", "path"), [(V10, "/tasks/task-1"), (V03, "/v1/tasks/task-1")])
async def test_get_task(
    client: httpx.AsyncClient, handler: FakeHandler, version: Version, path: str
) -> None:
    headers = V1 if version is V10 else {}
    response = await client.get(path, params={"historyLength": "3"}, headers=headers)
    result = decode(version, Operation.GET_TASK, response)
    assert result.id == "task-1"
    _, request = handler.last("get_task")
    assert request == GetTaskRequest(id="task-1", history_length=3)


async def test_path_parameters_are_percent_decoded(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """`{id}` is one segment: `%2F` stays inside it and is decoded (REFERENCE §3.2)."""
    response = await client.get("/tasks/a%2Fb%20c%3Ad", headers=V1)
    assert response.status_code == 404
    _, request = handler.last("get_task")
    assert isinstance(request, GetTaskRequest)
    assert request.id == "a/b c:d"
    assert response.json()["error"]["details"][0]["metadata"] == {"taskId": "a/b c:d"}


async def test_list_tasks_query_parameters(client: httpx.AsyncClient, handler: FakeHandler) -> None:
    """Query names are camelCase, values strings (R-REST-4, R-REST-5)."""
    query = "pageSize=5&status=TASK_STATE_WORKING&contextId=ctx%201&includeArtifacts=true"
    response = await client.get(f"/tasks?{query}", headers=V1)
    result = decode(V10, Operation.LIST_TASKS, response)
    assert len(result.tasks) == 2
    _, request = handler.last("list_tasks")
    assert request == ListTasksRequest(
        page_size=5, status=TaskState.WORKING, context_id="ctx 1", include_artifacts=True
    )


async def test_repeated_query_key_is_a_list(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """Repeated keys become a list; a scalar field then refuses it, naming the field."""
    response = await client.get("/tasks/task-1?historyLength=1&historyLength=2", headers=V1)
    assert response.status_code == 400
    assert "historyLength" in response.json()["error"]["message"]
    assert not handler.calls


async def test_version_query_parameter_selects_the_version(client: httpx.AsyncClient) -> None:
    response = await client.get("/tasks/task-1?A2A-Version=1.0")
    assert decode(V10, Operation.GET_TASK, response).id == "task-1"


async def test_tasks_tasks_is_get_task_not_a_tenant_list(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """`/tasks/tasks`: non-tenant routes match first (REFERENCE §3.2)."""
    await client.get("/tasks/tasks", headers=V1)
    assert handler.calls[-1][0] == "get_task"


async def test_tenant_list_tasks(client: httpx.AsyncClient, handler: FakeHandler) -> None:
    response = await client.get("/acme/tasks", headers=V1)
    decode(V10, Operation.LIST_TASKS, response)
    ctx, request = handler.last("list_tasks")
    assert ctx.tenant == "acme"
    assert request == ListTasksRequest(tenant="acme")


async def test_cancel(client: httpx.AsyncClient, handler: FakeHandler) -> None:
    response = await client.post("/tasks/task-1:cancel", json={"metadata": {"k": 1}}, headers=V1)
    assert decode(V10, Operation.CANCEL_TASK, response).status.state is TaskState.CANCELED
    _, request = handler.last("cancel_task")
    assert request == CancelTaskRequest(id="task-1", metadata={"k": 1})


async def test_cancel_0_3_with_empty_body(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/tasks/task-1:cancel")
    assert decode(V03, Operation.CANCEL_TASK, response).status.state is TaskState.CANCELED


async def test_wrong_verb_is_405_with_method_not_found_body(client: httpx.AsyncClient) -> None:
    """A path that exists with another verb (REFERENCE §6.3)."""
    response = await client.get("/tasks/task-1:cancel", headers=V1)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert error_reason(response.json()["error"]) == "METHOD_NOT_FOUND"
    response = await client.delete("/v1/tasks/task-1")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"
    assert "message" in response.json()


async def test_a_path_without_parameters_and_another_verb_is_405(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/message:send", headers=V1)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    response = await client.delete("/tasks", headers=V1)
    assert (response.status_code, response.headers["allow"]) == (405, "GET")


def test_paths_without_parameters_route_as_the_patterns_do() -> None:
    """The dict of literal paths gives what the first matching pattern gives."""
    for version, paths in ROUTERS.items():
        assert LITERALS[version], version
        for template, path in LITERALS[version].items():
            assert next(p for p in paths if p.pattern.fullmatch(template)) is path


async def test_subscribe_allows_get_and_post(client: httpx.AsyncClient) -> None:
    response = await client.put("/tasks/task-1:subscribe", headers=V1)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"


@pytest.mark.parametrize(("path", "headers"), [("/nothing/here/at/all", V1), ("/v2/x", {})])
async def test_unknown_path_is_404(
    client: httpx.AsyncClient, path: str, headers: dict[str, str]
) -> None:
    response = await client.get(path, headers=headers)
    assert response.status_code == 404
    body = response.json()
    if headers:
        assert body["error"]["code"] == 404
        assert error_reason(body["error"]) == "METHOD_NOT_FOUND"
    else:
        assert "message" in body


async def test_path_tenant_contradicted_by_the_body(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """A body `tenant` may repeat the path's, not contradict it."""
    body = {**send_body(V10), "tenant": "other"}
    response = await client.post("/acme/message:send", json=body, headers=V1)
    assert response.status_code == 400
    assert response.json()["error"]["details"][1]["fieldViolations"][0]["field"] == "tenant"
    assert not handler.calls
    body["tenant"] = "acme"
    response = await client.post("/acme/message:send", json=body, headers=V1)
    assert response.status_code == 200


@pytest.mark.parametrize(("version", "prefix"), [(V10, ""), (V03, "/v1")])
async def test_push_config_crud(
    client: httpx.AsyncClient, handler: FakeHandler, version: Version, prefix: str
) -> None:
    headers = V1 if version is V10 else {}
    codec = REST[version]
    base = f"{prefix}/tasks/task-1/pushNotificationConfigs"
    config = TaskPushNotificationConfig(url="https://hook.example/x", task_id="task-1", id="c1")
    body = codec.encode_request(Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, config)
    created = decode(
        version,
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        await client.post(base, json=body, headers=headers),
    )
    assert (created.task_id, created.id) == ("task-1", "c1")
    got = decode(
        version,
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        await client.get(f"{base}/c1", headers=headers),
    )
    assert got.url == "https://hook.example/x"
    listed = decode(
        version,
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        await client.get(base, headers=headers),
    )
    assert [c.id for c in listed.configs] == ["c1"]
    deleted = await client.delete(f"{base}/c1", headers=headers)
    assert deleted.status_code == 200
    assert deleted.json() in ({}, None)
    assert handler.configs == {}


@pytest.mark.parametrize(("version", "path"), [(V10, "/extendedAgentCard"), (V03, "/v1/card")])
async def test_extended_card(client: httpx.AsyncClient, version: Version, path: str) -> None:
    headers = V1 if version is V10 else {}
    card = decode(
        version, Operation.GET_EXTENDED_AGENT_CARD, await client.get(path, headers=headers)
    )
    assert card.name == "Fake agent"


async def test_errors_1_0_are_google_rpc_status(client: httpx.AsyncClient) -> None:
    """REFERENCE §6.5: AIP-193 `{"error": Status}` with ErrorInfo (R-REST-10)."""
    response = await client.get("/tasks/nope", headers=V1)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert (error["code"], error["status"]) == (404, "NOT_FOUND")
    assert error_reason(error) == "TASK_NOT_FOUND"


async def test_errors_0_3_are_what_the_official_clients_decode(client: httpx.AsyncClient) -> None:
    """0.3 REST errors: the official SDK 0.3.x's status, the JSON-RPC error object with
    the class name as `type` (docs/decisions.md, "0.3 REST error bodies")."""
    response = await client.post("/v1/tasks/done-1:cancel")
    assert response.status_code == 409
    body = response.json()
    assert (body["code"], body["type"]) == (-32002, "TaskNotCancelableError")
    assert set(body) <= {"code", "message", "type", "data"}


@pytest.mark.parametrize(("raw", "status"), [(b"{oops", 400), (b"[1, 2]", 400), (b'"text"', 400)])
async def test_bad_bodies(client: httpx.AsyncClient, raw: bytes, status: int) -> None:
    headers = {**V1, "content-type": "application/json"}
    response = await client.post("/message:send", content=raw, headers=headers)
    assert response.status_code == status
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"


async def test_non_object_body_0_3_is_422(client: httpx.AsyncClient) -> None:
    """0.3 statuses follow the official SDK: invalid params are 422 (REFERENCE §6.5)."""
    response = await client.post(
        "/v1/message:send", content=b"[]", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422


async def test_body_over_limit_is_400(handler: FakeHandler) -> None:
    """R-OPS-3: the table's status for InvalidRequestError (400)."""
    app = build_app(handler, limits=Limits(max_body_bytes=32))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        response = await client.post("/message:send", json=send_body(V10), headers=V1)
    assert response.status_code == 400
    assert error_reason(response.json()["error"]) == "INVALID_REQUEST"
    assert not handler.calls


async def test_get_ignores_the_body_and_content_type(client: httpx.AsyncClient) -> None:
    """Only POST bodies are read, and only theirs must be JSON; a GET's body and
    Content-Type are ignored (§2.1)."""
    response = await client.request(
        "GET", "/tasks/task-1", content=b"{not json", headers={**V1, "content-type": "text/x"}
    )
    assert response.status_code == 200


async def test_extensions_echoed_on_rest(client: httpx.AsyncClient) -> None:
    response = await client.get("/tasks/task-1", headers={**V1, "A2A-Extensions": ECHO_EXTENSION})
    assert response.headers["a2a-extensions"] == ECHO_EXTENSION


async def test_subscribe_unknown_task_is_a_plain_404(client: httpx.AsyncClient) -> None:
    """An error before the first event is a normal error response (REFERENCE §7.1)."""
    response = await client.get("/tasks/nope:subscribe", headers=V1)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert error_reason(response.json()["error"]) == "TASK_NOT_FOUND"


async def test_only_1_0_served(handler: FakeHandler) -> None:
    app = build_app(handler, served_versions=(V10,))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        refused = await client.get("/v1/tasks/task-1")
        served = await client.get("/tasks/task-1", headers=V1)
    assert refused.status_code == 400
    assert error_reason(refused.json()["error"]) == "VERSION_NOT_SUPPORTED"
    assert served.status_code == 200


async def test_root_path_is_stripped(handler: FakeHandler) -> None:
    """Mounted under a root path, routes are matched below it."""
    app = build_app(handler)
    transport = httpx.ASGITransport(app=app, root_path="/agent")
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        response = await client.get("/agent/tasks/task-1", headers=V1)
    assert response.status_code == 200
