"""Execution leases in Redis (DESIGN 7): the replica running a task holds its lease, renews
it by heartbeat, and when a replica dies another one notices its leases run out and
recovers each of its tasks, exactly once (`RedisBus` uses this).

Theory of operation. The leases are one sorted set: a member is the task's key and the
holder's replica id (JSON), its score the time (ms) the lease runs out. `hold` adds it
before the run starts (so no task of a run is written without one); `let_go` removes it
when the run ends. Every `renew` seconds (a third of `ttl`) the holder moves all it holds
`ttl` ahead in one pipeline, with ZADD XX and ZSCORE: a member someone removed is not added
back, and the holder, reading it gone, learns it lost the lease (`lost`: its run is
stopped, writing nothing).
`expired` lists members past their time and removes each with ZREM: the one replica whose
ZREM removed a member (1) recovers that task; every other one got 0. Clocks: scores are the holder's
time; replicas' clocks must agree to well within `ttl` (NTP does).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from parley.server.stores.base import TaskKey
from parley.wire import json_bytes as wire_json

log = logging.getLogger("parley.bus")

TTL = 6.0
"""Seconds a lease lasts without renewal: a dead replica's tasks are recovered within
about `TTL` + `SWEEP` seconds."""
SWEEP = 1.0
"""Seconds between looks for leases that ran out."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class RedisLeases:
    """The leases of one replica (`replica`: its id, random by default) in `client`."""

    def __init__(
        self,
        client: Any,
        key: str,
        *,
        replica: str | None = None,
        ttl: float = TTL,
        renew: float | None = None,
    ) -> None:
        self.client = client
        self.key = key
        self.replica = replica or uuid.uuid4().hex
        self.ttl_ms = int(ttl * 1000)
        self.renew = ttl / 3 if renew is None else renew
        """Seconds between renewals (default: a third of `ttl`)."""
        self._held: dict[TaskKey, str] = {}
        self.lost: Callable[[TaskKey], None] = _ignore
        """Called for a lease taken away while held (its run must stop)."""
        self._removing: dict[str, asyncio.Task[None]] = {}

    def _member(self, task: TaskKey) -> str:
        return wire_json.dumps([*task, self.replica]).decode()

    async def hold(self, task: TaskKey) -> None:
        member = self._held.get(task) or self._member(task)
        removing = self._removing.get(member)
        if removing is not None:  # the last run's removal first, not after this
            await asyncio.shield(removing)
        await self.client.zadd(self.key, {member: _now_ms() + self.ttl_ms})
        self._held[task] = member

    def let_go(self, task: TaskKey) -> None:
        """Remove the lease (soon: called from a run's end, which cannot wait)."""
        member = self._held.pop(task, None)
        if member is None:
            return
        removal = asyncio.get_running_loop().create_task(self._remove(member))
        self._removing[member] = removal

    async def _remove(self, member: str) -> None:
        try:
            await self.client.zrem(self.key, member)
        except Exception as exc:  # it runs out by itself; then a sweep finds the task ended
            log.warning("leases: one was not let go (%s)", exc)
        finally:
            if self._removing.get(member) is asyncio.current_task():
                del self._removing[member]

    async def renew_held(self) -> None:
        """Move every held lease `ttl` ahead; `lost` for each one no longer there."""
        held = list(self._held.items())
        if not held:
            return
        until = _now_ms() + self.ttl_ms
        async with self.client.pipeline(transaction=False) as pipe:
            for _, member in held:
                pipe.zadd(self.key, {member: until}, xx=True)
                pipe.zscore(self.key, member)
            answers = await pipe.execute()
        # Whether each is still there, read back: ZADD's CH count is 0 for a lease that is
        # there but already ran out at `until` (held in the same millisecond), not only for
        # one someone removed.
        for (task, member), score in zip(held, answers[1::2], strict=True):
            if score is None and self._held.get(task) == member:
                del self._held[task]
                log.warning("leases: the lease of task %s was taken away; its run stops", task[2])
                self.lost(task)

    async def expired(self, limit: int = 100) -> list[tuple[TaskKey, str]]:
        """Leases that ran out, each removed here and won by this replica alone: (task,
        the replica that held it)."""
        found = await self.client.zrangebyscore(self.key, "-inf", _now_ms(), start=0, num=limit)
        won: list[tuple[TaskKey, str]] = []
        for member in found:
            if await self.client.zrem(self.key, member):
                *task, holder = wire_json.loads(member)
                won.append((TaskKey(task[0], task[1], task[2]), holder))
        return won

    async def give_back(self, task: TaskKey, holder: str) -> None:
        """Put back, run out, a lease `expired` gave this replica that it could not
        recover: the next sweep (here or elsewhere) tries again."""
        member = wire_json.dumps([*task, holder]).decode()
        await self.client.zadd(self.key, {member: 0})

    async def close(self) -> None:
        """Finish the removals under way; what is still held is left to run out, so
        another replica recovers those tasks (their runs were stopped by the shutdown)."""
        await asyncio.gather(*self._removing.values(), return_exceptions=True)
        self._held.clear()


def _ignore(task: TaskKey) -> None:
    pass


__all__ = ["SWEEP", "TTL", "RedisLeases"]
