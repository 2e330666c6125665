"""What the `parley` commands that talk to agents exit with: the exit-code table, and the
one line on stderr (`parley: <kind>: <message>`) each failure is reported as."""

from __future__ import annotations

import argparse
import enum
import re
import sys
from typing import NoReturn

from parley.client import (
    ClientConnectionError,
    ClientProtocolError,
    ClientTimeoutError,
    NoCompatibleInterfaceError,
)
from parley.protocol.errors import A2AError
from parley.wire.errors import spec_of


class ExitCode(enum.IntEnum):
    """The exit status of every `parley` command (documented in docs/cli.md)."""

    OK = 0
    TASK_UNSUCCESSFUL = 1
    USAGE = 2
    CONNECTION = 3
    AGENT_ERROR = 4
    PROTOCOL = 5
    INTERRUPTED = 130
    PIPE_CLOSED = 141


EXIT_CODES = f"""\
exit status:
  {ExitCode.OK:<4} success
  {ExitCode.TASK_UNSUCCESSFUL:<4} the task is failed, rejected or canceled (send, get, subscribe)
  {ExitCode.USAGE:<4} usage error: bad arguments, URL, --data JSON, --file, --header
  {ExitCode.CONNECTION:<4} the agent could not be reached, the connection broke, or a timeout
  {ExitCode.AGENT_ERROR:<4} the agent answered an A2A error (task not found, unsupported, ...)
  {ExitCode.PROTOCOL:<4} not an A2A answer (no or bad card, HTTP error), no usable interface
  {ExitCode.INTERRUPTED:<4} interrupted (Ctrl-C)
  {ExitCode.PIPE_CLOSED:<4} the output was closed early (e.g. piped into head)"""
"""The `parley --help` epilog."""


class UsageError(Exception):
    """A command line that cannot be carried out (found after argparse accepted it)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (`parley: usage: …`) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        report("usage", f"{message}{_suggestion(message)} (see '{self.prog} --help')")
        raise SystemExit(ExitCode.USAGE)


def _suggestion(message: str) -> str:
    """`; did you mean 'send'?` for an invalid choice close to a valid one."""
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if found is None:
        return ""
    choices = re.findall(r"'([^']*)'", found.group(2)) or found.group(2).split(", ")
    import difflib  # noqa: PLC0415 - on a usage error only

    close = difflib.get_close_matches(found.group(1), choices, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def report(kind: str, message: str) -> None:
    """Write the one-line error report to stderr."""
    text = " ".join(message.split())  # one line, whatever the server put in its message
    sys.stderr.write(f"parley: {kind}: {text}\n")


def classify(error: BaseException) -> tuple[ExitCode, str] | None:
    """The exit code and kind of a failure the commands report, or None for a bug."""
    match error:
        case UsageError() | ImportError():  # ImportError: an extra the choice needs
            return ExitCode.USAGE, "usage"
        case ClientTimeoutError():
            return ExitCode.CONNECTION, "timeout"
        case ClientConnectionError():
            return ExitCode.CONNECTION, "connection"
        case NoCompatibleInterfaceError():
            return ExitCode.PROTOCOL, "no compatible interface"
        case ClientProtocolError():
            return ExitCode.PROTOCOL, "protocol"
        case A2AError():
            return ExitCode.AGENT_ERROR, spec_of(error).reason.lower().replace("_", " ")
    return None


def message_of(error: BaseException) -> str:
    """The error's own message (client and A2A errors carry one), never a traceback."""
    return str(error).strip() or type(error).__name__
