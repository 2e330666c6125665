"""`parley` command line: `parley serve module:agent`, `parley db status|upgrade|purge`,
`parley push list|retry` (deliveries in a store's outbox), talking to any A2A agent:
`parley card|send|get|list|cancel|subscribe URL …` (or as a2a-cli spells them, `parley task
get URL ID`, …), and receiving its push notifications locally: `parley webhook listen`; an
agent's skills as MCP tools: `parley mcp URL`; completion scripts: `parley completion SHELL`.
Configuration is built here, at the edge, from flags and environment."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from parley import __version__
from parley.cli.a2a_cli import add_task_command, translate
from parley.cli.check import add_check_command
from parley.cli.completion import add_completion_command
from parley.cli.db import add_db_command
from parley.cli.deliveries import add_push_command
from parley.cli.errors import EXIT_CODES, OneLineParser
from parley.cli.mcp import add_mcp_command
from parley.cli.proxy import add_proxy_command
from parley.cli.serve import add_serve_command
from parley.cli.talk import add_talk_commands
from parley.cli.webhook import add_webhook_command


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="parley",
        description="Serve and talk to A2A (Agent2Agent) agents.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"parley {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_serve_command(commands)
    add_proxy_command(commands)
    add_db_command(commands)
    add_push_command(commands)
    add_talk_commands(commands)
    add_task_command(commands)
    add_check_command(commands)
    add_webhook_command(commands)
    add_mcp_command(commands)
    add_completion_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    line = translate(sys.argv[1:] if argv is None else argv)  # a2a-cli's spellings
    arguments = parser.parse_args(line)
    arguments.argv = line  # (`serve --workers`)
    result: int = arguments.run(arguments)
    return result


if __name__ == "__main__":
    sys.exit(main())
