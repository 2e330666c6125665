"""`parley card|send|get|list|cancel|subscribe`: the real command in a subprocess against a
live Parley server (uvicorn on 127.0.0.1, in a thread) — readable and `--json` output,
both protocol versions and bindings, streams, and every row of the exit-code table.

Subprocesses start in ~0.3 s, so independent commands run side by side (`run_all`).
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.cli.errors import ExitCode
from tests.cli.agents import CHUNKS, EXTENDED, QUESTION, cli_app
from tests.cli.runner import Run, ok, parley, run_all, start
from tests.client.agents import API_KEY, TOKEN
from tests.interop.live import serving
from tests.ports import free_port

ROOT = Path(__file__).parents[2]
MODES = [("1.0", "jsonrpc"), ("1.0", "rest"), ("0.3", "jsonrpc"), ("0.3", "rest")]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(cli_app) as served:
        yield served


@pytest.fixture(scope="module")
def jsonrpc_only_url() -> Iterator[str]:
    """An agent whose card offers JSON-RPC only."""
    with serving(lambda served: cli_app(served, bindings=("JSONRPC",))) as served:
        yield served


# ---------------------------------------------------------------------- the card


def test_card_readable_json_and_extended(url: str) -> None:
    readable, as_json, extended = run_all(
        ["card", url],
        ["card", url, "--json", "--timeout", "5"],
        ["card", url, "--bearer", TOKEN],
    )
    lines = ok(readable).lines
    assert lines[:4] == [
        "CLI tests 0.1.0",
        "Skills for the parley command tests.",
        "provider: Parley https://parley.example",
        "documentation: https://parley.example/docs",
    ]
    assert lines[4:9] == [
        "interfaces:",
        f"  JSONRPC    1.0  {url}",
        f"  HTTP+JSON  1.0  {url}",
        f"  JSONRPC    0.3  {url}",
        f"  HTTP+JSON  0.3  {url}",
    ]
    assert "capabilities: streaming, extended card" in lines
    assert "  echo: Answer with the message's parts." in lines
    assert "    examples: hello" in lines
    assert "  chunks: Say it is thinking, then stream one artifact in chunks." in lines
    card = ok(as_json).json()
    assert card["name"] == "CLI tests"
    assert [i["protocolVersion"] for i in card["supportedInterfaces"]] == [
        "1.0",
        "1.0",
        "0.3",
        "0.3",
    ]
    assert [skill["id"] for skill in card["skills"]][:3] == ["echo", "chunks", "greet"]
    assert ok(extended).lines[0] == f"{EXTENDED} 0.1.0"
    assert TOKEN not in extended.out + extended.err


# ---------------------------------------------------------------------- send


@pytest.mark.parametrize(("version", "binding"), MODES)
def test_send_text_file_and_data(url: str, tmp_path: Path, version: str, binding: str) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"twelve bytes")
    common = [url, "hello", "--file", str(notes), "--data", '{"n": [1, "two"]}']
    common += ["--version", version, "--binding", binding]
    readable, as_json = run_all(["send", *common], ["send", *common, "--json"])
    named = (version, binding) != ("0.3", "rest")  # the 0.3 proto's FilePart has no name
    lines = ok(readable).lines
    assert lines[0].startswith("task ")
    assert lines[1:] == [
        "hello",
        f"[file {'notes.txt' if named else '(unnamed)'} (text/plain), 12 bytes]",
        '{"n":[1,"two"]}',
        "● completed",
    ]
    task = ok(as_json).json()["task"]  # 1.0 wire JSON, whatever version was spoken
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    text, file, data = task["artifacts"][0]["parts"]
    assert text == {"text": "hello"}
    assert (file["raw"], file.get("filename")) == (
        "dHdlbHZlIGJ5dGVz",
        "notes.txt" if named else None,
    )
    assert file["mediaType"] == "text/plain"
    assert data["data"] == {"n": [1, "two"]}


@pytest.mark.parametrize(("version", "binding"), [MODES[0], MODES[3]])
def test_stream_prints_events_in_order(url: str, version: str, binding: str) -> None:
    common = [url, "go", "--skill", "chunks", "--stream", "--version", version]
    common += ["--binding", binding]
    readable, as_json = run_all(["send", *common], ["send", *common, "--json"])
    lines = ok(readable).lines
    assert lines[0].startswith("task ")
    assert lines[1] == "● submitted"
    assert lines.index("● working: thinking") < lines.index("".join(CHUNKS))
    assert lines[-2:] == ["".join(CHUNKS), "● completed"]  # chunks appended on one line
    events = ok(as_json).json_lines()
    kinds = [next(iter(event)) for event in events]
    assert kinds[0] == "task"
    assert kinds[-4:] == ["artifactUpdate"] * 3 + ["statusUpdate"]
    chunks = [event["artifactUpdate"]["artifact"]["parts"][0]["text"] for event in events[-4:-1]]
    assert chunks == list(CHUNKS)
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_conversation_in_one_context(url: str) -> None:
    asked = ok(parley("send", url, "hi", "--skill", "greet", "--context", "ctx-cli", "--json"))
    task = asked.json()["task"]
    assert task["contextId"] == "ctx-cli"
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    readable_ask = ok(parley("get", url, task["id"]))
    assert readable_ask.lines[-1] == f"● input-required: {QUESTION}"
    answered = ok(parley("send", url, "Ada", "--task", task["id"], "--version", "0.3"))
    assert answered.lines[1:] == ["Hello, Ada!", "● completed"]
    history = ok(parley("get", url, task["id"], "--history", "2")).lines
    assert history[1:] == [f"  agent: {QUESTION}", "  user: Ada", "Hello, Ada!", "● completed"]


def test_a_failed_task_exits_1(url: str) -> None:
    readable, as_json, streamed = run_all(
        ["send", url, "x", "--skill", "fail"],
        ["send", url, "x", "--skill", "fail", "--json"],
        ["send", url, "x", "--skill", "fail", "--stream"],
    )
    assert (readable.code, readable.err, readable.lines[-1]) == (1, "", "● failed: boom")
    assert (as_json.code, as_json.json()["task"]["status"]["state"]) == (1, "TASK_STATE_FAILED")
    assert (streamed.code, streamed.lines[-1]) == (1, "● failed: boom")


def test_a_direct_reply_and_credentials(url: str) -> None:
    anonymous, key, header, as_json = run_all(
        ["send", url, "?", "--skill", "whoami"],
        ["send", url, "?", "--skill", "whoami", "--api-key", API_KEY],
        ["send", url, "?", "--skill", "whoami", "--header", f"X-API-Key={API_KEY}"],
        ["send", url, "?", "--skill", "whoami", "--json"],
    )
    assert ok(anonymous).lines == ["anonymous"]
    assert ok(key).lines == ["key-user"]
    assert ok(header).lines == ["key-user"]
    message = ok(as_json).json()["message"]
    assert (message["role"], message["parts"]) == ("ROLE_AGENT", [{"text": "anonymous"}])
    from_env = parley(
        "send", url, "?", "--skill", "whoami", env={"PARLEY_TOKEN": TOKEN, "PARLEY_API_KEY": "x"}
    )
    assert ok(from_env).lines == ["bearer-user"]
    assert TOKEN not in ok(parley("send", "--help")).out


# ---------------------------------------------------------------------- tasks


def test_get_list_subscribe_and_cancel(url: str) -> None:
    started, other = run_all(
        ["send", url, "w", "--skill", "wait", "--no-wait", "--json"],
        ["send", url, "another task, for a second page"],
    )
    task_id = ok(started).json()["task"]["id"]
    ok(other)
    follower = start("subscribe", url, task_id, "--binding", "rest")
    assert follower.stdout.readline().startswith(f"task {task_id}")
    got, listed, listed_json, paged = run_all(
        ["get", url, task_id, "--json", "--version", "0.3"],
        ["list", url, "--state", "working"],
        ["list", url, "--state", "working", "--json", "--binding", "rest"],
        ["list", url, "--page-size", "1"],
    )
    assert ok(got).json()["status"]["state"] == "TASK_STATE_WORKING"
    assert any(line.startswith(f"{task_id}  working") for line in ok(listed).lines)
    assert task_id in [task["id"] for task in ok(listed_json).json()["tasks"]]
    assert ok(paged).lines[-1].startswith("next page: --page-token ")
    canceled = ok(parley("cancel", url, task_id))
    assert canceled.lines[-1] == "● canceled"
    out, err = follower.communicate(timeout=30)
    assert (follower.returncode, err, out.splitlines()[-1]) == (1, "", "● canceled")
    after, after_json = run_all(["get", url, task_id], ["get", url, task_id, "--json"])
    assert (after.code, after.lines[-1]) == (1, "● canceled")
    assert (after_json.code, after_json.json()["id"]) == (1, task_id)
    empty = ok(parley("list", url, "--context", "no-such-context"))
    assert empty.lines == ["no tasks"]


# ---------------------------------------------------------------------- failures


def _one_line(run: Run, code: ExitCode, kind: str, *, as_json: bool = False) -> None:
    assert run.code == code, run
    if as_json:  # the a2a-cli error object on stdout (tests/cli/test_a2a_cli.py)
        assert list(json.loads(run.out)) == ["error"], run
    else:
        assert run.out == ""
    assert run.err.count("\n") == 1, run.err
    assert run.err.startswith(f"parley: {kind}: "), run.err


def test_every_failure_is_one_line_and_its_exit_code(url: str, jsonrpc_only_url: str) -> None:
    done = ok(parley("send", url, "x", "--json")).json()["task"]["id"]
    unreachable = f"http://127.0.0.1:{free_port()}"
    rows: list[tuple[list[str], ExitCode, str]] = [
        (["card", unreachable], ExitCode.CONNECTION, "connection"),
        (
            ["send", url, "2", "--skill", "sleep", "--timeout", "0.3"],
            ExitCode.CONNECTION,
            "timeout",
        ),
        (["card", "ftp://agent.example"], ExitCode.USAGE, "usage"),
        (["send", url, "--data", "{bad"], ExitCode.USAGE, "usage"),
        (["send", url, "x", "--file", "no/such/file"], ExitCode.USAGE, "usage"),
        (["send", url, "x", "--header", "nameonly"], ExitCode.USAGE, "usage"),
        (["send", url, "x", "--stream", "--no-wait"], ExitCode.USAGE, "usage"),
        (["send", url], ExitCode.USAGE, "usage"),
        (["get", url, "x", "--history", "many"], ExitCode.USAGE, "usage"),
        (["nosuchcommand"], ExitCode.USAGE, "usage"),
        (["get", url, "no-such-task"], ExitCode.AGENT_ERROR, "task not found"),
        (["cancel", url, done, "--binding", "rest"], ExitCode.AGENT_ERROR, "task not cancelable"),
        (["list", url, "--version", "0.3"], ExitCode.AGENT_ERROR, "method not found"),
        (["card", f"{url}/elsewhere.json"], ExitCode.PROTOCOL, "protocol"),
        (
            ["get", jsonrpc_only_url, "x", "--binding", "rest"],
            ExitCode.PROTOCOL,
            "no compatible interface",
        ),
    ]
    commands = [command for command, _, _ in rows]
    answered = [row for row in rows if row[1] != ExitCode.USAGE]  # --json changes no usage
    runs = run_all(*commands, *[[*command, "--json"] for command, _, _ in answered])
    for index, ((command, code, kind), run) in enumerate(zip(rows + answered, runs, strict=True)):
        assert "Traceback" not in run.err, command
        _one_line(run, code, kind, as_json=index >= len(rows))


def test_ctrl_c_exits_130_quietly(url: str) -> None:
    # Started as a shell starts a command in the foreground: a test run launched in the
    # background (`cmd &` without job control) ignores SIGINT, and children inherit that.
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = start("send", url, "w", "--skill", "wait", "--stream")
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    header = process.stdout.readline()
    assert process.stdout.readline() == "● submitted\n"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert (process.returncode, err) == (ExitCode.INTERRUPTED, "")
    ok(parley("cancel", url, header.split()[1]))


def test_closed_output_exits_141_quietly(url: str) -> None:
    process = start("list", url)
    process.stdout.close()  # before the command could write anything
    with process.stderr:
        assert process.wait(timeout=30) == ExitCode.PIPE_CLOSED
        assert process.stderr.read() == ""


def test_help_documents_every_exit_code() -> None:
    helped = ok(parley("--help"))
    documented = (ROOT / "docs" / "cli.md").read_text()
    for code in ExitCode:
        assert f"\n  {code.value:<4} " in helped.out, code
        assert f"\n| {code.value} |" in documented, code


def test_spinner_only_on_a_terminal(url: str) -> None:
    """On a terminal, stderr shows a spinner while waiting, then erases it."""
    leader, follower = pty.openpty()
    seen = b""
    try:
        process = start("send", url, "0.5", "--skill", "sleep", stderr=follower)
        os.close(follower)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if select.select([leader], [], [], 0.05)[0]:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:  # the terminal closed with the process
                    break
                seen += chunk
            elif process.poll() is not None:
                break
        out, _ = process.communicate(timeout=30)
    finally:
        os.close(leader)
    assert process.returncode == 0
    assert out.splitlines()[-2:] == ["awake", "● completed"]
    screen = seen.decode()
    assert "waiting for the agent" in screen
    assert screen.endswith("\r\x1b[K")  # the spinner's line is erased at the end
