"""What `parley serve` serves: targets, one, or several named (`NAME=target`, each under
/NAME). A target is `module:attribute`, a module alone (its `agent`, else its `app`), or a
Python file (`examples/echo.py`, `examples/echo.py:agent`); what it names must be an
Agent, a request handler or an ASGI app, checked here so that a wrong one stops the
command at start, in one line, instead of answering every request with a 500."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from parley.asgi.mount import check_name
from parley.server.servable import is_servable

DEFAULT_ATTRIBUTES = ("agent", "app")
"""What a target naming only a module serves, the first the module has."""


def load_target(spec: str) -> Any:
    """Import the target `spec` names, with the current directory importable; SystemExit
    in one line for one that cannot be loaded or is not servable."""
    where, colon, attribute = spec.rpartition(":") if ":" in spec else (spec, "", "")
    if colon and not (where and attribute):
        raise SystemExit(f"parley serve: expected module:attribute, got {spec!r}")
    module_name = _module_name(where)
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"parley serve: cannot import {module_name!r}: {exc}") from None
    names = (attribute,) if attribute else DEFAULT_ATTRIBUTES
    for name in names:
        if hasattr(module, name):
            target = getattr(module, name)
            check_target(target, f"{module_name}:{name}", module)
            return target
    if attribute:
        raise SystemExit(f"parley serve: {module_name!r} has no {attribute!r}")
    raise SystemExit(
        f"parley serve: {module_name!r} has no 'agent' nor 'app': name the agent as "
        f"{module_name}:attribute"
    )


def _module_name(where: str) -> str:
    """The module a target's first part names: a dotted name as it is; a `.py` file (or a
    path) as the module it is inside its packages, their root made importable."""
    if not where.endswith(".py") and "/" not in where and "\\" not in where:
        return where
    path = Path(where)
    if not path.is_file():
        raise SystemExit(f"parley serve: no such file {where!r}")
    path = path.resolve()
    root, parts = path.parent, [path.stem]
    while (root / "__init__.py").is_file():
        parts.insert(0, root.name)
        root = root.parent
    sys.path.insert(0, str(root))
    return ".".join(parts)


def check_target(target: Any, spec: str, module: ModuleType | None = None) -> None:
    """SystemExit unless `target` is an Agent, a request handler or an ASGI app."""
    if is_servable(target) or (hasattr(target, "card") and hasattr(target, "send_message")):
        return
    if isinstance(target, type):
        hint = _instances_hint(target, module)
        raise SystemExit(f"parley serve: {spec} is a class, not an agent; {hint}")
    if not callable(target):
        raise SystemExit(
            f"parley serve: {spec} is a {type(target).__name__}, not an Agent, a request "
            "handler or an ASGI app"
        )
    try:
        inspect.signature(target).bind(None, None, None)
    except TypeError:
        raise SystemExit(
            f"parley serve: {spec} is not an ASGI app (it does not take scope, receive, "
            "send): name an Agent, a request handler or an ASGI app"
        ) from None
    except ValueError:  # no signature to read (a builtin): taken at its word
        return


def _instances_hint(cls: type, module: ModuleType | None) -> str:
    names = [
        name
        for name, value in vars(module or object()).items()
        if isinstance(value, cls) and not name.startswith("_")
    ]
    if module is not None and names:
        return f"did you mean an instance, {module.__name__}:{names[0]}?"
    return f"serve an instance of it (e.g. agent = {cls.__name__}(...))"


def named_targets(targets: Sequence[str]) -> dict[str, str] | None:
    """`NAME=target` targets by name; None for the single-agent form (one target without
    a name). Several targets must all be named, each name once."""
    if len(targets) == 1 and not _has_name(targets[0]):
        return None
    named: dict[str, str] = {}
    for target in targets:
        name, sep, spec = target.partition("=")
        if not sep or ":" in name or "/" in name:
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


def _has_name(target: str) -> bool:
    name, sep, _ = target.partition("=")
    return bool(sep) and ":" not in name and "/" not in name
