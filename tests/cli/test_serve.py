"""`parley serve`: the real command in a subprocess, from start to a graceful stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from parley.cli.serve import load_target, make_app

ROOT = Path(__file__).parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_card(url: str, process: subprocess.Popen[bytes]) -> httpx.Response:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            return httpx.get(url + "/.well-known/agent-card.json", timeout=1)
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


def test_serve_answers_and_stops_gracefully() -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "parley.cli.main", "serve", "examples.echo:agent"]
    command += ["--port", str(port), "--log-level", "info", "--store", "memory"]
    with subprocess.Popen(
        command, cwd=ROOT, stderr=subprocess.PIPE, env=os.environ.copy()
    ) as process:
        code = _exercise(url, process)
        log = process.stderr.read().decode() if process.stderr else ""
    # uvicorn shuts down gracefully, then re-raises the signal as its exit status.
    assert code in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in log


def _exercise(url: str, process: subprocess.Popen[bytes]) -> int:
    try:
        card = _wait_for_card(url, process).json()
        assert card["name"] == "Echo"
        assert card["supportedInterfaces"][0]["url"] == url
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            },
        }
        answer = httpx.post(url, json=body, headers={"A2A-Version": "1.0"}, timeout=5).json()
        task = answer["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [{"text": "hi"}]
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=20)
    return code


@pytest.mark.parametrize("spec", ["nocolon", "examples.echo:missing", "no_such_module:agent"])
def test_bad_targets_give_one_clear_line(spec: str) -> None:
    with pytest.raises(SystemExit) as raised:
        load_target(spec)
    assert str(raised.value).startswith("parley serve:")


def test_an_asgi_app_is_served_as_is() -> None:
    async def app(scope: object, receive: object, send: object) -> None:
        return None

    assert make_app(app, "http://x", "hybrid") is app
