"""`parley serve` set up for production: every option from a PARLEY_* variable (flags
win, then the environment, then --config), targets as modules, files or attributes, and
the mistakes found before start — a class for an agent, a port in use, a store that
cannot be reached or written — each one line with a hint, never a traceback."""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

import httpx
import pytest

from parley.cli.config import apply_config, env_name
from parley.cli.main import build_parser
from parley.cli.preflight import check_port, check_store
from parley.cli.serve import _PARSERS, run_serve
from parley.cli.targets import load_target
from parley.server.agent import Agent
from tests.cli.runner import ROOT, parley, start
from tests.cli.test_serve_hosts import _wait_until_up
from tests.ports import free_port


def _parsed(*argv: str, env: dict[str, str], config: str | None = None) -> argparse.Namespace:
    command = ["serve", *argv]
    arguments = build_parser().parse_args(command)
    arguments.argv = command
    if config is not None:
        arguments.config = config
    apply_config(arguments, _PARSERS[-1], env)
    return arguments


# ------------------------------------------------------------------ environment


def test_every_option_has_a_variable_and_flags_win_over_it() -> None:
    env = {
        "PARLEY_TARGET": "echo=examples.echo:agent counter=examples.streaming:agent",
        "PARLEY_PORT": "9001",
        "PARLEY_HOST": "0.0.0.0",
        "PARLEY_ALLOW_ANONYMOUS": "yes",
        "PARLEY_ALLOWED_HOST": "a.example 'b.example'",
        "PARLEY_LOG_LEVEL": "DEBUG",
        "PARLEY_MAX_STREAMS": "7",  # an option another module adds
    }
    arguments = _parsed("--host", "127.0.0.1", env=env)
    assert arguments.target == ["echo=examples.echo:agent", "counter=examples.streaming:agent"]
    assert (arguments.port, arguments.host) == (9001, "127.0.0.1")
    assert arguments.allow_anonymous is True
    assert arguments.allowed_hosts == ["a.example", "b.example"]
    assert (arguments.log_level, arguments.max_streams) == ("debug", 7)


def test_a_variable_name_holds_only_letters_digits_and_underscores() -> None:
    assert env_name("tls-v1.3-only") == "PARLEY_TLS_V1_3_ONLY"


def test_a_flag_equal_to_the_default_still_wins() -> None:
    assert _parsed("--port", "8000", env={"PARLEY_PORT": "9001"}).port == 8000
    assert _parsed("--port=8000", env={"PARLEY_PORT": "9001"}).port == 8000


def test_port_is_read_as_hosting_platforms_set_it() -> None:
    assert _parsed(env={"PORT": "9002"}).port == 9002
    assert _parsed(env={"PORT": "9002", "PARLEY_PORT": "9003"}).port == 9003


def test_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    config = tmp_path / "parley.toml"
    config.write_text('port = 9004\nhost = "0.0.0.0"\n')
    arguments = _parsed(env={"PARLEY_PORT": "9005"}, config=str(config))
    assert (arguments.port, arguments.host) == (9005, "0.0.0.0")


def test_the_file_may_be_named_by_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "parley.toml"
    config.write_text("port = 9006\n")
    assert _parsed(env={"PARLEY_CONFIG": str(config)}).port == 9006


def test_the_client_credential_variable_is_not_an_api_key_of_the_server() -> None:
    assert _parsed(env={"PARLEY_API_KEY": "k-client"}).api_key == []


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"PARLEY_PORT": "eighty"}, r"^parley serve: \$PARLEY_PORT: invalid literal"),
        ({"PARLEY_ALLOW_ANONYMOUS": "maybe"}, r"\$PARLEY_ALLOW_ANONYMOUS: expected 1, true"),
        ({"PARLEY_CARD": "v2"}, r"\$PARLEY_CARD: expected one of hybrid, v1"),
        ({"PARLEY_LOG_LEVEL": "loud"}, r"\$PARLEY_LOG_LEVEL: expected one of critical"),
    ],
)
def test_a_bad_variable_is_named_in_one_line(env: dict[str, str], message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        _parsed(env=env)


# ------------------------------------------------------------------ targets


@pytest.mark.parametrize(
    "spec", ["examples.echo:agent", "examples.echo", "examples/echo.py", "examples/echo.py:agent"]
)
def test_a_target_is_a_module_a_file_or_an_attribute(
    spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert isinstance(load_target(spec), Agent)


def test_a_file_outside_any_package_is_imported_from_its_folder(tmp_path: Path) -> None:
    path = tmp_path / "solo_agent_file.py"
    path.write_text('from parley.server.agent import Agent\napp = Agent("Solo")\n')
    assert load_target(str(path)).name == "Solo"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("examples.echo:Agent", r"is a class, not an agent; did you mean .*examples.echo:agent"),
        ("examples.echo:__name__", r"is a str, not an Agent, a request handler or an ASGI app"),
        ("examples.echo:echo", r"is not an ASGI app \(it does not take scope"),
        ("examples.multi_turn:nothing", r"has no 'nothing'"),
        ("parley.cli", r"has no 'agent' nor 'app'"),
        ("no/such/file.py", r"no such file"),
    ],
)
def test_a_wrong_target_is_refused_in_one_line(
    spec: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit, match=r"^parley serve: .*" + message):
        load_target(spec)


