"""Retention: durations as written in store URLs and on the command line (`30d`, `12h`),
the optional timer that purges old terminal tasks while a store is open, and the
lifecycle (open, close, migrate) the durable task stores share around that timer.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from contextlib import suppress
from datetime import datetime, timedelta
from typing import Protocol

from parley.server.stores.base import SchemaStatus, StoreOptions

log = logging.getLogger("parley.server.stores")

_DURATION = re.compile(r"(\d+)\s*([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str) -> timedelta:
    """`90s`, `15m`, `12h`, `30d`, `2w` (or a sum: `1d12h`); ValueError otherwise."""
    spelled = text.strip().lower()
    if not spelled or _DURATION.sub("", spelled).strip():
        raise ValueError(f"invalid duration {text!r} (expected e.g. 90s, 15m, 12h, 30d, 2w)")
    total = timedelta()
    for amount, unit in _DURATION.findall(spelled):
        total += timedelta(**{_UNITS[unit]: int(amount)})
    if total <= timedelta():
        raise ValueError(f"invalid duration {text!r}: must be positive")
    return total


class RetentionTimer:
    """Calls `purge(now - retention)` at once and then every `every`, until stopped."""

    def __init__(
        self,
        purge: Callable[[datetime], Awaitable[int]],
        retention: timedelta,
        every: timedelta,
        clock: Callable[[], datetime],
    ) -> None:
        self._purge = purge
        self._retention = retention
        self._every = every
        self._clock = clock
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        while True:
            try:
                purged = await self._purge(self._clock() - self._retention)
            except Exception:
                log.exception("purging old tasks failed")
            else:
                if purged:
                    log.info("purged %d tasks finished more than %s ago", purged, self._retention)
            await asyncio.sleep(self._every.total_seconds())


class Database(Protocol):
    """What a durable task store needs of its database for its lifecycle."""

    @property
    def options(self) -> StoreOptions: ...

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def migrate(self) -> SchemaStatus: ...

    async def schema_status(self) -> SchemaStatus: ...


class DurableLifecycle(abc.ABC):
    """Open/close/migrate of a durable task store, and its retention timer (shared by
    the SQLite and PostgreSQL stores)."""

    def __init__(self, database: Database, *, clock: Callable[[], datetime]) -> None:
        self.database = database
        self.clock = clock
        self._timer: RetentionTimer | None = None

    @property
    def options(self) -> StoreOptions:
        return self.database.options

    @abc.abstractmethod
    async def purge(self, older_than: datetime) -> int:
        """Delete terminal tasks last updated before `older_than`; how many went."""

    async def open(self) -> None:
        await self.database.open()
        retention = self.options.retention
        if retention is not None and self._timer is None:
            self._timer = RetentionTimer(
                self.purge, retention, self.options.purge_every, self.clock
            )
            self._timer.start()

    async def close(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            await timer.stop()
        await self.database.close()

    async def migrate(self) -> SchemaStatus:
        return await self.database.migrate()

    async def schema_status(self) -> SchemaStatus:
        return await self.database.schema_status()
