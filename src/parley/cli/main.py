"""`parley` command line: `parley serve module:agent`, `parley db status|upgrade|purge`,
`parley push list|retry` (deliveries in a store's outbox), talking to any A2A agent:
`parley card|send|get|list|cancel|subscribe URL …` (or as a2a-cli spells them, `parley task
get URL ID`, …), and receiving its push notifications locally: `parley webhook listen`; an
agent's skills as MCP tools: `parley mcp URL`; completion scripts: `parley completion SHELL`.
Configuration is built here, at the edge, from flags and environment."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from parley import __version__
from parley.cli.a2a_cli import translate
from parley.cli.errors import EXIT_CODES, OneLineParser

ADDERS = (
    ("parley.cli.serve", "add_serve_command", ("serve",)),
    ("parley.cli.proxy", "add_proxy_command", ("proxy",)),
    ("parley.cli.db", "add_db_command", ("db",)),
    ("parley.cli.deliveries", "add_push_command", ("push",)),
    (
        "parley.cli.talk",
        "add_talk_commands",
        ("card", "send", "get", "list", "cancel", "subscribe", "chat"),
    ),
    ("parley.cli.a2a_cli", "add_task_command", ("task",)),
    ("parley.cli.check", "add_check_command", ("check", "conformance")),
    ("parley.cli.webhook", "add_webhook_command", ("webhook",)),
    ("parley.cli.mcp", "add_mcp_command", ("mcp",)),
    ("parley.cli.completion", "add_completion_command", ("completion",)),
)
"""Each command's module, the function adding its parser, and the commands it adds: a
command line naming one loads that module only (`parley serve` does not load the client,
the checks or MCP), anything else (`--help`, a typo) loads them all."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `command` only when it is one."""
    parser = OneLineParser(
        prog="parley",
        description="Serve and talk to A2A (Agent2Agent) agents.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"parley {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = [adder for adder in ADDERS if command in adder[2]] or ADDERS
    for module, name, _ in chosen:
        getattr(importlib.import_module(module), name)(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    line = translate(sys.argv[1:] if argv is None else argv)  # a2a-cli's spellings
    parser = build_parser(line[0] if line else None)
    arguments = parser.parse_args(line)
    arguments.argv = line  # (`serve --workers`)
    result: int = arguments.run(arguments)
    return result


if __name__ == "__main__":
    sys.exit(main())