def test_a_class_is_refused_at_start_not_served_as_500s() -> None:
    run = parley("serve", "examples.echo:Agent", "--port", str(free_port()))
    assert run.code == 1
    assert run.err.splitlines() == [
        "parley serve: examples.echo:Agent is a class, not an agent; did you mean an "
        "instance, examples.echo:agent?"
    ]


# ------------------------------------------------------------------ checked before start


def test_a_port_in_use_is_one_line_before_the_store_is_opened(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        store = tmp_path / "never.db"
        run = parley(
            "serve", "examples.echo:agent", "--port", str(port), "--store", f"sqlite:///{store}"
        )
    assert run.code == 1
    hint = "try another --port, or stop what serves it"
    assert run.err == f"parley serve: port {port} is in use on 127.0.0.1 ({hint})\n"
    assert not store.exists()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "postgresql://nobody@127.0.0.1:1/x",
            "cannot connect to postgresql://nobody@127.0.0.1:1/x: connection refused "
            "(is the database running there, on that port?)",
        ),
        (
            "postgresql://postgres@127.0.0.1:5432/parley_no_such_database",
            "cannot connect to postgresql://postgres@127.0.0.1:5432/parley_no_such_database: "
            'database "parley_no_such_database" does not exist',
        ),
    ],
)
def test_an_unreachable_postgresql_is_one_line(url: str, message: str) -> None:
    with pytest.raises(SystemExit) as raised:
        check_store(url)
    assert str(raised.value) == f"parley serve: --store: {message}"


def test_an_unwritable_sqlite_path_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as raised:
        check_store(f"sqlite:///{blocker}/tasks.db")
    assert str(raised.value) == (
        f"parley serve: --store: cannot open sqlite:///{blocker}/tasks.db: "
        f"{blocker} is a file, where a folder is needed"
    )


def test_a_reachable_store_passes_and_nothing_is_migrated(tmp_path: Path) -> None:
    check_store("memory")
    check_store("postgresql://postgres@127.0.0.1:5432/test")
    check_store(f"sqlite:///{tmp_path / 'deep' / 'tasks.db'}")
    assert (tmp_path / "deep" / "tasks.db").stat().st_size == 0  # created, not migrated


def test_serve_and_db_status_say_an_unreachable_store_in_one_line() -> None:
    url = "postgresql://nobody@127.0.0.1:1/x"
    served = parley("serve", "examples.echo:agent", "--port", str(free_port()), "--store", url)
    status = parley("db", "status", "--store", url)
    bus = ["--workers", "2", "--bus", "redis://127.0.0.1:6379/0"]
    workers = parley(
        "serve", "examples.echo:agent", "--port", str(free_port()), "--store", url, *bus
    )
    assert (served.code, len(served.err.splitlines())) == (1, 1), served
    assert served.err.startswith(f"parley serve: --store: cannot connect to {url}: ")
    assert (status.code, len(status.err.splitlines())) == (1, 1), status
    assert status.err.startswith(f"parley db status: cannot connect to {url}: ")
    assert (workers.code, workers.err) == (1, served.err)  # once, not once per worker


def test_check_port_names_a_host_that_cannot_be_bound() -> None:
    with pytest.raises(SystemExit, match=r"--host no-such-host\.invalid: .*\(try 127\.0\.0\.1\)"):
        check_port("no-such-host.invalid", free_port())


# ------------------------------------------------------------------ the default example


def test_options_alone_serve_the_target_the_environment_names(tmp_path: Path) -> None:
    """What `./scripts/serve --port N` does: the script names the echo agent in
    $PARLEY_TARGET, so options alone keep it."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start(
        "serve",
        "--port",
        str(port),
        "--store",
        "memory",
        env={"PARLEY_TARGET": "examples.echo:agent"},
    )
    try:
        _wait_until_up(url, process)
        card = httpx.get(url + "/.well-known/agent-card.json", timeout=5).json()
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert card["name"] == "Echo"


def test_without_any_target_the_command_says_how_to_name_one() -> None:
    arguments = build_parser().parse_args(["serve"])
    arguments.argv = ["serve"]
    with pytest.raises(SystemExit, match=r"name the agent .*\$PARLEY_TARGET"):
        run_serve(arguments)
