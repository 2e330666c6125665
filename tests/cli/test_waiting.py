"""Long tasks from the command line (`parley.cli.waiting`): a blocking `parley send` shows
the time spent and the task's id while it waits, and on Ctrl-C or past `--timeout` names
the task and the command that picks it up again; `parley get --wait` follows a task to
its end.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import time
from collections.abc import Callable, Iterator

import pytest

from parley.cli.errors import ExitCode
from parley.cli.spinner import Progress
from tests.cli.agents import cli_app
from tests.cli.runner import ok, parley, start
from tests.interop.live import serving

TASK_ID = re.compile(r"task ([0-9a-f-]{36})")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(cli_app) as served:
        yield served


def test_the_progress_line_tells_the_time_spent_and_the_task() -> None:
    progress = Progress("waiting for the agent", started=100.0)
    assert progress.line(now=100.5) == "waiting for the agent"
    progress.task_id = "t-1"
    assert progress.line(now=112.9) == "waiting for the agent · 12 s · task t-1"


def test_ctrl_c_on_a_blocking_send_names_the_task_and_the_command_that_resumes_it(
    url: str,
) -> None:
    """The spinner's line shows the task's id (the send streams under the hood); Ctrl-C
    erases it, prints the task and `parley get … --wait`, and exits 130."""
    leader, follower = pty.openpty()
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:  # as a foreground shell starts it (see test_ctrl_c_exits_130_quietly)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = start("send", url, "w", "--skill", "wait", stderr=follower)
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.close(follower)
    try:
        screen = _read_until(leader, lambda seen: TASK_ID.search(seen) is not None)
        match = TASK_ID.search(screen)
        assert match is not None, screen
        task_id = match.group(1)
        process.send_signal(signal.SIGINT)
        screen += _read_until(leader, lambda seen: seen.endswith("--wait\r\n"))
        out, _ = process.communicate(timeout=30)
    finally:
        os.close(leader)
    assert process.returncode == ExitCode.INTERRUPTED
    assert out == ""
    assert "waiting for the agent" in screen
    last = screen.rsplit("\x1b[K", 1)[1]
    assert last == f"task {task_id} is still running: parley get {url} {task_id} --wait\r\n"
    ok(parley("cancel", url, task_id))


def test_past_the_timeout_the_task_is_named_and_can_be_waited_for_again(url: str) -> None:
    sent = parley("send", url, "w", "--skill", "wait", "--timeout", "0.5")
    assert sent.code == ExitCode.CONNECTION
    match = TASK_ID.search(sent.err)
    assert match is not None, sent
    task_id = match.group(1)
    assert sent.err == (
        "parley: timeout: No answer within the deadline of 0.5 s; "
        f"task {task_id} is still running: parley get {url} {task_id} --wait\n"
    )
    again = parley("get", url, task_id, "--wait", "--timeout", "0.3")
    assert again.code == ExitCode.CONNECTION
    assert f"task {task_id} is still running" in again.err
    assert ok(parley("cancel", url, task_id)).lines[-1] == "● canceled"


def test_get_wait_follows_a_task_to_its_end(url: str) -> None:
    started = ok(parley("send", url, "0.3", "--skill", "sleep", "--no-wait", "--json"))
    task_id = started.json()["task"]["id"]
    assert ok(parley("get", url, task_id, "--wait")).lines[-2:] == ["awake", "● completed"]


def test_a_blocking_send_of_a_question_stops_at_the_question(url: str) -> None:
    asked = ok(parley("send", url, "hi", "--skill", "greet"))
    assert asked.lines[-1] == "● input-required: What is your name?"


def _read_until(leader: int, done: Callable[[str], bool], timeout: float = 30) -> str:
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([leader], [], [], 0.05)[0]:
            try:
                seen += os.read(leader, 4096)
            except OSError:
                break
            if done(seen.decode(errors="replace")):
                break
    return seen.decode(errors="replace")
