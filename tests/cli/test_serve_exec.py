"""`parley serve --exec 'CMD ARGS'`: a command served as an agent by the real command, on
loopback only unless `--exec-allow-remote`, and never beside a target."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from parley import Client, Task
from parley.model import TaskState
from tests.cli.runner import parley, start
from tests.cli.test_serve import _wait_for_card
from tests.contracts.support import run
from tests.ports import free_port


def test_a_command_is_served_as_an_agent() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = shlex.join([sys.executable, "-c", "import sys; print(sys.stdin.read()[::-1])"])
    options = ("--port", str(port), "--exec-timeout", "30", "--store", "memory")
    process = start("serve", "--exec", command, *options)
    try:
        card = _wait_for_card(url, process).json()

        async def send() -> Task:
            async with await Client.connect(url) as client:
                task = await client.send("stressed")
                assert isinstance(task, Task)
                return task

        task = run(send())
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert card["skills"][0]["id"] == "run"
    assert card["name"].startswith("python")
    assert (task.status.state, task.text) == (TaskState.COMPLETED, "desserts\n")


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--host", "0.0.0.0"], "listens on loopback only, not '0.0.0.0'"),
        (["examples.echo:agent"], "--exec serves a command; name no target besides"),
        (["--exec-concurrency", "0"], "--exec-concurrency"),
    ],
)
def test_exec_refuses_what_would_expose_or_confuse_it(arguments: list[str], said: str) -> None:
    result = parley("serve", "--exec", "cat", "--port", str(free_port()), *arguments)
    assert result.code != 0
    assert said in result.err


def test_exec_listens_elsewhere_when_told() -> None:
    port = free_port()
    options = ("--host", "0.0.0.0", "--port", str(port), "--exec-allow-remote", "--store", "memory")
    process = start("serve", "--exec", "cat", *options)
    try:
        card = _wait_for_card(f"http://127.0.0.1:{port}", process)
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert card.json()["name"] == "cat"


def test_the_help_says_it_is_dangerous() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "parley.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DANGEROUS" in out
