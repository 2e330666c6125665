"""`parley check URL`: the conformance of any A2A agent, on every HTTP interface its card
lists, each check citing its REFERENCE line. Exit status 1 when a MUST fails."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from parley.cli.errors import ExitCode
from parley.cli.options import agent_url, header, seconds
from parley.conformance import CHECKS, as_json, as_junit, as_table, check_agent

EPILOG = f"""\
exit status:
  {ExitCode.OK:<4} no MUST failed
  {ExitCode.TASK_UNSUCCESSFUL:<4} a MUST failed
  {ExitCode.USAGE:<4} usage error
  {ExitCode.PROTOCOL:<4} no agent card at URL

checks: {", ".join(check.id for check in CHECKS)}"""


def add_check_command(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        aliases=["conformance"],  # a2a-cli's name
        help="check an agent's conformance",
        description="Check that the A2A agent at URL follows the protocol, on every HTTP "
        "interface (binding, version) its card lists. The checker creates tasks of its own "
        "and touches no other.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "url", metavar="URL", type=agent_url, help="the agent's base URL or card URL"
    )
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help='print {"checks": [...]} as JSON')
    form.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    parser.add_argument(
        "--header",
        metavar="NAME=VALUE",
        type=header,
        action="append",
        default=[],
        help="credentials: an HTTP header sent with every call but the auth checks' (repeatable)",
    )
    parser.add_argument(
        "--only",
        metavar="PREFIX",
        action="append",
        default=[],
        help="run only the checks whose id starts with PREFIX (repeatable), e.g. stream.",
    )
    parser.add_argument(
        "--timeout", metavar="S", type=seconds, default=10.0, help="seconds per call (default 10)"
    )
    parser.set_defaults(run=run)


def run(arguments: argparse.Namespace) -> int:
    report = asyncio.run(
        check_agent(
            arguments.url,
            headers=dict(arguments.header),
            timeout=arguments.timeout,
            only=arguments.only,
        )
    )
    sys.stdout.write((as_json(report) if arguments.json else as_table(report)) + "\n")
    if arguments.junit:
        Path(arguments.junit).write_text(as_junit(report), encoding="utf-8")
    if report.results[0].check.id == "card.served" and report.results[0].must_failed:
        return ExitCode.PROTOCOL
    return ExitCode.TASK_UNSUCCESSFUL if report.must_failed else ExitCode.OK
