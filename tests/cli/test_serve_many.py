"""`parley serve echo=… counter=…`: several agents on one server, as a user starts them —
one SQLite file in the current folder, an API key — each found through its own card by
`parley send`, keeping its own tasks; and the forms that cannot work, refused in one line."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from parley.cli.main import build_parser
from parley.cli.serve import run_serve
from parley.cli.targets import named_targets
from tests.cli.runner import Run, run_all, start
from tests.cli.test_serve_hosts import _wait_until_up
from tests.ports import free_port


def run_cli(*arguments: str) -> Run:
    return run_all(list(arguments))[0]


def test_two_agents_share_a_store_but_not_their_tasks(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    store = f"sqlite:///{tmp_path / 'parley.db'}"
    options = ("--port", str(port), "--store", store, "--log-level", "warning")
    keys = ("--api-key", "k-1:alice")
    agents = ("echo=examples.echo:agent", "counter=examples.streaming:agent")
    process: subprocess.Popen[str] = start("serve", *agents, *options, *keys)
    try:
        _wait_until_up(url, process)
        index = httpx.get(url + "/").json()
        card = httpx.get(url + "/counter/.well-known/agent-card.json").json()
        echoed = run_cli("send", url + "/echo", "hello", "--api-key", "k-1", "--json")
        counted = run_cli("send", url + "/counter", "3", "--api-key", "k-1", "--json")
        echo_task = json.loads(echoed.out)["task"]["id"]
        on_counter = run_cli("get", url + "/counter", echo_task, "--api-key", "k-1")
        listed = run_cli("list", url + "/counter", "--api-key", "k-1", "--json")
        refused = run_cli("send", url + "/echo", "hello")
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    assert [a["name"] for a in index["agents"]] == ["echo", "counter"]
    assert card["name"] == "Counter"
    assert {i["url"] for i in card["supportedInterfaces"]} == {url + "/counter"}
    assert list(card["securitySchemes"]) == ["apiKey"]
    assert echoed.code == 0
    assert counted.code == 0
    assert on_counter.code != 0
    assert "not found" in on_counter.err.lower()
    assert echo_task not in listed.out
    assert refused.code != 0
    assert "unauthenticated" in refused.err.lower()


@pytest.mark.parametrize(
    ("targets", "message"),
    [
        (["echo=examples.echo:agent", "examples.streaming:agent"], "NAME=module:attribute"),
        (["Echo=examples.echo:agent"], "lower-case letters"),
        (["a=examples.echo:agent", "a=examples.streaming:agent"], "two agents are named 'a'"),
    ],
)
def test_targets_that_cannot_be_named_are_refused(targets: list[str], message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        named_targets(targets)


def test_one_unnamed_target_is_the_single_agent_form() -> None:
    assert named_targets(["examples.echo:agent"]) is None
    assert named_targets(["echo=examples.echo:agent"]) == {"echo": "examples.echo:agent"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--grpc-port", "50999"], "--grpc-port serves one agent"),
        (["--namespace", "x"], "each one's namespace is its NAME"),
        ([], "is not an Agent"),
    ],
)
def test_several_agents_refuse_what_they_cannot_do(extra: list[str], message: str) -> None:
    second = "other=tests.cli.test_serve:asgi_app" if not extra else "b=examples.echo:agent"
    arguments = build_parser().parse_args(
        ["serve", "a=examples.echo:agent", second, "--port", str(free_port()), *extra]
    )
    with pytest.raises(SystemExit, match=message):
        run_serve(arguments)
