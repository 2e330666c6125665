"""`parley` command line: `parley serve module:agent`, `parley db status|upgrade|purge`
(more commands arrive with the client). Configuration is built here, at the edge, from
flags and environment."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from parley import __version__
from parley.cli.db import add_db_command
from parley.cli.serve import add_serve_command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parley", description="Serve and talk to A2A (Agent2Agent) agents."
    )
    parser.add_argument("--version", action="version", version=f"parley {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_serve_command(commands)
    add_db_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    arguments = parser.parse_args(argv)
    result: int = arguments.run(arguments)
    return result


if __name__ == "__main__":
    sys.exit(main())
