"""Three `parley serve --bus` replicas over one PostgreSQL schema and one Redis, behind a
round-robin proxy (`tests.replicas.proxy`), so that each request lands on another
replica: a client drives tasks through the proxy as it would one server — a streaming
send, a task followed from another replica, a cancel landing elsewhere than the run, a
multi-turn task whose turns land on different replicas, reads from any replica."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.crash.test_sigkill import postgres_url
from tests.replicas.proxy import RoundRobin
from tests.replicas.test_serve_replicas import (
    HEADERS,
    _message,
    _rpc,
    _subscribe,
    bus,
    executions,
    replica,
)

__all__ = ["bus", "postgres_url"]  # fixtures: a bus prefix and a PostgreSQL schema, cleaned


@asynccontextmanager
async def proxied(urls: list[str]) -> AsyncIterator[tuple[str, RoundRobin]]:
    proxy = RoundRobin(urls)
    port = await proxy.start()
    try:
        yield f"http://127.0.0.1:{port}", proxy
    finally:
        await proxy.stop()


async def call(client: httpx.AsyncClient, url: str, method: str, params: dict[str, Any]) -> Any:
    answer = (await client.post(url, json=_rpc(method, params), headers=HEADERS)).json()
    assert "error" not in answer, answer
    return answer["result"]


def test_three_replicas_behind_a_round_robin_proxy_act_as_one_server(
    tmp_path: Path, bus: str, postgres_url: str
) -> None:
    log = tmp_path / "rig.log"
    store = postgres_url
    with ExitStack() as stack:
        urls = [stack.enter_context(replica(store, bus, log)) for _ in range(3)]

        async def scenario() -> None:
            async with proxied(urls) as (url, proxy), httpx.AsyncClient(timeout=30) as client:
                # a streamed task followed from another replica, to its end
                sent = {"message": _message("stream"), "configuration": {"returnImmediately": True}}
                task = (await call(client, url, "SendMessage", sent))["task"]
                seen: list[dict[str, Any]] = []
                await asyncio.wait_for(_subscribe(url, task["id"], seen), 30)
                assert seen[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
                done = await call(client, url, "GetTask", {"id": task["id"]})
                assert done["status"]["state"] == "TASK_STATE_COMPLETED"
                # a cancel landing on another replica than the run
                mark = tmp_path / "cancelled"
                message = {**_message("sleepy"), "parts": [{"text": str(mark)}]}
                sent = {"message": message, "configuration": {"returnImmediately": True}}
                sleeping = (await call(client, url, "SendMessage", sent))["task"]
                for _ in range(500):
                    now = await call(client, url, "GetTask", {"id": sleeping["id"]})
                    if now["status"]["state"] == "TASK_STATE_WORKING":
                        break
                    await asyncio.sleep(0.02)
                canceled = await call(client, url, "CancelTask", {"id": sleeping["id"]})
                assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
                for _ in range(500):
                    if mark.exists():
                        break
                    await asyncio.sleep(0.02)
                assert mark.read_text() == "cancelled"
                # a multi-turn task: its reply lands on another replica than its question
                asked = (await call(client, url, "SendMessage", {"message": _message("ask")}))[
                    "task"
                ]
                assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
                reply = {**_message("ask"), "taskId": asked["id"], "parts": [{"text": "Ada"}]}
                answered = (await call(client, url, "SendMessage", {"message": reply}))["task"]
                assert answered["status"]["state"] == "TASK_STATE_COMPLETED"
                texts = [p["text"] for a in answered["artifacts"] for p in a["parts"]]
                assert texts == ["hello Ada"]
                started = [e for e in executions(log) if e[0] == asked["id"]]
                assert len(started) == 1, started  # the reply reached the asking function
                # reads from every replica agree
                listed = await call(client, url, "ListTasks", {})
                ids = {each["id"] for each in listed["tasks"]}
                assert {task["id"], sleeping["id"]} <= ids
                for _ in range(3):
                    again = await call(client, url, "GetTask", {"id": sleeping["id"]})
                    assert again["status"]["state"] == "TASK_STATE_CANCELED"
                assert min(proxy.counts) >= 3, proxy.counts  # every replica served

        asyncio.run(scenario())


def test_the_proxy_spreads_requests() -> None:
    """The control: the proxy sends consecutive requests to different backends."""

    async def scenario() -> None:
        servers = []
        hits: list[int] = []
        for number in range(3):

            async def answer(
                reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int = number
            ) -> None:
                await reader.readuntil(b"\r\n\r\n")
                hits.append(number)
                writer.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
                await writer.drain()
                writer.close()

            servers.append(await asyncio.start_server(answer, "127.0.0.1", 0))
        urls = [f"http://127.0.0.1:{s.sockets[0].getsockname()[1]}" for s in servers]
        async with proxied(urls) as (url, _), httpx.AsyncClient() as client:
            for _ in range(6):
                assert (await client.get(url)).status_code == 204
        for server in servers:
            server.close()
        assert hits == [0, 1, 2, 0, 1, 2]

    asyncio.run(scenario())
