"""`Signal`: what `asyncio.Event` does, for the objects every run and open stream holds."""

from __future__ import annotations

import asyncio


class Signal:
    """`asyncio.Event`'s set / clear / wait, without the Event's deque of
    waiters, which CPython allocates up front (≈ 0.8 KiB per Event, held as long as its
    owner: a run, an open stream). The waiters are few (mostly one): a list, made at the
    first wait."""

    __slots__ = ("_is_set", "_waiters")

    def __init__(self) -> None:
        self._is_set = False
        self._waiters: list[asyncio.Future[None]] | None = None

    def set(self) -> None:
        if self._is_set:
            return
        self._is_set = True
        for waiter in self._waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._is_set = False

    async def wait(self) -> None:
        """Until set (at once if it is)."""
        if self._is_set:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        waiters = self._waiters
        waiters.append(waiter)
        try:
            await waiter
        finally:
            waiters.remove(waiter)
