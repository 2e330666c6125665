"""The caps on what callers hold open (`parley.server.caps`): streams per caller, running
tasks per caller and in all. A refusal is RateLimitedError with `Retry-After: 1`; a caller
is counted as the rate limits count it (its principal, or `@address` when anonymous); every
count goes back to nothing once what held it ends, however it ends (R-OPS-14, R-OPS-15)."""

from __future__ import annotations

import asyncio

import pytest

from parley.protocol.errors import RateLimitedError
from parley.server.caps import Caps
from parley.server.context import CallContext, Caller
from parley.server.quotas import Quotas
from tests.server.support import run

ALICE = CallContext(caller=Caller(id="alice"))
BOB = CallContext(caller=Caller(id="bob"))
ANON_A = CallContext(client="10.0.0.1:5000")
ANON_A_OTHER_PORT = CallContext(client="10.0.0.1:6000")
ANON_B = CallContext(client="10.0.0.2:5000")


def caps(*, streams: int | None = 2, running: int | None = 2, total: int | None = 3) -> Caps:
    return Caps(
        Quotas(max_streams=streams, max_running_tasks=running, max_running_tasks_total=total)
    )


def test_the_caps_are_the_quotas() -> None:
    held = caps(streams=5, running=6, total=7)
    assert (held.max_streams, held.max_running, held.max_total) == (5, 6, 7)
    default = Caps(Quotas())
    assert (default.max_streams, default.max_running, default.max_total) == (1000, 1000, 10_000)


def test_a_caller_holds_up_to_its_streams_then_is_refused() -> None:
    held = caps(streams=2)
    with held.stream(ALICE), held.stream(ALICE):
        assert held.streams == {"alice": 2}
        with pytest.raises(RateLimitedError) as caught, held.stream(ALICE):
            pass  # pragma: no cover - refused before the block
        assert caught.value.retry_after == 1
        assert "at most 2 per caller" in caught.value.message
        with held.stream(BOB):  # another caller has its own count
            assert held.streams == {"alice": 2, "bob": 1}
    assert held.streams == {}


def test_a_refused_stream_holds_nothing() -> None:
    held = caps(streams=1)
    with held.stream(ALICE):
        for _ in range(3):
            with pytest.raises(RateLimitedError), held.stream(ALICE):
                pass  # pragma: no cover
        assert held.streams == {"alice": 1}
    assert held.streams == {}


def test_a_stream_that_fails_gives_its_place_back() -> None:
    held = caps(streams=1)
    with pytest.raises(ConnectionResetError), held.stream(ALICE):
        raise ConnectionResetError
    with held.stream(ALICE):
        assert held.streams == {"alice": 1}


def test_anonymous_streams_count_per_address_not_per_port() -> None:
    """An anonymous client cannot escape the cap by opening connections from new ports."""
    held = caps(streams=1)
    with held.stream(ANON_A):
        assert held.streams == {"@10.0.0.1": 1}
        with pytest.raises(RateLimitedError), held.stream(ANON_A_OTHER_PORT):
            pass  # pragma: no cover
        with held.stream(ANON_B):
            assert held.streams == {"@10.0.0.1": 1, "@10.0.0.2": 1}


def test_without_a_stream_cap_nothing_is_counted() -> None:
    held = caps(streams=None)
    with held.stream(ALICE), held.stream(ALICE), held.stream(ALICE):
        assert held.streams == {}


async def _idle() -> None:
    await asyncio.sleep(0)


def runs(count: int) -> list[asyncio.Task[None]]:
    """Tasks standing for agent runs (created on the running loop, finished at once)."""
    return [asyncio.get_running_loop().create_task(_idle()) for _ in range(count)]


def test_runs_are_admitted_up_to_the_callers_cap() -> None:
    async def scenario() -> None:
        held = caps(running=2, total=10)
        a, b, c = runs(3)
        held.admit_run(ALICE)
        held.started(a, ALICE)
        held.admit_run(ALICE)
        held.started(b, ALICE)
        with pytest.raises(RateLimitedError) as caught:
            held.admit_run(ALICE)
        assert "at most 2 per caller" in caught.value.message
        assert caught.value.retry_after == 1
        held.admit_run(BOB)  # Bob's count is his own
        held.started(c, BOB)
        assert (held.running, held.total) == ({"alice": 2, "bob": 1}, 3)
        held.ended(a)
        held.admit_run(ALICE)  # a run ended: Alice may begin another
        assert (held.running, held.total) == ({"alice": 1, "bob": 1}, 2)
        await asyncio.gather(a, b, c)

    run(scenario())


def test_the_total_cap_refuses_everyone_once_reached() -> None:
    async def scenario() -> None:
        held = caps(running=5, total=2)
        a, b = runs(2)
        held.started(a, ALICE)
        held.started(b, BOB)
        for ctx in (ALICE, BOB, ANON_A):
            with pytest.raises(RateLimitedError, match="at most 2 at once"):
                held.admit_run(ctx)
        held.ended(b)
        held.admit_run(ANON_A)
        await asyncio.gather(a, b)

    run(scenario())


def test_without_run_caps_every_run_is_admitted_but_still_counted() -> None:
    async def scenario() -> None:
        held = caps(running=None, total=None)
        tasks = runs(4)
        for task in tasks:
            held.admit_run(ALICE)
            held.started(task, ALICE)
        assert (held.running, held.total) == ({"alice": 4}, 4)
        for task in tasks:
            held.ended(task)
        assert (held.running, held.total) == ({}, 0)
        await asyncio.gather(*tasks)

    run(scenario())


def test_anonymous_runs_count_per_address() -> None:
    async def scenario() -> None:
        held = caps(running=1, total=10)
        a, b = runs(2)
        held.started(a, ANON_A)
        assert held.running == {"@10.0.0.1": 1}
        with pytest.raises(RateLimitedError):
            held.admit_run(ANON_A_OTHER_PORT)
        held.admit_run(ANON_B)
        held.started(b, CallContext())  # no address known
        assert held.running == {"@10.0.0.1": 1, "@unknown": 1}
        held.ended(a)
        held.ended(b)
        assert held.running == {}
        await asyncio.gather(a, b)

    run(scenario())


def test_ending_a_run_twice_or_one_never_started_changes_nothing() -> None:
    async def scenario() -> None:
        held = caps()
        a, stranger = runs(2)
        held.started(a, ALICE)
        held.ended(a)
        held.ended(a)
        held.ended(stranger)
        assert (held.running, held.total) == ({}, 0)
        await asyncio.gather(a, stranger)

    run(scenario())


def test_an_empty_count_is_not_kept() -> None:
    """Counts of callers with nothing open are removed, so the maps do not grow with every
    caller ever seen."""

    async def scenario() -> None:
        held = caps(running=3, total=100)
        tasks = runs(20)
        for i, task in enumerate(tasks):
            held.started(task, CallContext(caller=Caller(id=f"user-{i}")))
        for task in tasks:
            held.ended(task)
        assert held.running == {}
        assert held.total == 0
        await asyncio.gather(*tasks)

    run(scenario())
