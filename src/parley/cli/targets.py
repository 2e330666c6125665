"""What `parley serve` serves: `module:attribute` targets, one, or several named
(`NAME=module:attribute`, each under /NAME)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parley.asgi.mount import check_name


def load_target(spec: str) -> Any:
    """Import `module:attribute`, with the current directory importable."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"parley serve: expected module:attribute, got {spec!r}")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"parley serve: cannot import {module_name!r}: {exc}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise SystemExit(f"parley serve: {module_name!r} has no {attribute!r}") from None


def named_targets(targets: Sequence[str]) -> dict[str, str] | None:
    """`NAME=module:attribute` targets by name; None for the single-agent form (one target
    without a name). Several targets must all be named, each name once."""
    if len(targets) == 1 and "=" not in targets[0].partition(":")[0]:
        return None
    named: dict[str, str] = {}
    for target in targets:
        name, sep, spec = target.partition("=")
        if not sep or ":" in name:
            raise SystemExit(
                f"parley serve: several agents are given as NAME=module:attribute, got {target!r}"
            )
        try:
            check_name(name)
        except ValueError as exc:
            raise SystemExit(f"parley serve: {exc}") from None
        if name in named:
            raise SystemExit(f"parley serve: two agents are named {name!r}")
        named[name] = spec
    return named
