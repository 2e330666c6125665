"""Execution leases in Redis (`parley.server.redis_leases.RedisLeases`, DESIGN 7) against
the real Redis, under a key of each test's own (deleted afterwards): a lease is held while
a run goes and let go when it ends; a lease that ran out is won by exactly one replica
however many look at once; a holder renewing a lease someone took learns it lost it; a
lease given back is recovered again; a failed removal is logged, not raised."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import pytest
import redis.asyncio as aioredis

from parley.server import redis_leases
from parley.server.redis_leases import RedisLeases
from parley.server.stores.base import TaskKey

T = TypeVar("T")
REDIS = "redis://127.0.0.1:6379/0"
TASK = TaskKey("acme", "alice", "t-1")
OTHER = TaskKey("acme", "bob", "t-2")


def run(make: Callable[[Any, str], Coroutine[Any, Any, T]]) -> T:
    """Run `make(client, key)` with a Redis client and a fresh key, deleted afterwards."""

    async def main() -> T:
        client = aioredis.from_url(REDIS)
        key = f"parley-test-{uuid.uuid4().hex[:10]}:leases"
        try:
            return await asyncio.wait_for(make(client, key), 5)
        finally:
            await client.delete(key)
            await client.aclose()

    return asyncio.run(main())


async def members(client: Any, key: str) -> dict[tuple[str, ...], float]:
    """The leases as stored: (tenant, caller, task id, holder) → the time it runs out."""
    raw = await client.zrange(key, 0, -1, withscores=True)
    return {tuple(json.loads(member)): score for member, score in raw}


def test_a_held_lease_runs_out_ttl_after_it_was_taken_and_is_let_go() -> None:
    async def scenario(client: Any, key: str) -> dict[tuple[str, ...], float]:
        leases = RedisLeases(client, key, replica="r1", ttl=30)
        before = (await client.time())[0] * 1000
        await leases.hold(TASK)
        stored = await members(client, key)
        [(member, until)] = stored.items()
        assert member == ("acme", "alice", "t-1", "r1")
        assert before + 29_000 <= until <= before + 32_000
        leases.let_go(TASK)
        await leases.close()
        return await members(client, key)

    assert run(scenario) == {}


def test_letting_go_of_a_lease_not_held_does_nothing() -> None:
    async def scenario(client: Any, key: str) -> int:
        leases = RedisLeases(client, key, replica="r1")
        leases.let_go(TASK)
        await leases.close()
        return int(await client.zcard(key))

    assert run(scenario) == 0


def test_a_live_lease_is_not_expired() -> None:
    async def scenario(client: Any, key: str) -> list[tuple[TaskKey, str]]:
        holder = RedisLeases(client, key, replica="r1", ttl=30)
        await holder.hold(TASK)
        return await RedisLeases(client, key, replica="r2").expired()

    assert run(scenario) == []


def test_a_lease_that_ran_out_is_won_by_exactly_one_replica() -> None:
    """Many replicas sweep at once: each task is recovered once, by one of them."""

    async def scenario(client: Any, key: str) -> list[list[tuple[TaskKey, str]]]:
        dead = RedisLeases(client, key, replica="dead", ttl=0)
        await dead.hold(TASK)
        await dead.hold(OTHER)
        sweepers = [RedisLeases(client, key, replica=f"r{i}") for i in range(5)]
        won = await asyncio.gather(*(s.expired() for s in sweepers))
        assert await members(client, key) == {}
        return list(won)

    won = run(scenario)
    flat = [item for each in won for item in each]
    assert sorted(flat) == sorted([(TASK, "dead"), (OTHER, "dead")])
    assert all(isinstance(task, TaskKey) for task, _ in flat)


def test_expired_takes_at_most_its_limit() -> None:
    async def scenario(client: Any, key: str) -> tuple[int, int]:
        dead = RedisLeases(client, key, replica="dead", ttl=0)
        for i in range(5):
            await dead.hold(TaskKey("", "c", f"t-{i}"))
        sweeper = RedisLeases(client, key, replica="r")
        first = await sweeper.expired(limit=2)
        rest = await sweeper.expired()
        return len(first), len(rest)

    assert run(scenario) == (2, 3)


def test_renewing_moves_held_leases_ahead() -> None:
    async def scenario(client: Any, key: str) -> tuple[float, float, list[TaskKey]]:
        lost: list[TaskKey] = []
        leases = RedisLeases(client, key, replica="r1", ttl=0)
        leases.lost = lost.append
        await leases.hold(TASK)
        [before] = (await members(client, key)).values()
        leases.ttl_ms = 60_000
        await leases.renew_held()
        [after] = (await members(client, key)).values()
        return before, after, lost

    before, after, lost = run(scenario)
    assert after >= before + 59_000
    assert lost == []


def test_a_holder_whose_lease_was_taken_learns_it_lost_it() -> None:
    """Another replica thought this one dead and recovered its task: the holder's run must
    stop, and its renewal must not put the lease back."""

    async def scenario(client: Any, key: str) -> tuple[list[TaskKey], dict[Any, float]]:
        lost: list[TaskKey] = []
        slow = RedisLeases(client, key, replica="slow", ttl=0)
        slow.lost = lost.append
        await slow.hold(TASK)
        await slow.hold(OTHER)
        await client.zadd(key, {json.dumps([*OTHER, "slow"], separators=(",", ":")): 10**15})
        [(taken, _)] = [w for w in await RedisLeases(client, key).expired() if w[0] == TASK]
        assert taken == TASK
        await slow.renew_held()
        await slow.renew_held()  # told once
        return lost, await members(client, key)

    lost, left = run(scenario)
    assert lost == [TASK]
    assert list(left) == [("acme", "bob", "t-2", "slow")]


def test_renewing_nothing_asks_nothing() -> None:
    class Silent:
        def pipeline(self, **kwargs: object) -> None:
            raise AssertionError("no lease held: no pipeline")

    asyncio.run(RedisLeases(Silent(), "unused").renew_held())


def test_a_lease_given_back_is_swept_again() -> None:
    """A replica that won a lease but could not recover the task gives it back, run out."""

    async def scenario(client: Any, key: str) -> list[tuple[TaskKey, str]]:
        dead = RedisLeases(client, key, replica="dead", ttl=0)
        await dead.hold(TASK)
        first = RedisLeases(client, key, replica="r1")
        [(task, holder)] = await first.expired()
        await first.give_back(task, holder)
        return await RedisLeases(client, key, replica="r2").expired()

    assert run(scenario) == [(TASK, "dead")]


def test_holding_again_waits_for_the_last_runs_removal() -> None:
    """A follow-up's run starts right after the last one ended: its lease must not be
    removed by the last run's removal still on its way."""

    async def scenario(client: Any, key: str) -> dict[Any, float]:
        leases = RedisLeases(client, key, replica="r1", ttl=30)
        await leases.hold(TASK)
        leases.let_go(TASK)
        await leases.hold(TASK)
        await leases.close()
        return await members(client, key)

    assert list(run(scenario)) == [("acme", "alice", "t-1", "r1")]


