"""The connection registry of `parley serve` (`parley.cli.connection_guard.Connections`)
in-process, on a fake clock: at the cap the least recently active connection not running
a request is closed to make room, a new one is refused only when every connection is
answering (a stream is never cut), and the closures are reported as one warning at most
every `REPORT_EVERY` seconds (docs/cli.md: `--max-connections`). The guard on real sockets
is in test_connections.py."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from parley.cli.connection_guard import (
    REPORT_EVERY,
    TIMED_OUT,
    TOO_LARGE,
    UNAVAILABLE,
    Connections,
    Guard,
)


@dataclass
class Clock:
    """The loop's clock and its timers, turned by hand."""

    now: float = 100.0
    timers: list[tuple[float, Callable[..., None], tuple[Any, ...]]] = field(default_factory=list)

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[..., None], *args: Any) -> object:
        self.timers.append((when, callback, args))
        return object()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = [timer for timer in self.timers if timer[0] <= self.now]
        self.timers = [timer for timer in self.timers if timer[0] > self.now]
        for _, callback, args in due:
            callback(*args)


@dataclass(eq=False)
class Connection:
    """What the registry asks of a connection: its loop, whether it is running a
    request, when it was last active; and being shed."""

    loop: Clock
    active: int
    running: bool = False
    shed_count: int = 0

    def shed(self) -> None:
        self.shed_count += 1


def admitted(registry: Connections, connection: Connection) -> bool:
    return registry.admit(cast(Guard, connection))


def open_ones(registry: Connections) -> set[object]:
    return set(registry.open)


def test_under_the_cap_every_connection_is_taken_in() -> None:
    clock, registry = Clock(), Connections(cap=3)
    connections = [Connection(clock, active=n) for n in range(3)]
    assert all(admitted(registry, c) for c in connections)
    assert open_ones(registry) == set(connections)
    assert all(c.shed_count == 0 for c in connections)


def test_at_the_cap_the_least_recently_active_idle_one_makes_room() -> None:
    clock, registry = Clock(), Connections(cap=3)
    oldest_running = Connection(clock, active=1, running=True)
    old_idle = Connection(clock, active=2)
    new_idle = Connection(clock, active=3)
    for connection in (oldest_running, old_idle, new_idle):
        admitted(registry, connection)
    newcomer = Connection(clock, active=4)
    assert admitted(registry, newcomer)
    assert old_idle.shed_count == 1
    assert (oldest_running.shed_count, new_idle.shed_count) == (0, 0)
    assert open_ones(registry) == {oldest_running, new_idle, newcomer}


def test_when_every_connection_is_answering_the_newcomer_is_refused() -> None:
    clock, registry = Clock(), Connections(cap=2)
    streams = [Connection(clock, active=n, running=True) for n in (1, 2)]
    for stream in streams:
        admitted(registry, stream)
    newcomer = Connection(clock, active=3)
    assert not admitted(registry, newcomer)
    assert all(stream.shed_count == 0 for stream in streams)
    assert newcomer in open_ones(registry)  # taken in all the same, as the next to close
    assert admitted(registry, Connection(clock, active=4, running=True))
    assert newcomer.shed_count == 1  # the refused one, not running, makes room first


def test_a_dropped_connection_frees_its_place() -> None:
    clock, registry = Clock(), Connections(cap=1)
    first = Connection(clock, active=1, running=True)
    admitted(registry, first)
    registry.drop(cast(Guard, first))
    registry.drop(cast(Guard, first))  # twice is harmless
    assert admitted(registry, Connection(clock, active=2))
    assert first.shed_count == 0


def test_the_first_closure_is_reported_at_once(caplog: pytest.LogCaptureFixture) -> None:
    clock, registry = Clock(), Connections(cap=5)
    with caplog.at_level(logging.WARNING, logger="parley"):
        registry.note("headers too slow", cast(Any, clock))
    [record] = caplog.records
    assert record.getMessage() == (
        "slow or greedy HTTP clients: connections closed or refused: 1 headers too slow "
        "(0 connections open, at most 5)"
    )


def test_closures_within_the_period_are_counted_into_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, registry = Clock(), Connections(cap=5)
    with caplog.at_level(logging.WARNING, logger="parley"):
        registry.note("headers too slow", cast(Any, clock))
        clock.advance(1.0)
        registry.note("body too slow", cast(Any, clock))
        registry.note("body too slow", cast(Any, clock))
        registry.note("headers too large", cast(Any, clock))
        assert len(caplog.records) == 1
        assert [when for when, _, _ in clock.timers] == [100.0 + REPORT_EVERY]
        clock.advance(REPORT_EVERY)
    assert len(caplog.records) == 2
    assert (
        caplog.records[1]
        .getMessage()
        .startswith(
            "slow or greedy HTTP clients: connections closed or refused: "
            "2 body too slow, 1 headers too large ("
        )
    )


def test_a_quiet_period_reports_nothing_and_the_next_closure_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, registry = Clock(), Connections(cap=5)
    with caplog.at_level(logging.WARNING, logger="parley"):
        registry.note("closed at the cap", cast(Any, clock))
        clock.advance(REPORT_EVERY * 3)
        assert clock.timers == []
        registry.note("refused at the cap", cast(Any, clock))
    assert [r.getMessage().split(": ")[1].split(" (")[0] for r in caplog.records] == [
        "connections closed or refused",
        "connections closed or refused",
    ]
    assert "1 refused at the cap" in caplog.records[1].getMessage()


def test_a_refusal_at_the_cap_is_counted(caplog: pytest.LogCaptureFixture) -> None:
    clock, registry = Clock(), Connections(cap=1)
    admitted(registry, Connection(clock, active=1, running=True))
    with caplog.at_level(logging.WARNING, logger="parley"):
        admitted(registry, Connection(clock, active=2))
    assert "1 refused at the cap (1 connections open, at most 1)" in caplog.text


@pytest.mark.parametrize(
    ("answer", "status", "code"),
    [
        (TOO_LARGE, "431 Request Header Fields Too Large", "INVALID_ARGUMENT"),
        (TIMED_OUT, "408 Request Timeout", "DEADLINE_EXCEEDED"),
        (UNAVAILABLE, "503 Service Unavailable", "UNAVAILABLE"),
    ],
)
def test_the_refusals_are_complete_http_answers_in_the_rest_error_form(
    answer: bytes, status: str, code: str
) -> None:
    """The 1.0 REST error body (google.rpc.Status, REFERENCE §6.5), and a closed
    connection: the client reads one answer, whole."""
    head, body = answer.decode().split("\r\n\r\n", 1)
    lines = head.split("\r\n")
    assert lines[0] == f"HTTP/1.1 {status}"
    headers = dict(line.split(": ", 1) for line in lines[1:])
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body.encode())
    error = json.loads(body)["error"]
    assert (error["code"], error["status"]) == (int(status.split(maxsplit=1)[0]), code)
    assert error["message"]
    assert ("retry-after" in headers) is (answer is UNAVAILABLE)
