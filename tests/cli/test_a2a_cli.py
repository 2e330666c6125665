"""The a2a-cli specification's names (`parley task get`, `card get`, `conformance`,
`--task-id`, `--async`, ...), its JSON error object, and `parley completion SHELL`."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.cli.a2a_cli import translate
from parley.cli.errors import ExitCode
from parley.cli.main import build_parser
from tests.cli.agents import cli_app
from tests.cli.runner import Run, ok, parley
from tests.interop.live import serving
from tests.ports import free_port


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(cli_app) as served:
        yield served


@pytest.mark.parametrize(
    ("given", "read"),
    [
        (["task", "get", "U", "T", "--json"], ["get", "U", "T", "--json"]),
        (["task", "cancel", "U", "T"], ["cancel", "U", "T"]),
        (["task", "list", "U"], ["list", "U"]),
        (["task", "subscribe", "U", "T"], ["subscribe", "U", "T"]),
        (["task", "download", "U", "T"], ["get", "U", "T", "--output", "."]),
        (["task", "download", "U", "T", "-o", "d"], ["get", "U", "T", "-o", "d"]),
        (["task", "download", "U", "T", "--output=d"], ["get", "U", "T", "--output=d"]),
        (["card", "get", "U"], ["card", "U"]),
        (["card", "U"], ["card", "U"]),  # Parley's own spellings are left alone
        (["get", "U", "task"], ["get", "U", "task"]),
        (["task", "nonsense", "U"], ["task", "nonsense", "U"]),  # refused by the parser
    ],
)
def test_a2a_cli_spellings_are_read_as_parley_commands(given: list[str], read: list[str]) -> None:
    assert translate(given) == read


def test_conformance_is_check() -> None:
    parser = build_parser()
    check = parser.parse_args(["check", "http://a.example"])
    conformance = parser.parse_args(["conformance", "http://a.example"])
    assert conformance.run is check.run


def test_the_task_commands_and_option_aliases_against_an_agent(url: str, tmp_path: Path) -> None:
    card = ok(parley("card", "get", url, "--json")).json()
    assert card["name"] == "CLI tests"
    context = ok(parley("send", url, "first", "--json")).json()["task"]["contextId"]
    sent = ok(
        parley(
            "send",
            url,
            "hold",
            "--skill",
            "wait",
            "--context-id",
            context,
            "--async",
            "--a2a-version",
            "1.0",
            "--transport",
            "rest",
            "--json",
        )
    ).json()["task"]
    assert sent["contextId"] == context
    task_id = sent["id"]
    listed = ok(parley("task", "list", url, "--context-id", context, "--json")).json()
    assert task_id in [task["id"] for task in listed["tasks"]]
    got = ok(parley("task", "get", url, task_id, "--json")).json()
    assert (got["id"], got["contextId"]) == (task_id, context)
    canceled = ok(parley("task", "cancel", url, task_id, "--json")).json()
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert parley("task", "get", url, task_id, "--watch").lines[-1] == "● canceled"

    source = tmp_path / "notes.txt"
    source.write_text("one\ntwo\n")
    echoed = ok(parley("send", url, "--file", str(source), "--json")).json()["task"]["id"]
    asking = ok(parley("send", url, "hi", "--skill", "greet", "--json")).json()["task"]["id"]
    answered = ok(parley("send", url, "Ada", "--task-id", asking))
    assert answered.lines[-1] == "● completed"
    assert "Hello, Ada!" in answered.lines
    out = tmp_path / "saved"
    downloaded = parley("task", "download", url, echoed, "-o", str(out))
    assert downloaded.err == f"saved {out / 'notes.txt'} (8 bytes)\n", downloaded
    assert (out / "notes.txt").read_text() == "one\ntwo\n"


def _error(run: Run) -> dict[str, object]:
    """The error object on stdout, beside the one line on stderr."""
    assert run.err.count("\n") == 1, run
    assert run.err.startswith("parley: "), run
    document = json.loads(run.out)
    assert list(document) == ["error"]
    error: dict[str, object] = document["error"]
    assert sorted(error) == ["a2aCode", "code", "hint", "message"]
    return error


def test_with_json_a_failure_is_also_the_a2a_cli_error_object(url: str) -> None:
    missing = parley("task", "get", url, "no-such-task", "--json")
    assert missing.code == ExitCode.AGENT_ERROR
    error = _error(missing)
    assert (error["code"], error["a2aCode"]) == ("TaskNotFoundError", -32001)
    unreachable = parley("card", "get", f"http://127.0.0.1:{free_port()}", "--json")
    assert unreachable.code == ExitCode.CONNECTION
    assert _error(unreachable)["code"] == "A2ACLI_ERR_UNREACHABLE"
    slow = parley("send", url, "2", "--skill", "sleep", "--timeout", "0.3", "--json")
    assert (slow.code, _error(slow)["code"]) == (ExitCode.CONNECTION, "A2ACLI_ERR_TIMEOUT")
    plain = parley("task", "get", url, "no-such-task")
    assert (plain.code, plain.out) == (ExitCode.AGENT_ERROR, "")


def test_an_unknown_task_operation_is_a_usage_error() -> None:
    run = parley("task", "fetch", "http://a.example", "T")
    assert run.code == ExitCode.USAGE
    assert run.err.startswith("parley: usage: argument OPERATION: invalid choice: 'fetch'")


def test_bash_completion_completes_commands_and_options(tmp_path: Path) -> None:
    script = tmp_path / "parley.bash"
    script.write_text(ok(parley("completion", "bash")).out)
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    probe = f"""
source {script}
complete -p parley
complete_line() {{ COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"
  COMP_POINT=${{#COMP_LINE}}; COMPREPLY=(); _shtab_parley; echo "${{COMPREPLY[*]}}"; }}
complete_line parley ta
complete_line parley task ''
complete_line parley send --no
complete_line parley completion ''
"""
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "complete -o bashdefault -F _shtab_parley parley",
        "task",
        "get cancel list subscribe download",
        "--no-wait",
        "bash zsh fish tcsh",
    ]


@pytest.mark.parametrize("shell", ["zsh", "fish", "tcsh"])
def test_other_shells_scripts_name_every_command(shell: str) -> None:
    text = ok(parley("completion", shell)).out
    for command in ("serve", "send", "task", "card", "conformance", "completion", "skill"):
        assert command in text, (shell, command)


def test_an_unknown_shell_is_a_usage_error() -> None:
    run = parley("completion", "ksh")
    assert (run.code, run.out) == (ExitCode.USAGE, "")
