"""Subscribing to a task that does not exist answers TaskNotFound at once, in every form:
HTTP+JSON GET and POST in both versions, JSON-RPC in both versions, gRPC in both versions
(REFERENCE R-SUB: an unknown task is TaskNotFound; an error before the first event is a
plain error response, §7.1).

A real uvicorn server and a real gRPC server over the default SQLite store, 20 times per
form: a GET subscribe used to hang on SQLite (its stream watcher lost the cancellation
that should have ended it). Each call has a one-second deadline, which fails the test.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import httpx
import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc as grpc03
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc as grpc10

from parley.asgi import build_app
from parley.grpc import GrpcServer
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.stores import open_store
from parley.server.task_context import TaskContext
from tests.asgi.live import running
from tests.contracts.support import run
from tests.ports import free_port

REPEATS = 20
DEADLINE = 1.0
"""Seconds: an answer later than this fails the test."""

V1 = {"A2A-Version": "1.0"}
Answer = tuple[str, str]
"""What came back: the status or error code, and the error's reason or message."""


def rpc(
    method: str, version: dict[str, str]
) -> Callable[[httpx.AsyncClient, str], Awaitable[Answer]]:
    async def call(http: httpx.AsyncClient, task_id: str) -> Answer:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": task_id}}
        response = await http.post("/", json=body, headers=version)
        if response.headers["content-type"] == "text/event-stream":  # 0.3: errors as events
            text = response.text.removeprefix("data: ").strip()
            error = json.loads(text)["error"]
        else:
            error = response.json()["error"]
        return str(error["code"]), error["message"]

    return call


def rest(
    verb: str, prefix: str, version: dict[str, str]
) -> Callable[[httpx.AsyncClient, str], Awaitable[Answer]]:
    async def call(http: httpx.AsyncClient, task_id: str) -> Answer:
        response = await http.request(verb, f"{prefix}/tasks/{task_id}:subscribe", headers=version)
        assert response.headers["content-type"] == "application/json"
        error = response.json().get("error", response.json())
        return str(response.status_code), error["message"]

    return call


HTTP_FORMS = {
    "HTTP+JSON 1.0 GET": (rest("GET", "", V1), "404"),
    "HTTP+JSON 1.0 POST": (rest("POST", "", V1), "404"),
    "HTTP+JSON 0.3 GET": (rest("GET", "/v1", {}), "404"),
    "HTTP+JSON 0.3 POST": (rest("POST", "/v1", {}), "404"),
    "JSON-RPC 1.0 SubscribeToTask": (rpc("SubscribeToTask", V1), "-32001"),
    "JSON-RPC 0.3 tasks/resubscribe": (rpc("tasks/resubscribe", {}), "-32001"),
}


def echo_agent() -> Agent:
    agent = Agent("Subscribe")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    return agent


def service_over_sqlite(tmp_path: Path) -> AgentService:
    agent = echo_agent()
    tasks, push = open_store(f"sqlite:///{tmp_path / 'tasks.db'}")
    return AgentService(
        agent.executor(), agent.card("http://127.0.0.1"), store=tasks, push_store=push
    )


@pytest.mark.parametrize("form", list(HTTP_FORMS))
def test_http_subscribe_to_a_missing_task_is_task_not_found_at_once(
    tmp_path: Path, form: str
) -> None:
    call, expected = HTTP_FORMS[form]

    async def subscribe_all(base: str) -> list[Answer]:
        timeout = httpx.Timeout(DEADLINE)
        async with httpx.AsyncClient(base_url=base, timeout=timeout) as http:
            return [await call(http, f"missing-{i}") for i in range(REPEATS)]

    with running(build_app(service_over_sqlite(tmp_path))) as base:
        answers = run(subscribe_all(base))
    assert [code for code, _ in answers] == [expected] * REPEATS
    assert all("not found" in message.lower() for _, message in answers)


async def grpc_subscribe_all(service: AgentService, version: str) -> list[grpc.StatusCode]:
    await service.startup()
    codes: list[grpc.StatusCode] = []
    try:
        async with (
            GrpcServer(service, port=free_port()) as server,
            grpc.aio.insecure_channel(server.address) as channel,
        ):
            for i in range(REPEATS):
                if version == "1.0":
                    call = grpc10.A2AServiceStub(channel).SubscribeToTask(
                        pb.SubscribeToTaskRequest(id=f"missing-{i}"),
                        metadata=(("a2a-version", "1.0"),),
                        timeout=DEADLINE,
                    )
                else:
                    call = grpc03.A2AServiceStub(channel).TaskSubscription(
                        pb03.TaskSubscriptionRequest(name=f"tasks/missing-{i}"), timeout=DEADLINE
                    )
                try:
                    await call.read()
                except grpc.aio.AioRpcError as error:
                    codes.append(error.code())
    finally:
        await service.shutdown()
    return codes


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_grpc_subscribe_to_a_missing_task_is_not_found_at_once(
    tmp_path: Path, version: str
) -> None:
    codes = run(grpc_subscribe_all(service_over_sqlite(tmp_path), version))
    assert codes == [grpc.StatusCode.NOT_FOUND] * REPEATS


async def read_stream(http: httpx.AsyncClient, path: str) -> None:
    async with http.stream("GET", path, headers=V1) as response:
        async for _ in response.aiter_bytes():
            pass


def test_the_deadline_is_what_fails_a_hang(tmp_path: Path) -> None:
    """A subscribe to a task that exists and is working stays open: the same client and
    deadline report it as a timeout, so a hang on a missing task cannot pass unseen."""
    agent = Agent("Slow")

    @agent.skill()
    async def wait(task: TaskContext) -> str:
        await asyncio.sleep(30)
        return "done"

    tasks, push = open_store(f"sqlite:///{tmp_path / 'tasks.db'}")
    service = AgentService(
        agent.executor(), agent.card("http://127.0.0.1"), store=tasks, push_store=push
    )

    async def scenario(base: str) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(DEADLINE)) as http:
            send = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "x"}]},
                    "configuration": {"returnImmediately": True},
                },
            }
            task = (await http.post("/", json=send, headers=V1)).json()["result"]
            path = f"/tasks/{task['task']['id']}:subscribe"
            with pytest.raises(httpx.ReadTimeout):
                await read_stream(http, path)

    with running(build_app(service)) as base:
        run(scenario(base))
