"""Whether a server can do its work: probes of what it depends on (its task store, the
Redis of its event bus), each given a short deadline. What `/readyz` answers
(`parley.asgi.readiness`); a load balancer sends traffic only to a ready replica.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

Probe = Callable[[], Awaitable[object]]
"""Raises (or does not finish in time) when the dependency cannot be reached."""

DEFAULT_TIMEOUT = 1.0
"""Seconds each probe may take."""

PROBE_TASK_ID = "readiness-probe"


def store_probe(store: Any) -> Probe:
    """A task store answers a read (of a task that does not exist) on its own connection
    or pool."""

    async def probe() -> object:
        return await store.get(("", ""), PROBE_TASK_ID)

    return probe


def redis_probe(url: str) -> Probe:
    """The Redis at `url` (its options after `?` are Parley's own) answers PING, on a
    connection of the probe's own."""

    async def probe() -> object:
        import redis.asyncio  # noqa: PLC0415 - the redis extra, needed with a bus only

        client = redis.asyncio.Redis.from_url(url.partition("?")[0])
        try:
            return await client.ping()
        finally:
            await client.aclose()

    return probe


async def _outcome(probe: Probe, timeout: float) -> str:
    try:
        async with asyncio.timeout(timeout):
            await probe()
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except Exception as exc:  # any failure means "not ready", and says which
        return f"{type(exc).__name__}: {exc}"[:200]
    return "ok"


async def check(probes: Mapping[str, Probe], timeout: float = DEFAULT_TIMEOUT) -> dict[str, str]:
    """Each probe's outcome, run side by side: "ok" or what went wrong."""
    names = list(probes)
    outcomes = await asyncio.gather(*(_outcome(probes[name], timeout) for name in names))
    return dict(zip(names, outcomes, strict=True))
