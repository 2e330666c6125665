"""`--binding grpc`: the real `parley` command against a real `parley serve --grpc-port`,
in both protocol versions (the card names a bare `host:port` for both; the client also
dials the `grpc://host:port` older Parley servers listed for 0.3)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.cli.runner import ROOT, parley
from tests.ports import free_port
from tests.serving import wait_for_card


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port, grpc_port = free_port(), free_port()
    command = [sys.executable, "-m", "parley.cli", "serve", "examples.streaming:agent"]
    command += ["--port", str(port), "--grpc-port", str(grpc_port), "--store", "memory"]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
    address = f"http://127.0.0.1:{port}"
    try:
        wait_for_card(address, process)
        yield address
    finally:
        process.terminate()
        process.wait(20)


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_send_stream_and_get_over_grpc(url: str, version: str) -> None:
    common = ["--binding", "grpc", "--version", version]
    sent = parley("send", url, "3", *common, "--json")
    assert sent.code == 0, sent.err
    task = sent.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [p["text"] for p in task["artifacts"][0]["parts"]] == ["1 ", "2 ", "3 "]
    streamed = parley("send", url, "2", "--stream", *common)
    assert streamed.code == 0, streamed.err
    assert "1 2 " in streamed.out
    assert streamed.lines[-1] == "● completed"
    fetched = parley("get", url, task["id"], *common, "--json")
    assert fetched.code == 0, fetched.err
    assert fetched.json()["id"] == task["id"]
    missing = parley("get", url, "no-such-task", *common)
    assert (missing.code, missing.out) == (4, "")
    assert missing.err.splitlines() == ["parley: task not found: Task no-such-task not found"]