class FailingRemoval:
    """The real client, but ZREM fails (the connection dropped)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def zrem(self, *args: object) -> Awaitable[int]:
        raise ConnectionError("connection reset")


def test_a_removal_that_fails_is_logged_and_the_lease_left_to_run_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario(client: Any, key: str) -> dict[Any, float]:
        leases = RedisLeases(FailingRemoval(client), key, replica="r1", ttl=30)
        await leases.hold(TASK)
        leases.let_go(TASK)
        await leases.close()
        return await members(client, key)

    with caplog.at_level(logging.WARNING, logger="parley.bus"):
        left = run(scenario)
    assert list(left) == [("acme", "alice", "t-1", "r1")]
    assert any("not let go" in r.getMessage() for r in caplog.records)


def test_each_replica_gets_an_id_of_its_own_and_renews_at_a_third_of_the_ttl() -> None:
    one, two = RedisLeases(None, "k"), RedisLeases(None, "k")
    assert one.replica != two.replica
    assert (one.ttl_ms, one.renew) == (6000, 2.0)
    assert RedisLeases(None, "k", ttl=9, renew=1.5).renew == 1.5


def test_a_renewal_in_the_millisecond_of_the_hold_loses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hold and a renewal in one millisecond (a stopped clock here) give the lease the
    score it has: nothing changes, and the lease is still held. It was taken for lost,
    and the run just begun stopped, when ZADD's changed count was read."""
    monkeypatch.setattr(redis_leases, "_now_ms", lambda: 1_700_000_000_000)

    async def scenario(client: Any, key: str) -> tuple[list[TaskKey], list[float]]:
        lost: list[TaskKey] = []
        leases = RedisLeases(client, key, replica="r1", ttl=30)
        leases.lost = lost.append
        await leases.hold(TASK)
        await leases.renew_held()
        await leases.renew_held()
        return lost, list((await members(client, key)).values())

    lost, scores = run(scenario)
    assert lost == []
    assert scores == [1_700_000_030_000]
