"""Where the rate limits count (`parley.server.quota_counts`): the memory counters' windows
and sweep, and the Redis counters against the real Redis at 127.0.0.1:6379 (keys under a
prefix of this test's own, removed afterwards)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import pytest

from parley.server import quota_counts
from parley.server.quota_counts import MemoryCounts, RedisCounts, counts_at

REDIS = "redis://127.0.0.1:6379/0"


def test_a_memory_window_counts_then_opens_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = MemoryCounts()
    now = [1000.0]
    monkeypatch.setattr("parley.server.quota_counts.time.time", lambda: now[0])
    assert asyncio.run(counts.hit("k", 10)) == (1, 1010.0)
    assert counts.count("k", 10) == (2, 1010.0)
    now[0] = 1010.0  # the window's end: a new one
    assert counts.count("k", 10) == (1, 1020.0)


def test_the_expired_memory_windows_are_swept(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = MemoryCounts(sweep_at=3)
    now = [0.0]
    monkeypatch.setattr("parley.server.quota_counts.time.time", lambda: now[0])
    counts.count("old-1", 1)
    counts.count("old-2", 1)
    counts.count("live", 100)
    now[0] = 5.0
    counts.count("new", 1)  # holds 3: the expired ones go
    assert set(counts.windows) == {"live", "new"}
    assert counts.count("live", 100) == (2, 100.0)


def test_counts_at_names_the_storage() -> None:
    assert isinstance(counts_at("memory"), MemoryCounts)
    assert isinstance(counts_at("memory://"), MemoryCounts)
    assert isinstance(counts_at(REDIS), RedisCounts)
    with pytest.raises(ValueError, match="memory, or a redis:// URL"):
        counts_at("memcached://x")


async def _close(*counts: RedisCounts) -> None:
    """Lets go of the counters' Redis connections."""
    for each in counts:
        client = each.storage.bridge.storage
        await client.aclose()
        await client.connection_pool.disconnect()


@pytest.fixture
def prefix() -> Iterator[str]:
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(REDIS)
    try:
        client.ping()
    except redis.ConnectionError:
        pytest.skip("no Redis at 127.0.0.1:6379")
    name = f"parley-test-quota-counts-{uuid.uuid4().hex}"
    try:
        yield name
    finally:
        keys = list(client.scan_iter(match=f"*{name}*"))
        if keys:
            client.delete(*keys)
        client.close()


def test_redis_counts_share_a_window_across_replicas(prefix: str) -> None:
    async def scenario() -> list[tuple[int, float]]:
        first, second = RedisCounts(REDIS), RedisCounts(REDIS)
        hits = [
            await first.hit(f"{prefix}:k", 60),  # opens the window
            await first.hit(f"{prefix}:k", 60),  # its end remembered
            await second.hit(f"{prefix}:k", 60),  # another replica reads the end
        ]
        second._ends[f"{prefix}:k"] = 0.0  # an end passed: read again
        hits.append(await second.hit(f"{prefix}:k", 60))
        await _close(first, second)
        return hits

    before = time.time()
    hits = asyncio.run(scenario())
    assert [used for used, _ in hits] == [1, 2, 3, 4]
    opened = hits[0][1]
    assert before + 60 <= opened <= time.time() + 60
    assert hits[1][1] == opened
    for _, end in hits[2:]:
        assert abs(end - opened) < 2  # Redis's expiry of the same window


def test_redis_counts_forget_the_ends_when_they_hold_many(
    prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(quota_counts, "_RESETS_KEPT", 2)

    async def scenario() -> dict[str, float]:
        counts = RedisCounts(REDIS)
        for name in ("a", "b", "c"):
            assert (await counts.hit(f"{prefix}:{name}", 30))[0] == 1
        await _close(counts)
        return counts._ends

    ends = asyncio.run(scenario())
    assert list(ends) == [f"{prefix}:c"]
