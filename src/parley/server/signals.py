"""`Signal`: what `asyncio.Event` does, for the objects every run and open stream holds;
`DONE`, an awaitable done at once."""

from __future__ import annotations

import asyncio
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
