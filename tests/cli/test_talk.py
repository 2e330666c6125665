"""`parley.cli.talk.execute`, the error table and the argument types, in-process: the
paths a subprocess cannot show coverage of (an interrupt, a closed pipe, a bug)."""

from __future__ import annotations

import argparse
import asyncio
import os

import pytest

from parley.cli.errors import ExitCode, classify
from parley.cli.options import Credentials, count, positive_count, seconds
from parley.cli.output import Output
from parley.cli.talk import _state_of, execute, outcome
from parley.client import APIKeyAuth, BearerAuth, ClientProtocolError, Reconnected
from parley.model import Message, Role, Task, TaskState, TaskStatus
from parley.protocol.errors import UnsupportedOperationError

READABLE = argparse.Namespace(json=False)


def test_an_interrupt_exits_130() -> None:
    async def interrupted(arguments: argparse.Namespace, output: Output) -> int:
        raise KeyboardInterrupt

    assert execute(interrupted, READABLE) == ExitCode.INTERRUPTED


def test_a_closed_pipe_exits_141_and_silences_the_rest() -> None:
    reader, writer = os.pipe()
    os.close(reader)
    with os.fdopen(writer, "w") as out:

        async def talkative(arguments: argparse.Namespace, output: Output) -> int:
            output.out.write("hello\n")
            output.out.flush()
            return 0

        assert execute(talkative, READABLE, Output(as_json=False, out=out)) == 141
        out.write("more")  # now goes to /dev/null


def test_a_bug_is_not_disguised(capsys: pytest.CaptureFixture[str]) -> None:
    async def buggy(arguments: argparse.Namespace, output: Output) -> int:
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError, match="a bug"):
        execute(buggy, READABLE)
    assert capsys.readouterr().err == ""


def test_every_error_kind() -> None:
    assert classify(ClientProtocolError("HTTP 401")) == (ExitCode.PROTOCOL, "protocol")
    assert classify(UnsupportedOperationError()) == (
        ExitCode.AGENT_ERROR,
        "unsupported operation",
    )
    assert classify(ValueError("bug")) is None


def test_the_state_a_stream_item_tells() -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.CANCELED))
    assert _state_of(Reconnected(task, "gone")) is TaskState.CANCELED
    assert _state_of(Reconnected(None, "dropped")) is None
    assert _state_of(Message(message_id="m", role=Role.AGENT, parts=())) is None


def test_outcome_of_each_state() -> None:
    unsuccessful = {TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED}
    for state in TaskState:
        expected = ExitCode.TASK_UNSUCCESSFUL if state in unsuccessful else ExitCode.OK
        assert outcome(state) == expected, state
    assert outcome(None) == ExitCode.OK


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (count, "-1"),
        (count, "2.5"),
        (positive_count, "0"),
        (seconds, "0"),
        (seconds, "-1"),
        (seconds, "soon"),
        (seconds, "nan"),
        (seconds, "inf"),
    ],
)
def test_bad_numbers_are_usage_errors(parse: object, text: str) -> None:
    assert callable(parse)
    with pytest.raises(argparse.ArgumentTypeError):
        parse(text)


def test_numbers() -> None:
    assert (count("0"), positive_count("3"), seconds("1.5")) == (0, 3, 1.5)


def test_an_api_key_and_a_token_together() -> None:
    both = Credentials([APIKeyAuth("k"), BearerAuth("t")])
    headers = asyncio.run(both.headers())
    assert headers == {"X-API-Key": "k", "Authorization": "Bearer t"}
