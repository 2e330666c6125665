"""`Signal` and `Mutex`: what `asyncio.Event` and `asyncio.Lock` do, for the objects every
run and open stream holds; `DONE`, an awaitable done at once."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Generator
from typing import cast


class _Done:
    """An awaitable that is done at once, with None."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        return _EXHAUSTED  # no generator made per await


_EXHAUSTED = cast("Generator[None, None, None]", iter(()))
DONE: Awaitable[None] = _Done()


class Signal:
    """`asyncio.Event`'s set / clear / wait, without the Event's deque of
    waiters, which CPython allocates up front (≈ 0.8 KiB per Event, held as long as its
    owner: a run, an open stream). The waiters are few (mostly one): a list, made at the
    first wait. `wait` is no coroutine: it returns the waiter's future (or `DONE`), so a
    wait costs no frame — an open stream and a run each hold one while they wait."""

    __slots__ = ("_is_set", "_waiters")

    def __init__(self) -> None:
        self._is_set = False
        self._waiters: asyncio.Future[None] | list[asyncio.Future[None]] | None = None
        """None, the one waiter (the usual case: no list), or a list of them."""

    def set(self) -> None:
        if self._is_set:
            return
        self._is_set = True
        waiters = self._waiters
        if waiters is None:
            return
        self._waiters = None
        if isinstance(waiters, list):
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)
        elif not waiters.done():
            waiters.set_result(None)

    def clear(self) -> None:
        self._is_set = False

    def wait(self) -> Awaitable[None]:
        """Until set (at once if it is). A waiter cancelled meanwhile is dropped at the next
        `set`, or the next wait."""
        if self._is_set:
            return DONE
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters = self._waiters
        if isinstance(waiters, list):
            if waiters[0].done():
                self._waiters = waiters = [w for w in waiters if not w.done()]
            waiters.append(waiter)
        elif waiters is None or waiters.done():
            self._waiters = waiter
        else:
            self._waiters = [waiters, waiter]
        return waiter


class Mutex:
    """`asyncio.Lock` (FIFO, cancellation-safe), for the lock every live task holds and
    every event it emits takes: `acquire` of a free mutex is no coroutine (it returns
    `DONE`), and the mutex is in slots, its waiters made at the first contention."""

    __slots__ = ("_locked", "_waiters")

    def __init__(self) -> None:
        self._locked = False
        self._waiters: deque[asyncio.Future[None]] | None = None

    def locked(self) -> bool:
        return self._locked

    def take(self) -> bool:
        """Hold it now if it is free and nobody waits (True), with no await at all."""
        if self._locked or self._waiters:
            return False
        self._locked = True
        return True

    def acquire(self) -> Awaitable[None]:
        """Until held (at once if free and nobody waits)."""
        if not self._locked and not self._waiters:
            self._locked = True
            return DONE
        return self._wait()

    async def _wait(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = deque()
        waiters = self._waiters
        waiters.append(waiter)
        try:
            try:
                await waiter
            finally:
                waiters.remove(waiter)
        except asyncio.CancelledError:
            if not self._locked:
                self._wake_first()  # it was woken but cancelled meanwhile: the next one
            raise
        self._locked = True

    def release(self) -> None:
        if not self._locked:
            raise RuntimeError("Mutex is not acquired.")
        self._locked = False
        if self._waiters:  # (the test here: no call per release of an uncontended mutex)
            self._wake_first()

    def _wake_first(self) -> None:
        if self._waiters:
            first = self._waiters[0]
            if not first.done():
                first.set_result(None)

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()
