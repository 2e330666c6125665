"""`parley serve --config parley.toml` and `PARLEY_*` environment variables: every option
of the command from a TOML file or the environment, whichever module added it.

Each key is a long option's name without its dashes (`port`, `api-key`, `tls-cert`,
`allowed-host`; `target` for the agents), each value what the option takes: a string, a
number, a boolean for a switch, a list for a repeatable option. A value may be an inline
table `{ env = "NAME" }`: the environment variable NAME's value (so that secrets stay out
of the file); an unset one is an error. Unknown keys and values of the wrong kind are
refused, naming the key.

    target = ["echo=examples.echo:agent", "counter=examples.streaming:agent"]
    port = 8080
    store = "postgresql://agents@db.internal:5432/agents"
    api-key = [{ env = "BILLING_KEY" }, "k-19be44:audit-service"]

The environment variable of an option is `PARLEY_` and its key in capitals, dashes as
underscores, and dots too (`PARLEY_PORT`, `PARLEY_TLS_CERT`, `PARLEY_TARGET`); a switch takes
1/true/yes/on or 0/false/no/off, a repeatable option several words (shell quoting).
`PORT` is read too when `PARLEY_PORT` is not set, as hosting platforms set it, and
`PARLEY_CONFIG` names the file when `--config` does not. The command line wins over the
environment, which wins over the file.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

_NOT_OPTIONS = {"help", "config", "run"}
ENV_PREFIX = "PARLEY_"
_OWN_ENV = {"api-key"}
"""Options whose environment variable the command reads itself (`$PARLEY_API_KEYS`, not
`$PARLEY_API_KEY`, which is the talking commands' credential)."""
_ALIASES = {"port": ("PORT",)}
"""Further variables read for an option when its own is not set."""
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="read options from a TOML file (keys: the long option names, e.g. port, "
        'api-key; a value { env = "NAME" } is read from the environment); flags and '
        "PARLEY_* environment variables (e.g. PARLEY_PORT) win",
    )


def env_name(key: str) -> str:
    """The environment variable of the option `key` (`tls-cert` -> `PARLEY_TLS_CERT`; any
    character a variable's name cannot hold, a dash or a dot, becomes `_`)."""
    return ENV_PREFIX + re.sub(r"[^A-Z0-9]", "_", key.upper())


def options_of(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The parser's options by key (long name without dashes; a positional's dest)."""
    return {
        action.dest if not action.option_strings else action.option_strings[-1][2:]: action
        for action in parser._actions
        if action.dest not in _NOT_OPTIONS and action.help != argparse.SUPPRESS
    }


def apply_config(
    arguments: argparse.Namespace,
    parser: argparse.ArgumentParser,
    environment: Mapping[str, str] | None = None,
) -> None:
    """Fill the options not given on the command line from the environment, else from
    the `--config` file."""
    environment = os.environ if environment is None else environment
    if not getattr(arguments, "config", None) and environment.get(env_name("config")):
        arguments.config = environment[env_name("config")]
    actions = options_of(parser)
    argv = getattr(arguments, "argv", None)
    spelled = None if argv is None else {word.partition("=")[0] for word in argv}
    given = {key for key, action in actions.items() if _given(arguments, action, spelled)}
    filled: set[str] = set()
    for key, action in actions.items():
        if key in given or key in _OWN_ENV:
            continue
        for name in (env_name(key), *_ALIASES.get(key, ())):
            if environment.get(name, "").strip():
                value = _from_environment(action, name, environment[name])
                setattr(arguments, action.dest, value)
                filled.add(key)
                break
    for key, raw in _file(arguments).items():
        if key not in actions:
            known = ", ".join(sorted(actions))
            raise _file_error(arguments, f"unknown key {key!r} (known: {known})")
        if key not in given and key not in filled:
            fail = _failing(f"--config {arguments.config}: {key}")
            setattr(arguments, actions[key].dest, _value(actions[key], raw, fail))


def _given(
    arguments: argparse.Namespace, action: argparse.Action, spelled: set[str] | None
) -> bool:
    """Whether the command line gave the option (its value differs from the default, or
    it is spelled in `spelled`: the command line's words, each up to its first `=`)."""
    if getattr(arguments, action.dest, action.default) != action.default:
        return True
    if spelled is None:
        return False
    return any(option in spelled for option in action.option_strings)


def _file(arguments: argparse.Namespace) -> dict[str, Any]:
    path = getattr(arguments, "config", None)
    if not path:
        return {}
    import tomllib  # noqa: PLC0415 - with --config only

    try:
        return tomllib.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeError, tomllib.TOMLDecodeError) as exc:
        raise _file_error(arguments, str(exc)) from None


def _file_error(arguments: argparse.Namespace, what: str) -> SystemExit:
    return SystemExit(f"parley serve: --config {arguments.config}: {what}")


def _failing(where: str) -> Callable[[str], SystemExit]:
    return lambda what: SystemExit(f"parley serve: {where}: {what}")


def _from_environment(action: argparse.Action, name: str, text: str) -> Any:
    fail = _failing(f"${name}")
    if action.nargs == 0:  # a switch
        word = text.strip().lower()
        if word not in _TRUE | _FALSE:
            raise fail("expected 1, true, yes, on, 0, false, no or off")
        return word in _TRUE
    if _repeatable(action):
        try:
            return _value(action, shlex.split(text), fail)
        except ValueError as exc:  # unbalanced quotes
            raise fail(str(exc)) from None
    return _value(action, text, fail)


def _repeatable(action: argparse.Action) -> bool:
    return isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*")


def _value(action: argparse.Action, raw: Any, fail: Callable[[str], SystemExit]) -> Any:
    repeatable = _repeatable(action)
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
        except (TypeError, ValueError, argparse.ArgumentTypeError) as exc:
            raise fail(str(exc)) from None
        if action.choices is not None and value not in action.choices:
            raise fail(f"expected one of {', '.join(map(str, action.choices))}")
        converted.append(value)
    return converted if repeatable else converted[0]


def _resolve(item: Any, fail: Callable[[str], SystemExit]) -> str:
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
