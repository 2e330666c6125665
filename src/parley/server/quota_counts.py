"""Where the rate limits count (`parley.server.quotas`): fixed windows, each opened by its
first hit and lasting its period, as the `limits` library counts them. `RedisCounts` is
`limits`' Redis storage (one atomic increment per hit, shared by every replica);
`MemoryCounts` counts in this process. `limits`' own memory storage starts an expiry task on
every hit once the previous one has run (measured: an eighth more instructions per blocking
send); this one expires a window when it meets it, and sweeps the expired ones when it
holds many.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

_RESETS_KEPT = 4096
"""Window ends remembered per process (a Redis window's end is read once per window)."""


class Counts(Protocol):
    async def hit(self, key: str, period: int) -> tuple[int, float]:
        """Count one request under `key`: the count in its window, and when that ends."""
        ...


class MemoryCounts:
    def __init__(self, sweep_at: int = 10_000) -> None:
        self.windows: dict[str, list[float]] = {}  # key → [count, end]
        self.sweep_at = sweep_at

    async def hit(self, key: str, period: int) -> tuple[int, float]:
        return self.count(key, period)

    def count(self, key: str, period: int) -> tuple[int, float]:
        """`hit`, for a caller that need not await."""
        now = time.time()
        window = self.windows.get(key)
        if window is None or window[1] <= now:
            if len(self.windows) >= self.sweep_at:
                self.windows = {k: w for k, w in self.windows.items() if w[1] > now}
            self.windows[key] = window = [0, now + period]
        window[0] += 1
        return int(window[0]), window[1]


class RedisCounts:
    """`limits`' Redis storage: an increment per hit; a window's end is read once (it may
    have been opened by another replica) and remembered."""

    def __init__(self, url: str) -> None:
        from limits.aio.storage import Storage  # noqa: PLC0415 - the quotas' extra
        from limits.storage import storage_from_string  # noqa: PLC0415

        storage = storage_from_string("async+" + url, implementation="redispy")
        assert isinstance(storage, Storage)  # an `async+` URI: the asyncio storage
        self.storage: Any = storage
        self._ends: dict[str, float] = {}

    async def hit(self, key: str, period: int) -> tuple[int, float]:
        used = int(await self.storage.incr(key, period))
        now = time.time()
        if used == 1:
            end = now + period
        else:
            known = self._ends.get(key)
            if known is not None and known > now:
                return used, known
            end = float(await self.storage.get_expiry(key))
        if len(self._ends) >= _RESETS_KEPT:
            self._ends.clear()
        self._ends[key] = end
        return used, end


def counts_at(storage: str) -> Counts:
    """The counters a Quotas' `storage` names: `memory`, or a `redis://` / `rediss://` URL."""
    if storage in ("memory", "memory://"):
        return MemoryCounts()
    if storage.startswith(("redis://", "rediss://")):
        return RedisCounts(storage)
    raise ValueError(f"rate-limit storage {storage!r}: memory, or a redis:// URL")
