"""`parley serve --workers N`: N processes sharing one port over one store and bus; a
worker that dies is replaced and the server goes on answering; SIGTERM stops them all;
the options a worker needs are checked first."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.replicas.test_serve_replicas import ROOT, _call, _free_port, _message, bus

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


def test_workers_share_the_port_and_a_dead_one_is_replaced(tmp_path: Path, bus: str) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    store = f"sqlite:///{tmp_path / 'shared.db'}"
    log = (tmp_path / "workers.log").open("ab")
    server = subprocess.Popen(_serve(store, bus, port, 2), cwd=ROOT, stderr=log)
    try:
        deadline = time.monotonic() + 30
        while len(_children(server.pid)) < 2 or not _ready(url):
            assert server.poll() is None, (tmp_path / "workers.log").read_text()
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
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
        _serve(store, bus, _free_port(), 2),
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode != 0
    assert says in done.stderr
