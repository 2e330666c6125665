"""The a2a-cli specification's spellings of Parley's commands, and its JSON error envelope.

`parley task get|cancel|list|subscribe|download URL …` and `parley card get URL` are read
as `parley get|cancel|list|subscribe URL …` and `parley card URL` (`task download` is `get`
with `-o`, the current folder unless given). The rewriting happens on the command line,
before argparse, so every option and help text stays the command's own; `parley task`
alone is a parser of its own only to be listed, completed and to refuse an unknown word.

With `--json`, a failure is also written to stdout as the specification's envelope,
`{"error": {"code", "message", "hint", "a2aCode"}}`: `code` is the A2A error's name
(`TaskNotFoundError`), or an `A2ACLI_ERR_*` code for a failure of the command's own, or
`PARLEY_ERR_*` where the specification has none (its namespace is closed to others)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from parley.cli.errors import UsageError
from parley.client import (
    ClientConnectionError,
    ClientProtocolError,
    ClientTimeoutError,
    NoCompatibleInterfaceError,
)
from parley.protocol.errors import A2AError
from parley.wire.errors import ERROR_TABLE, spec_of

TASK_OPERATIONS = {
    "get": "get",
    "cancel": "cancel",
    "list": "list",
    "subscribe": "subscribe",
    "download": "get",
}
"""`parley task WORD` to the command it is."""

OUTPUT_FLAGS = ("-o", "--output")


def translate(argv: Sequence[str]) -> list[str]:
    """The command line with an a2a-cli spelling replaced by Parley's command."""
    words = list(argv)
    if words[:2] == ["card", "get"] and len(words) > 2:
        return ["card", *words[2:]]
    if len(words) < 2 or words[0] != "task" or words[1] not in TASK_OPERATIONS:
        return words
    rest = words[2:]
    if words[1] == "download" and not any(_is_output(word) for word in rest):
        rest = [*rest, "--output", "."]
    return [TASK_OPERATIONS[words[1]], *rest]


def _is_output(word: str) -> bool:
    return word in OUTPUT_FLAGS or word.startswith(("--output=", "-o"))


def add_task_command(commands: Any) -> None:
    """`parley task`: listed in the help and in completions; `translate` does its work."""
    task = commands.add_parser(
        "task",
        help="the a2a-cli spelling: task get|cancel|list|subscribe|download URL ...",
        description="The a2a-cli specification's names for the task commands: 'task get' is "
        "'get', 'task cancel' 'cancel', 'task list' 'list', 'task subscribe' 'subscribe', "
        "'task download URL ID [-o DIR]' 'get URL ID -o DIR' (DIR: the current folder). "
        "Each takes its command's options: see 'parley get --help', ...",
    )
    task.add_argument("operation", choices=list(TASK_OPERATIONS), metavar="OPERATION")
    task.add_argument("arguments", nargs=argparse.REMAINDER, metavar="...")
    task.set_defaults(run=_run_task)


def _run_task(arguments: argparse.Namespace) -> int:
    """Only reached when `main` was bypassed: parse the translated line."""
    from parley.cli.main import main  # noqa: PLC0415 (main imports this module)

    return main(["task", arguments.operation, *arguments.arguments])


# ---------------------------------------------------------------------- the error envelope


def error_line(error: BaseException) -> str:
    """The error object as one line of JSON (a document, and a line of JSON Lines)."""
    return json.dumps(error_envelope(error), ensure_ascii=False, separators=(",", ":")) + "\n"


def error_envelope(error: BaseException) -> dict[str, Any]:
    """The a2a-cli error object of a failure `parley.cli.errors.classify` knows."""
    a2a_code: int | None = None
    match error:
        case A2AError():
            code = _a2a_name(error)
            a2a_code = spec_of(error).jsonrpc_code
        case UsageError() | ImportError():
            code = "A2ACLI_ERR_USAGE"
        case ClientTimeoutError():
            code = "A2ACLI_ERR_TIMEOUT"
        case ClientConnectionError():
            code = "A2ACLI_ERR_UNREACHABLE"
        case NoCompatibleInterfaceError():
            code = "PARLEY_ERR_NO_COMPATIBLE_INTERFACE"
        case ClientProtocolError():
            code = "PARLEY_ERR_PROTOCOL"
        case _:
            code = "A2ACLI_ERR_INTERNAL"
    message = " ".join((str(error).strip() or type(error).__name__).split())
    return {"error": {"code": code, "message": message, "hint": None, "a2aCode": a2a_code}}


def _a2a_name(error: A2AError) -> str:
    """The specification's name of the error: its class in the error table."""
    for cls in type(error).__mro__:
        if cls in ERROR_TABLE:
            return cls.__name__
    return "InternalError"
