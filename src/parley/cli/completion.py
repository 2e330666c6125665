"""`parley completion bash|zsh|fish|tcsh`: the shell completion script of every command and
option, generated from the argparse tree by shtab (static: completing never starts Python)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

SHELLS = ("bash", "zsh", "fish", "tcsh")


def add_completion_command(commands: Any) -> None:
    completion = commands.add_parser(
        "completion",
        help="print a shell completion script",
        description="Print the completion script for SHELL. bash: "
        "'source <(parley completion bash)' (or save it in "
        "~/.local/share/bash-completion/completions/parley); zsh: save it as _parley in a "
        "folder of $fpath; fish: 'parley completion fish > "
        "~/.config/fish/completions/parley.fish'.",
    )
    completion.add_argument("shell", choices=SHELLS, metavar="SHELL", help=", ".join(SHELLS))
    completion.set_defaults(run=_print)


def _print(arguments: argparse.Namespace) -> int:
    from parley.cli.main import build_parser  # noqa: PLC0415 (main imports this module)

    sys.stdout.write(script(build_parser(), arguments.shell))
    return 0


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of `parser` for `shell`, ending with a newline."""
    import shtab  # noqa: PLC0415 (only this command needs it: every other starts faster)

    text: str = shtab.complete(parser, shell=shell)
    return text if text.endswith("\n") else text + "\n"
