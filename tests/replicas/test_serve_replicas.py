"""Two `parley serve --bus` processes over one SQLite file and the machine's Redis: a
client streaming from one replica sees, in order and to the end, a task the other runs;
a cancel sent to one stops a run on the other; the bus refuses a store replicas cannot
share and an unreachable Redis, clearly."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from parley.wire import json_bytes
from parley.wire.sse import SSEParser
from tests.ports import free_port
from tests.replicas.agent import CHUNKS, EXECUTIONS
from tests.serving import wait_for_card

ROOT = Path(__file__).resolve().parents[2]
HEADERS = {"A2A-Version": "1.0"}
REDIS = "redis://127.0.0.1:6379/0"


def _command(store: str, bus: str, port: int) -> list[str]:
    command = [sys.executable, "-m", "parley.cli.main", "serve", "tests.replicas.agent:agent"]
    return [*command, "--port", str(port), "--store", store, "--bus", bus, "--log-level", "warning"]


@contextmanager
def replica(
    store: str, bus: str, log: Path, processes: list[subprocess.Popen[bytes]] | None = None
) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, EXECUTIONS: str(log.with_suffix(".executions"))}
    with log.open("ab") as errors:
        process = subprocess.Popen(_command(store, bus, port), cwd=ROOT, stderr=errors, env=env)
    if processes is not None:
        processes.append(process)
    try:
        wait_for_card(url, process, log.read_text)
        yield url
    finally:
        process.kill()
        process.wait(10)


def executions(log: Path) -> list[tuple[str, str]]:
    """(task id, message id) of every start of a skill's function, on every replica that
    `replica(..., log)` started."""
    path = log.with_suffix(".executions")
    lines = path.read_text().splitlines() if path.exists() else []
    return [(line.split()[0], line.split()[1]) for line in lines]


@pytest.fixture
def bus() -> Iterator[str]:
    prefix = f"parley-test-{uuid.uuid4().hex[:10]}"
    yield f"{REDIS}?prefix={prefix}&lease=2"
    client = redis.Redis.from_url(REDIS)
    keys = list(client.scan_iter(match=f"{prefix}:*"))
    if keys:
        client.delete(*keys)
    client.close()


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params}


def _message(skill: str) -> dict[str, Any]:
    return {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": "go"}],
        "metadata": {"skill": skill},
    }


def _call(url: str, method: str, params: dict[str, Any]) -> Any:
    answer = httpx.post(url, json=_rpc(method, params), headers=HEADERS, timeout=10).json()
    assert "error" not in answer, answer
    return answer["result"]


def _until_working(url: str, task_id: str) -> None:
    deadline = time.monotonic() + 10
    while _call(url, "GetTask", {"id": task_id})["status"]["state"] != "TASK_STATE_WORKING":
        assert time.monotonic() < deadline, f"task {task_id} did not start working"
        time.sleep(0.02)


async def _subscribe(url: str, task_id: str, into: list[dict[str, Any]]) -> None:
    body = _rpc("SubscribeToTask", {"id": task_id})
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("POST", url, json=body, headers=HEADERS) as response,
    ):
        parser = SSEParser()
        async for chunk in response.aiter_bytes():
            for event in parser.feed(chunk):
                answer = json_bytes.loads(event.data.encode())
                assert "error" not in answer, answer
                into.append(answer["result"])


def test_a_stream_from_one_replica_follows_a_task_the_other_runs(tmp_path: Path, bus: str) -> None:
    store = f"sqlite:///{tmp_path / 'shared.db'}"
    log = tmp_path / "replicas.log"
    with ExitStack() as stack:
        a = stack.enter_context(replica(store, bus, log))
        b = stack.enter_context(replica(store, bus, log))
        sent = {"message": _message("stream"), "configuration": {"returnImmediately": True}}
        task = _call(a, "SendMessage", sent)["task"]
        seen: list[dict[str, Any]] = []
        asyncio.run(asyncio.wait_for(_subscribe(b, task["id"], seen), 30))
    chunks = [
        part["text"]
        for each in seen
        if "artifactUpdate" in each
        for part in each["artifactUpdate"]["artifact"]["parts"]
    ]
    assert "task" in seen[0]
    artifacts = seen[0]["task"].get("artifacts", [])
    streamed = len(artifacts[0]["parts"]) if artifacts else 0  # in the snapshot already
    expected = [f"c{number:03d} " for number in range(CHUNKS)]
    assert chunks == expected[streamed:]  # after the snapshot, every chunk, once, in order
    assert seen[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_cancel_on_one_replica_stops_the_run_on_the_other(tmp_path: Path, bus: str) -> None:
    """The run sleeps a minute on replica a; a cancel sent to replica b commits CANCELED
    and asks the others to stop: a's run is cancelled at once (it leaves a mark)."""
    store = f"sqlite:///{tmp_path / 'shared.db'}"
    log = tmp_path / "replicas.log"
    mark = tmp_path / "cancelled"
    with ExitStack() as stack:
        a = stack.enter_context(replica(store, bus, log))
        b = stack.enter_context(replica(store, bus, log))
        message = {**_message("sleepy"), "parts": [{"text": str(mark)}]}
        sent = {"message": message, "configuration": {"returnImmediately": True}}
        task = _call(a, "SendMessage", sent)["task"]
        _until_working(a, task["id"])
        canceled = _call(b, "CancelTask", {"id": task["id"]})
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        deadline = time.monotonic() + 10
        while not mark.exists():
            assert time.monotonic() < deadline, "the run on the other replica went on"
            time.sleep(0.02)
        assert mark.read_text() == "cancelled"
        final = _call(a, "GetTask", {"id": task["id"]})
        assert final["status"]["state"] == "TASK_STATE_CANCELED"


