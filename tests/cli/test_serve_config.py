"""`parley serve --config parley.toml`: options from a file, secrets from the environment,
the command line winning; every mistake in the file named in one line."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

import httpx
import pytest

from parley.cli.config import apply_config
from parley.cli.main import build_parser
from parley.cli.serve import _PARSERS, run_serve
from tests.cli.runner import start
from tests.cli.test_serve_hosts import SEND, V1, _wait_until_up
from tests.ports import free_port


def configured(tmp_path: Path, text: str, *flags: str) -> argparse.Namespace:
    path = tmp_path / "parley.toml"
    path.write_text(text)
    arguments = build_parser().parse_args(["serve", *flags, "--config", str(path)])
    apply_config(arguments, _PARSERS[-1])
    return arguments


def test_options_come_from_the_file_and_flags_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLING_KEY", "k-7f3a:billing")
    text = """
target = ["echo=examples.echo:agent", "counter=examples.streaming:agent"]
port = 8081
host = "0.0.0.0"
api-key = [{ env = "BILLING_KEY" }, "k-19be:audit"]
allow-anonymous = true
allowed-host = "agent.example"
card = "v1"
"""
    arguments = configured(tmp_path, text, "--port", "9000")
    assert arguments.target == ["echo=examples.echo:agent", "counter=examples.streaming:agent"]
    assert arguments.port == 9000  # the flag
    assert arguments.host == "0.0.0.0"
    assert arguments.api_key == ["k-7f3a:billing", "k-19be:audit"]
    assert arguments.allow_anonymous is True
    assert arguments.allowed_hosts == ["agent.example"]
    assert arguments.card == "v1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prot = 80", "unknown key 'prot'"),
        ('port = "eighty"', "port: invalid literal"),
        ("allow-anonymous = 1", "allow-anonymous: expected true or false"),
        ("port = [1, 2]", "port: expected one value, not a list"),
        ('card = "v2"', "card: expected one of hybrid, v1"),
        ('api-key = [{ env = "PARLEY_TEST_UNSET" }]', "PARLEY_TEST_UNSET is not set"),
        ('api-key = [{ file = "x" }]', 'must be { env = "NAME" }'),
        ("port = {", "--config"),
    ],
)
def test_mistakes_in_the_file_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        configured(tmp_path, text)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    arguments = build_parser().parse_args(["serve", "--config", str(tmp_path / "none.toml")])
    with pytest.raises(SystemExit, match=r"none\.toml"):
        apply_config(arguments, _PARSERS[-1])


def test_serve_from_a_config_file_with_a_key_from_the_environment(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config = tmp_path / "parley.toml"
    config.write_text(
        f'target = "examples.echo:agent"\nport = {port}\nstore = "memory"\n'
        'log-level = "warning"\napi-key = [{ env = "AGENT_KEY" }]\n'
    )
    process = start("serve", "--config", str(config), env={"AGENT_KEY": "k-env:alice"})
    try:
        _wait_until_up(url, process)
        refused = httpx.post(url, json=SEND, headers=V1, timeout=5)
        answered = httpx.post(url, json=SEND, headers={**V1, "X-API-Key": "k-env"}, timeout=5)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    assert refused.status_code == 401
    assert answered.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--bearer-tokens", "/nonexistent/tokens"], r"^parley serve: --bearer-tokens: .*No such"),
        (["--api-key", "no-principal"], r"^parley serve: --api-key: expected KEY:PRINCIPAL"),
        (["--allow-anonymous"], r"--allow-anonymous needs --api-key"),
        (["--shared-tasks"], r"--shared-tasks needs --api-key"),
    ],
)
def test_bad_security_options_are_one_line_naming_the_option(
    flags: list[str], message: str
) -> None:
    arguments = build_parser().parse_args(["serve", "examples.echo:agent", *flags])
    with pytest.raises(SystemExit, match=message):
        run_serve(arguments)
