"""The `parley` command."""

from parley.cli.main import main

__all__ = ["main"]
