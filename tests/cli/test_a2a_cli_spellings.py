"""The a2a-cli specification's spellings in-process (`parley.cli.a2a_cli`, docs/cli.md "The
a2a-cli specification"): every alias parses to what Parley's own option gives; the command
rewriting leaves every other command line alone and gives `task download` a folder unless
one is named; the JSON error object for each kind of failure, with the A2A error's name and
JSON-RPC code (REFERENCE §6: the error table). The commands against an agent, as processes,
are in test_a2a_cli.py."""

from __future__ import annotations

import argparse
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.cli.a2a_cli import TASK_OPERATIONS, error_envelope, error_line, translate
from parley.cli.errors import UsageError
from parley.cli.main import build_parser
from parley.client import (
    ClientConnectionError,
    ClientProtocolError,
    ClientTimeoutError,
    NoCompatibleInterfaceError,
    StreamIdleError,
)
from parley.protocol import errors as e
from parley.wire.errors import ERROR_TABLE, spec_of


def parsed(argv: list[str]) -> dict[str, object]:
    line = translate(argv)
    arguments: argparse.Namespace = build_parser(line[0]).parse_args(line)
    found = vars(arguments)
    found.pop("run")
    return found


@pytest.mark.parametrize(
    ("theirs", "ours"),
    [
        (
            ["send", "http://a", "hi", "--task-id", "t", "--context-id", "c"],
            ["send", "http://a", "hi", "--task", "t", "--context", "c"],
        ),
        (["send", "http://a", "hi", "--async"], ["send", "http://a", "hi", "--no-wait"]),
        (
            ["send", "http://a", "hi", "--return-immediately"],
            ["send", "http://a", "hi", "--no-wait"],
        ),
        (
            ["send", "http://a", "hi", "--a2a-version", "0.3", "--transport", "rest"],
            ["send", "http://a", "hi", "--version", "0.3", "--binding", "rest"],
        ),
        (["task", "get", "http://a", "t1", "--watch"], ["get", "http://a", "t1", "--wait"]),
        (["task", "cancel", "http://a", "t1"], ["cancel", "http://a", "t1"]),
        (["task", "list", "http://a"], ["list", "http://a"]),
        (["task", "subscribe", "http://a", "t1"], ["subscribe", "http://a", "t1"]),
        (["task", "download", "http://a", "t1"], ["get", "http://a", "t1", "-o", "."]),
        (["card", "get", "http://a", "--json"], ["card", "http://a", "--json"]),
        (["conformance", "http://a", "--only", "card."], ["check", "http://a", "--only", "card."]),
    ],
    ids=lambda argv: " ".join(argv[:3]),
)
def test_each_a2a_cli_spelling_is_parleys_command(theirs: list[str], ours: list[str]) -> None:
    theirs_read, ours_read = parsed(theirs), parsed(ours)
    theirs_read.pop("command")
    ours_read.pop("command")
    assert theirs_read == ours_read


@pytest.mark.parametrize(
    ("argv", "read"),
    [
        (["task", "download", "U", "T", "-o", "d"], ["get", "U", "T", "-o", "d"]),
        (["task", "download", "U", "T", "-od"], ["get", "U", "T", "-od"]),
        (["task", "download", "U", "T", "--output", "d"], ["get", "U", "T", "--output", "d"]),
        (["task", "download", "U", "T", "--output=d"], ["get", "U", "T", "--output=d"]),
        (["task", "download", "U", "T"], ["get", "U", "T", "--output", "."]),
    ],
)
def test_task_download_saves_into_the_folder_named_else_the_current_one(
    argv: list[str], read: list[str]
) -> None:
    assert translate(argv) == read


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["task"],
        ["task", "push-config", "U"],
        ["card"],
        ["card", "get"],
        ["card", "U"],
        ["send", "task", "get"],
        ["serve", "m:a"],
        ["get", "U", "card", "get"],
    ],
)
def test_anything_else_is_left_as_it_is(argv: list[str]) -> None:
    assert translate(argv) == argv


words = st.lists(
    st.sampled_from(["task", "card", "get", "U", "T", "-o", "x", "--json"]), max_size=6
)


@given(words)
def test_translating_is_done_once(argv: list[str]) -> None:
    """A translated line is Parley's own: translating it again changes nothing, and its
    first word is a Parley command unless the line was left as it was."""
    once = translate(argv)
    assert translate(once) == once or once[:1] == ["card"]
    if once != argv:
        assert once[0] in {*TASK_OPERATIONS.values(), "card"}


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (UsageError("nothing to send"), "A2ACLI_ERR_USAGE"),
        (ImportError("needs the grpc extra"), "A2ACLI_ERR_USAGE"),
        (ClientTimeoutError("slow"), "A2ACLI_ERR_TIMEOUT"),
        (StreamIdleError("silent"), "A2ACLI_ERR_TIMEOUT"),
        (ClientConnectionError("refused"), "A2ACLI_ERR_UNREACHABLE"),
        (NoCompatibleInterfaceError("none"), "PARLEY_ERR_NO_COMPATIBLE_INTERFACE"),
        (ClientProtocolError("HTTP 502"), "PARLEY_ERR_PROTOCOL"),
        (RuntimeError("a bug"), "A2ACLI_ERR_INTERNAL"),
    ],
    ids=lambda value: value if isinstance(value, str) else type(value).__name__,
)
def test_the_commands_own_failures_have_their_codes(error: Exception, code: str) -> None:
    assert error_envelope(error) == {
        "error": {"code": code, "message": str(error), "hint": None, "a2aCode": None}
    }


CLASSES = sorted(ERROR_TABLE, key=lambda cls: cls.__name__)


@pytest.mark.parametrize("cls", CLASSES, ids=[cls.__name__ for cls in CLASSES])
def test_an_a2a_error_is_named_with_its_json_rpc_code(cls: type[e.A2AError]) -> None:
    envelope = error_envelope(cls())["error"]
    assert envelope["code"] == cls.__name__
    assert envelope["a2aCode"] == spec_of(cls()).jsonrpc_code
    assert envelope["hint"] is None


def test_a_subclass_outside_the_table_is_named_as_its_row() -> None:
    class StillNotFound(e.TaskNotFoundError):
        pass

    envelope = error_envelope(StillNotFound("t-1 is gone"))["error"]
    assert (envelope["code"], envelope["message"]) == ("TaskNotFoundError", "t-1 is gone")
    assert envelope["a2aCode"] == spec_of(e.TaskNotFoundError()).jsonrpc_code


def test_the_message_is_one_line_never_empty() -> None:
    assert error_envelope(ClientConnectionError("a\n  b\tc"))["error"]["message"] == "a b c"
    assert error_envelope(RuntimeError())["error"]["message"] == "RuntimeError"


def test_the_error_line_is_one_compact_line_of_json_keeping_non_ascii() -> None:
    line = error_line(e.TaskNotFoundError("tâche absente"))
    assert line.endswith("\n")
    assert line.count("\n") == 1
    assert "tâche absente" in line
    assert ": " not in line
    assert json.loads(line)["error"]["code"] == "TaskNotFoundError"
