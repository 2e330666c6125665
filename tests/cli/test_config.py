"""`parley.cli.config` on a parser of its own: each kind of option (a value, a typed value,
a choice, a switch, a repeatable one) read from a `--config` TOML file and from `PARLEY_*`
variables, every mistake refused in one line naming the key or the variable, and the order
of precedence (command line, environment, file). In-process; the `serve` command's own use
is in test_serve_config.py and test_serve_setup.py."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.cli.config import ENV_PREFIX, add_config_option, apply_config, env_name, options_of


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("target", nargs="*", default=[])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--log-level", choices=["debug", "info"], default="info")
    parser.add_argument("--reload", action="store_true")
    parser.add_argument("--allowed-host", action="append")
    parser.add_argument("--api-key", action="append")
    parser.add_argument("--secret", help=argparse.SUPPRESS)
    add_config_option(parser)
    return parser


def _applied(
    argv: list[str],
    environment: Mapping[str, str] | None = None,
    toml: str | None = None,
    tmp_path: Path | None = None,
) -> argparse.Namespace:
    parser = _parser()
    if toml is not None:
        assert tmp_path is not None
        path = tmp_path / "parley.toml"
        path.write_text(toml, "utf-8")
        argv = [*argv, "--config", str(path)]
    arguments = parser.parse_args(argv)
    arguments.argv = argv
    apply_config(arguments, parser, environment or {})
    return arguments


def test_the_keys_are_the_long_option_names() -> None:
    assert set(options_of(_parser())) == {
        "target",
        "host",
        "port",
        "log-level",
        "reload",
        "allowed-host",
        "api-key",
    }


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("port", "PARLEY_PORT"),
        ("tls-cert", "PARLEY_TLS_CERT"),
        ("otel.endpoint", "PARLEY_OTEL_ENDPOINT"),
        ("config", "PARLEY_CONFIG"),
    ],
)
def test_an_options_variable(key: str, name: str) -> None:
    assert env_name(key) == name


@given(st.text(min_size=1, max_size=20))
def test_a_variable_name_is_always_a_shell_name(key: str) -> None:
    name = env_name(key)
    assert name.startswith(ENV_PREFIX)
    assert all(c.isascii() and (c.isupper() or c.isdigit() or c == "_") for c in name)


def test_values_from_the_file_of_every_kind(tmp_path: Path) -> None:
    arguments = _applied(
        [],
        toml='target = ["a=m:agent"]\nhost = "0.0.0.0"\nport = 9000\nlog-level = "debug"\n'
        'reload = true\nallowed-host = ["a.example", "b.example"]\n',
        tmp_path=tmp_path,
    )
    assert arguments.target == ["a=m:agent"]
    assert (arguments.host, arguments.port, arguments.log_level) == ("0.0.0.0", 9000, "debug")
    assert arguments.reload is True
    assert arguments.allowed_host == ["a.example", "b.example"]


def test_a_number_may_be_written_as_text(tmp_path: Path) -> None:
    assert _applied([], toml='port = "9001"', tmp_path=tmp_path).port == 9001


def test_values_from_the_environment_of_every_kind() -> None:
    arguments = _applied(
        [],
        {
            "PARLEY_HOST": "0.0.0.0",
            "PARLEY_PORT": "9000",
            "PARLEY_LOG_LEVEL": "debug",
            "PARLEY_RELOAD": "yes",
            "PARLEY_ALLOWED_HOST": "a.example 'b c.example'",
            "PARLEY_TARGET": "a=m:agent b=n:agent",
        },
    )
    assert (arguments.host, arguments.port, arguments.log_level) == ("0.0.0.0", 9000, "debug")
    assert arguments.reload is True
    assert arguments.allowed_host == ["a.example", "b c.example"]
    assert arguments.target == ["a=m:agent", "b=n:agent"]


@pytest.mark.parametrize("word", ["1", "true", "YES", " on ", "True"])
def test_a_switch_is_on(word: str) -> None:
    assert _applied([], {"PARLEY_RELOAD": word}).reload is True


@pytest.mark.parametrize("word", ["0", "false", "No", "off"])
def test_a_switch_is_off(word: str) -> None:
    assert _applied([], {"PARLEY_RELOAD": word}).reload is False


def test_a_blank_variable_is_not_set() -> None:
    assert _applied([], {"PARLEY_PORT": "   "}).port == 8000


def test_port_is_read_when_parley_port_is_not_set() -> None:
    assert _applied([], {"PORT": "7000"}).port == 7000
    assert _applied([], {"PORT": "7000", "PARLEY_PORT": "7001"}).port == 7001


def test_the_server_api_keys_are_not_read_from_the_clients_variable() -> None:
    assert _applied([], {"PARLEY_API_KEY": "client-key"}).api_key is None


def test_a_hidden_option_is_not_configurable(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="unknown key 'secret'"):
        _applied([], toml='secret = "x"', tmp_path=tmp_path)
    assert _applied([], {"PARLEY_SECRET": "x"}).secret is None


def test_flags_win_over_the_environment_which_wins_over_the_file(tmp_path: Path) -> None:
    toml = 'host = "file"\nport = 1\nlog-level = "debug"'
    arguments = _applied(
        ["--host", "flag"], {"PARLEY_HOST": "env", "PARLEY_PORT": "2"}, toml, tmp_path
    )
    assert (arguments.host, arguments.port, arguments.log_level) == ("flag", 2, "debug")


def test_a_flag_spelled_with_equals_and_equal_to_the_default_still_wins() -> None:
    arguments = _applied(["--port=8000"], {"PARLEY_PORT": "9000"})
    assert arguments.port == 8000


def test_the_file_may_be_named_by_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "named.toml"
    path.write_text("port = 4444", "utf-8")
    assert _applied([], {"PARLEY_CONFIG": str(path)}).port == 4444


def test_a_value_from_the_environment_named_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLING_KEY", "k-1")
    toml = 'api-key = [{ env = "BILLING_KEY" }, "k-2"]'
    assert _applied([], toml=toml, tmp_path=tmp_path).api_key == ["k-1", "k-2"]


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("prot = 1", "unknown key 'prot' (known: allowed-host, api-key, host, log-level"),
        ("port = [1, 2]", "port: expected one value, not a list"),
        ('port = "eighty"', "port: invalid literal for int()"),
        ('log-level = "loud"', "log-level: expected one of debug, info"),
        ('reload = "yes"', "reload: expected true or false"),
        ("host = true", "host: expected a string or a number, got bool"),
        ("host = 2026-01-01", "host: expected a string or a number, got date"),
        ("host = { file = 'x' }", 'host: a table value must be { env = "NAME" }'),
        ("host = { env = 1 }", 'host: a table value must be { env = "NAME" }'),
        ("host = { env = 'PARLEY_TEST_UNSET_VARIABLE' }", "PARLEY_TEST_UNSET_VARIABLE is not set"),
        ("port = ", "Invalid value"),
    ],
)
def test_mistakes_in_the_file_are_one_line_naming_the_key(
    tmp_path: Path, toml: str, message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        _applied([], toml=toml, tmp_path=tmp_path)
    text = str(exited.value.code)
    assert text.startswith("parley serve: --config ")
    assert "\n" not in text
    assert message in text


def test_a_missing_or_unreadable_file_is_named(tmp_path: Path) -> None:
    parser = _parser()
    arguments = parser.parse_args(["--config", str(tmp_path / "absent.toml")])
    with pytest.raises(SystemExit, match=r"--config .*absent.toml: .*No such file"):
        apply_config(arguments, parser, {})
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe port = 1")
    arguments = parser.parse_args(["--config", str(tmp_path / "binary.toml")])
    with pytest.raises(SystemExit, match=r"--config .*binary.toml: "):
        apply_config(arguments, parser, {})


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        ({"PARLEY_RELOAD": "maybe"}, "$PARLEY_RELOAD: expected 1, true, yes, on, 0, false"),
        ({"PARLEY_PORT": "x"}, "$PARLEY_PORT: invalid literal for int()"),
        ({"PORT": "x"}, "$PORT: invalid literal for int()"),
        ({"PARLEY_LOG_LEVEL": "loud"}, "$PARLEY_LOG_LEVEL: expected one of debug, info"),
        ({"PARLEY_ALLOWED_HOST": "'unbalanced"}, "$PARLEY_ALLOWED_HOST: No closing quotation"),
    ],
)
def test_a_bad_variable_is_one_line_naming_it(environment: dict[str, str], message: str) -> None:
    with pytest.raises(SystemExit) as exited:
        _applied([], environment)
    assert str(exited.value.code).startswith("parley serve: ")
    assert message in str(exited.value.code)


def test_without_a_file_or_variables_nothing_changes() -> None:
    arguments = _applied(["--port", "1"])
    assert (arguments.host, arguments.port, arguments.reload) == ("127.0.0.1", 1, False)
    assert arguments.allowed_host is None
    assert arguments.target == []
