"""`parley serve --exec 'CMD ARGS'`: serve a command as an agent (`parley.adapters.command`)
instead of a target. Running commands for whoever can reach the port is dangerous, so
`--exec` refuses a `--host` other than loopback unless `--exec-allow-remote` says so
(and then authentication, `--api-key` or a bearer, is the operator's to add)."""

from __future__ import annotations

import argparse
from typing import Any

from parley.cli.hosts import is_loopback
from parley.cli.targets import load_target

EXEC_TARGET = "exec"
"""The target `--exec` stands for, in `parley serve`'s log lines."""


def _seconds(text: str) -> float | None:
    seconds = float(text)
    if seconds < 0:
        raise ValueError("a timeout is a number of seconds (0: none)")
    return seconds or None


def _concurrency(text: str) -> int:
    number = int(text)
    if number < 1:
        raise ValueError("at least 1")
    return number


def add_exec_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--exec",
        dest="exec_command",
        metavar="'CMD ARGS'",
        help="serve this command as an agent, instead of a target: the message's text on its "
        "stdin, its stdout lines streamed back, its exit status ending the task. DANGEROUS: "
        "whoever reaches the port runs it (loopback only, unless --exec-allow-remote)",
    )
    parser.add_argument(
        "--exec-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="end a command running longer (SIGTERM, then SIGKILL) and fail its task "
        "(default: none)",
    )
    parser.add_argument(
        "--exec-concurrency",
        type=_concurrency,
        default=4,
        metavar="N",
        help="commands running at once; tasks beyond wait their turn (default 4)",
    )
    parser.add_argument(
        "--exec-allow-remote",
        action="store_true",
        help="let --exec listen on an interface other than loopback",
    )


def check_exec(arguments: argparse.Namespace) -> None:
    """With `--exec`: SystemExit for a target given too or a non-loopback `--host` not
    allowed; the target set to stand for the command."""
    command = getattr(arguments, "exec_command", None)
    if not command:
        return
    if arguments.target and arguments.target != [EXEC_TARGET]:
        raise SystemExit("parley serve: --exec serves a command; name no target besides")
    if not is_loopback(arguments.host) and not arguments.exec_allow_remote:
        raise SystemExit(
            f"parley serve: --exec runs a command for every caller; it listens on loopback "
            f"only, not {arguments.host!r}, unless --exec-allow-remote is given"
        )
    arguments.target = [EXEC_TARGET]


def exec_or_load(spec: str, arguments: argparse.Namespace) -> Any:
    """The command's agent with `--exec`, else the target `spec` names."""
    command = getattr(arguments, "exec_command", None)
    if not command:
        return load_target(spec)
    from parley.adapters.command import command_agent  # noqa: PLC0415

    try:
        return command_agent(
            command, timeout=arguments.exec_timeout, concurrency=arguments.exec_concurrency
        )
    except ValueError as exc:
        raise SystemExit(f"parley serve: --exec: {exc}") from None
