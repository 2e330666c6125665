"""The test suite's port helper: ports named before their server binds them never collide
across workers, with each other, or with the kernel's ephemeral ports."""

from __future__ import annotations

import itertools
import socket

import pytest

from tests import ports


def test_ports_are_distinct_and_below_the_ephemeral_range() -> None:
    given = [ports.free_port() for _ in range(50)]
    assert len(set(given)) == len(given)
    block = ports._block()
    assert all(block <= port < block + ports.BLOCK < 32768 for port in given)


def test_each_worker_has_its_own_block(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = set()
    for worker in ["", "gw0", "gw1", "gw2", "gw10"]:
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        blocks.add(ports._block())
    assert len(blocks) == 5


def test_a_port_something_holds_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    block = ports._block()
    monkeypatch.setattr(ports, "_next", itertools.count(0))
    first = ports.free_port()
    with socket.socket() as held:
        held.bind(("127.0.0.1", first))
        monkeypatch.setattr(ports, "_next", itertools.count(first - block))
        assert ports.free_port() > first
