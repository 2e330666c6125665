"""`parley serve --config parley.toml`: the command's options from a TOML file.

Each key is a long option's name without its dashes (`port`, `api-key`, `tls-cert`,
`allowed-host`; `target` for the agents), each value what the option takes: a string, a
number, a boolean for a switch, a list for a repeatable option. Options given on the
command line win over the file. A value may be an inline table `{ env = "NAME" }`: the
environment variable NAME's value (so that secrets stay out of the file); an unset one is
an error. Unknown keys and values of the wrong kind are refused, naming the key.

    target = ["echo=examples.echo:agent", "counter=examples.streaming:agent"]
    port = 8080
    store = "postgresql://agents@db.internal:5432/agents"
    api-key = [{ env = "BILLING_KEY" }, "k-19be44:audit-service"]
    tls-cert = "server.pem"
    tls-key = "server.key"
"""

from __future__ import annotations

import argparse
import os
import tomllib
from pathlib import Path
from typing import Any

_NOT_OPTIONS = {"help", "config", "run"}


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="read options from a TOML file (keys: the long option names, e.g. port, "
        'api-key; a value { env = "NAME" } is read from the environment); flags win',
    )


def apply_config(arguments: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Fill the options `arguments` left at their defaults from `arguments.config`."""
    path = getattr(arguments, "config", None)
    if not path:
        return
    try:
        values = tomllib.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"parley serve: --config {path}: {exc}") from None
    actions = {
        action.dest if not action.option_strings else action.option_strings[-1][2:]: action
        for action in parser._actions
        if action.dest not in _NOT_OPTIONS
    }
    for key, raw in values.items():
        action = actions.get(key)
        if action is None:
            known = ", ".join(sorted(actions))
            raise SystemExit(f"parley serve: --config {path}: unknown key {key!r} (known: {known})")
        if getattr(arguments, action.dest) != action.default:
            continue  # given on the command line
        setattr(arguments, action.dest, _value(action, key, raw, path))


def _value(action: argparse.Action, key: str, raw: Any, path: str) -> Any:
    def fail(what: str) -> SystemExit:
        return SystemExit(f"parley serve: --config {path}: {key}: {what}")

    repeatable = isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*")
    if action.nargs == 0:  # a switch
        if not isinstance(raw, bool):
            raise fail("expected true or false")
        return raw
    items = raw if isinstance(raw, list) else [raw]
    if not repeatable and isinstance(raw, list):
        raise fail("expected one value, not a list")
    converted = []
    for item in items:
        text = _resolve(item, fail)
        try:
            value = action.type(text) if callable(action.type) else text
        except (TypeError, ValueError) as exc:
            raise fail(str(exc)) from None
        if action.choices is not None and value not in action.choices:
            raise fail(f"expected one of {', '.join(map(str, action.choices))}")
        converted.append(value)
    return converted if repeatable else converted[0]


def _resolve(item: Any, fail: Any) -> str:
    """A scalar as the command line would give it; `{ env = "NAME" }` from the environment."""
    if isinstance(item, dict):
        if set(item) != {"env"} or not isinstance(item["env"], str):
            raise fail('a table value must be { env = "NAME" }')
        value = os.environ.get(item["env"])
        if value is None:
            raise fail(f"the environment variable {item['env']} is not set")
        return value
    if isinstance(item, bool) or not isinstance(item, str | int | float):
        raise fail(f"expected a string or a number, got {type(item).__name__}")
    return str(item)
