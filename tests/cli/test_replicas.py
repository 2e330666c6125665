"""`parley serve`'s replica options (`parley.cli.replicas`) in-process: `--bus` takes a Redis
URL only, over a store the replicas share, and never echoes a password; `--workers` hands
each worker the server's command line without `--workers`, listening on the given socket
(docs/deploy.md). The workers themselves, as processes, are in test_serve_many.py and
tests/replicas/."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.cli.main import build_parser
from parley.cli.replicas import event_bus, listen_options, worker_argv


def serve(*flags: str) -> argparse.Namespace:
    return build_parser("serve").parse_args(["serve", "examples.echo:agent", *flags])


def test_no_bus_without_the_option() -> None:
    assert event_bus(None, "memory") is None


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:hunter2@db/x",
        "http://redis:6379",
        "memory",
        "amqp://guest:hunter2@mq/",
    ],
)
def test_a_bus_is_redis_and_its_password_is_never_shown(url: str) -> None:
    with pytest.raises(SystemExit) as exited:
        event_bus(url, "sqlite:///shared.db")
    message = str(exited.value.code)
    assert message.startswith("parley serve: --bus: expected redis://host:port/db, got ")
    assert "hunter2" not in message


@pytest.mark.parametrize("store", ["memory", " memory ", "memory://"])
def test_a_bus_needs_a_store_the_replicas_share(store: str) -> None:
    with pytest.raises(SystemExit, match="--bus needs a store the replicas share"):
        event_bus("redis://127.0.0.1:6379/0", store)


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/0", "REDIS://127.0.0.1:6379/1"])
def test_a_redis_url_over_a_shared_store_is_a_bus(url: str) -> None:
    bus = event_bus(url, "sqlite:///shared.db")
    assert bus is not None


def test_a_bad_bus_option_is_one_line() -> None:
    with pytest.raises(SystemExit, match=r"^parley serve: --bus: "):
        event_bus("redis://127.0.0.1:6379/0?lease=soon", "sqlite:///shared.db")


def test_a_server_listens_on_its_host_and_port() -> None:
    assert listen_options(serve("--host", "0.0.0.0", "--port", "9000")) == {
        "host": "0.0.0.0",
        "port": 9000,
    }


def test_a_worker_listens_on_the_socket_it_was_given() -> None:
    assert listen_options(serve("--listen-fd", "7", "--workers", "0")) == {"fd": 7}


@pytest.mark.parametrize("count", ["0", "-2"])
def test_workers_must_be_at_least_one(count: str) -> None:
    with pytest.raises(SystemExit, match="--workers must be at least 1"):
        listen_options(serve("--workers", count))


def test_the_listen_fd_option_is_hidden() -> None:
    assert "--listen-fd" not in _serve_help()
    assert "--workers" in _serve_help()


def _serve_help() -> str:
    parser = build_parser("serve")
    commands = next(
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    return str(commands.choices["serve"].format_help())


@pytest.mark.parametrize(
    ("argv", "worker"),
    [
        (["serve", "m:a", "--workers", "4"], ["serve", "m:a", "--listen-fd", "3"]),
        (
            ["serve", "m:a", "--workers=4", "--port", "80"],
            ["serve", "m:a", "--port", "80", "--listen-fd", "3"],
        ),
        (
            ["serve", "--workers", "2", "m:a", "--bus", "redis://r"],
            ["serve", "m:a", "--bus", "redis://r", "--listen-fd", "3"],
        ),
        (["serve", "m:a"], ["serve", "m:a", "--listen-fd", "3"]),
    ],
)
def test_a_workers_command_line_is_the_servers_without_workers(
    argv: list[str], worker: list[str]
) -> None:
    assert worker_argv(argv, 3) == worker


ordinary = st.sampled_from(["serve", "m:a", "--port", "80", "-v", "x", "--bus", "redis://r"])
workers = st.integers(min_value=1, max_value=9).flatmap(
    lambda n: st.sampled_from([("--workers", str(n)), (f"--workers={n}",)])
)
pieces = st.lists(ordinary.map(lambda word: (word,)) | workers, max_size=10)


@given(pieces, st.integers(min_value=0, max_value=1000))
def test_a_worker_never_spawns_workers_and_keeps_every_other_word_in_order(
    given_pieces: list[tuple[str, ...]], fd: int
) -> None:
    argv = [word for piece in given_pieces for word in piece]
    others = [piece[0] for piece in given_pieces if not piece[0].startswith("--workers")]
    assert worker_argv(argv, fd) == [*others, "--listen-fd", str(fd)]
