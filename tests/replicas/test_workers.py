"""`parley serve --workers N`: N processes sharing one port over one store and bus; a
worker that dies is replaced and the server goes on answering; SIGTERM stops them all;
the options a worker needs are checked first."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from parley.client import Client, user_message
from parley.model import Task
from tests.ports import free_port
from tests.replicas.agent import EXECUTIONS
from tests.replicas.test_serve_replicas import ROOT, _call, _message, bus

REDIS = "redis://127.0.0.1:6379/0"
__all__ = ["bus"]  # the fixture: a bus prefix of the test's own, cleaned after


def _children(pid: int) -> set[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return {int(each) for each in found}


def _serve(store: str, bus: str | None, port: int, workers: int) -> list[str]:
    command = [sys.executable, "-m", "parley.cli.main", "serve", "tests.replicas.agent:agent"]
    command += ["--port", str(port), "--store", store, "--workers", str(workers)]
    command += ["--log-level", "warning"]
    return [*command, "--bus", bus] if bus else command


def _until_serving(server: subprocess.Popen[bytes], url: str, log: Path) -> None:
    """Until two workers run and the card answers (30 s at most)."""
    deadline = time.monotonic() + 30
    while len(_children(server.pid)) < 2 or not _ready(url):
        assert server.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.1)


def test_workers_share_the_port_and_a_dead_one_is_replaced(tmp_path: Path, bus: str) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    store = f"sqlite:///{tmp_path / 'shared.db'}"
    log = (tmp_path / "workers.log").open("ab")
    server = subprocess.Popen(_serve(store, bus, port, 2), cwd=ROOT, stderr=log)
    try:
        _until_serving(server, url, tmp_path / "workers.log")
        deadline = time.monotonic() + 30
        first = _children(server.pid)
        for _ in range(10):
            assert (
                _call(url, "SendMessage", {"message": _message("stream")})["task"]["status"][
                    "state"
                ]
                == "TASK_STATE_COMPLETED"
            )
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        while len(_children(server.pid) - {victim}) < 2 or not _ready(url):
            assert time.monotonic() < deadline + 30, "the worker was not replaced"
            time.sleep(0.1)
        assert (
            _call(url, "SendMessage", {"message": _message("stream")})["task"]["status"]["state"]
            == "TASK_STATE_COMPLETED"
        )
        every = first | _children(server.pid)
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0
        assert _children_left(every) == [], "workers outlived the server"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
        log.close()


def test_workers_serve_grpc_on_one_port(tmp_path: Path, bus: str) -> None:
    """With `--grpc-port`, each worker serves gRPC on the same port (SO_REUSEPORT): calls
    on new connections are spread over the workers, and each is answered."""
    port, grpc_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    runs = tmp_path / "runs"
    command = _serve(f"sqlite:///{tmp_path / 'shared.db'}", bus, port, 2)
    command += ["--grpc-port", str(grpc_port)]
    env = {**os.environ, EXECUTIONS: str(runs)}
    log = (tmp_path / "workers.log").open("ab")
    server = subprocess.Popen(command, cwd=ROOT, stderr=log, env=env)

    def served() -> set[int]:
        lines = runs.read_text().splitlines() if runs.exists() else []
        return {int(line.split()[2]) for line in lines}

    async def calls() -> list[str]:
        """Calls, each on a connection of its own, until every worker answered one (a
        worker may start serving gRPC a moment after the other)."""
        states = []
        for number in range(64):
            async with Client.connect(url, bindings=["GRPC"]) as client:
                message = user_message(f"hi{number}", metadata={"skill": "quick"})
                result = await client.send(message)
                assert isinstance(result, Task)
                states.append(result.status.state.name)
            if number >= 3 and served() == _children(server.pid):
                break
        return states

    try:
        _until_serving(server, url, tmp_path / "workers.log")
        states = asyncio.run(calls())
        assert states == ["COMPLETED"] * len(states)
        assert served() == _children(server.pid), "every worker served gRPC calls"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
        log.close()


def _completed(url: str) -> bool:
    task = _call(url, "SendMessage", {"message": _message("quick")})["task"]
    return bool(task["status"]["state"] == "TASK_STATE_COMPLETED")


def _children_left(pids: set[int]) -> list[int]:
    return [pid for pid in pids if Path(f"/proc/{pid}").exists() and _alive(pid)]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def _ready(url: str) -> bool:
    try:
        return httpx.get(url + "/.well-known/agent-card.json", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.parametrize(
    ("bus", "store", "says"),
    [
        (None, "sqlite:///x.db", "--workers N > 1 runs N replicas: give them --bus"),
        (REDIS, "memory", "--bus needs a store the replicas share"),
        ("redis://127.0.0.1:1/0", "sqlite:///x.db", "redis://127.0.0.1:1/0 is unreachable"),
    ],
)
def test_what_workers_need_is_checked(
    tmp_path: Path, bus: str | None, store: str, says: str
) -> None:
    done = subprocess.run(
        _serve(store, bus, free_port(), 2),
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode != 0
    assert says in done.stderr
