"""`parley chat URL` (`parley.cli.chat`): a line of input per message; while the task asks
for input the next line answers it, after it ends the next line starts a new task in the
same context."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator

import pytest

from parley.cli.errors import ExitCode
from tests.cli.agents import QUESTION, cli_app
from tests.cli.runner import ok, parley, start
from tests.interop.live import serving


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(cli_app) as served:
        yield served


def test_a_conversation_answers_questions_and_keeps_its_context(url: str) -> None:
    context = f"chat-{uuid.uuid4().hex[:8]}"
    process = start("chat", url, "--skill", "greet", "--context", context, stdin=subprocess.PIPE)
    out, err = process.communicate("hi\nAda\n\nagain\n", timeout=60)
    assert (process.returncode, err) == (ExitCode.OK, "")
    assert out.splitlines() == [
        f"● input-required: {QUESTION}",
        "Hello, Ada!",
        "● completed",
        f"● input-required: {QUESTION}",
    ]
    listed = ok(parley("list", url, "--context", context)).lines
    assert listed[-1] == "2 of 2 tasks"
    assert sorted(line.split()[1] for line in listed[:2]) == ["completed", "input-required"]


def test_quit_ends_the_conversation_with_the_last_tasks_status(url: str) -> None:
    process = start("chat", url, "--skill", "fail", stdin=subprocess.PIPE)
    out, err = process.communicate("go\n/quit\nnever sent\n", timeout=60)
    assert (process.returncode, err) == (ExitCode.TASK_UNSUCCESSFUL, "")
    assert out.splitlines() == ["● failed: boom"]
