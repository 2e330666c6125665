"""Retention: durations as written in store URLs and on the command line (`30d`, `12h`),
and the optional timer that purges old terminal tasks while a store is open.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from contextlib import suppress
from datetime import datetime, timedelta

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
