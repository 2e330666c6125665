"""`parley serve --reload`: the agent's module changed on disk is served anew, from the
same command line; with --workers it is refused."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest

from parley.cli.main import build_parser
from parley.cli.serve import run_serve
from tests.cli.runner import PARLEY
from tests.cli.test_serve_hosts import _wait_until_up
from tests.ports import free_port

AGENT = 'from parley.server.agent import Agent\nagent = Agent("{name}")\n'


def _name(url: str) -> str | None:
    try:
        name: str = httpx.get(url + "/.well-known/agent-card.json", timeout=2).json()["name"]
    except httpx.TransportError:
        return None
    return name


def test_a_changed_module_is_served_anew(tmp_path: Path) -> None:
    (tmp_path / "reloaded_agent.py").write_text(AGENT.format(name="Before"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [*PARLEY, "serve", "reloaded_agent", "--reload", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--store", "memory"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_until_up(url, process)
        before = _name(url)
        # The reloader starts watching a moment after the server is up, so a change
        # written in between goes unseen: the test writes the change again each second.
        deadline = time.monotonic() + 30
        written = 0.0
        while (after := _name(url)) != "After" and time.monotonic() < deadline:
            if time.monotonic() - written >= 1:
                (tmp_path / "reloaded_agent.py").write_text(AGENT.format(name="After"))
                written = time.monotonic()
            time.sleep(0.1)
    finally:
        process.terminate()
        _, log = process.communicate(timeout=30)
    assert (before, after) == ("Before", "After"), log
    assert "Traceback" not in log


def test_reload_is_one_process() -> None:
    arguments = build_parser().parse_args(
        ["serve", "examples.echo:agent", "--reload", "--workers", "2", "--bus", "redis://x"]
    )
    arguments.argv = []
    arguments.port = free_port()
    with pytest.raises(SystemExit, match="--reload runs one process"):
        run_serve(arguments)