def test_a_killed_replica_s_task_is_failed_by_another(tmp_path: Path, bus: str) -> None:
    """kill -9 of the replica running a task: once its lease (2 s here) runs out, a sweep of
    another replica fails the task, saying why; a stream on that replica ends with it."""
    store = f"sqlite:///{tmp_path / 'shared.db'}"
    log = tmp_path / "replicas.log"
    processes: list[subprocess.Popen[bytes]] = []
    with ExitStack() as stack:
        a = stack.enter_context(replica(store, bus, log, processes))
        b = stack.enter_context(replica(store, bus, log))
        message = {**_message("sleepy"), "parts": [{"text": str(tmp_path / "mark")}]}
        sent = {"message": message, "configuration": {"returnImmediately": True}}
        task = _call(a, "SendMessage", sent)["task"]
        _until_working(b, task["id"])
        seen: list[dict[str, Any]] = []

        async def watch_while_killing() -> None:
            watching = asyncio.create_task(_subscribe(b, task["id"], seen))
            while not seen and not watching.done():  # in place: its first event, the task
                await asyncio.sleep(0.01)
            processes[0].kill()  # a dies, its lease is not renewed
            await asyncio.wait_for(watching, 20)

        asyncio.run(watch_while_killing())
        final = _call(b, "GetTask", {"id": task["id"]})
    assert final["status"]["state"] == "TASK_STATE_FAILED"
    assert final["status"]["message"]["parts"][0]["text"] == "The replica running this task stopped"
    assert seen[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
    assert not (tmp_path / "mark").exists()  # killed, not cancelled


def test_the_bus_needs_a_shared_store_and_a_reachable_redis(tmp_path: Path) -> None:
    memory = subprocess.run(
        _command("memory", REDIS, free_port()),
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert memory.returncode != 0
    assert "--bus needs a store the replicas share" in memory.stderr
    store = f"sqlite:///{tmp_path / 'x.db'}"
    down = subprocess.run(
        _command(store, "redis://127.0.0.1:1/0", free_port()),
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert down.returncode != 0
    assert "redis://127.0.0.1:1/0 is unreachable" in down.stderr
