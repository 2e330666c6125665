"""`Signal`, the Event the runner, the broker and agent functions wait on: set wakes every
waiter, a set signal lets a wait through at once, clear makes the next wait block, and a
waiter cancelled meanwhile is skipped and forgotten."""

from __future__ import annotations

import asyncio

from parley.server.signals import Signal


def test_set_wakes_every_waiter_and_lets_later_waits_through() -> None:
    async def scenario() -> list[str]:
        signal = Signal()
        woken: list[str] = []

        async def waiter(name: str) -> None:
            await signal.wait()
            woken.append(name)

        waiters = [asyncio.create_task(waiter(name)) for name in ("a", "b")]
        await asyncio.sleep(0)
        assert woken == []
        signal.set()
        signal.set()  # a second set changes nothing
        await asyncio.gather(*waiters)
        await signal.wait()  # set: at once
        return woken

    assert asyncio.run(scenario()) == ["a", "b"]


def test_clear_makes_the_next_wait_block_until_set_again() -> None:
    async def scenario() -> bool:
        signal = Signal()
        signal.set()
        signal.clear()
        waiting = asyncio.ensure_future(signal.wait())
        await asyncio.sleep(0)
        blocked = not waiting.done()
        signal.set()
        await waiting
        return blocked

    assert asyncio.run(scenario())


def test_a_cancelled_waiter_is_skipped_and_forgotten() -> None:
    async def scenario() -> tuple[bool, bool]:
        signal = Signal()
        gone = asyncio.ensure_future(signal.wait())
        staying = asyncio.ensure_future(signal.wait())
        await asyncio.sleep(0)
        gone.cancel()
        signal.set()  # the cancelled waiter's future is done: skipped
        await staying
        cancelled = False
        try:
            await gone
        except asyncio.CancelledError:
            cancelled = True
        signal.clear()
        later = asyncio.ensure_future(signal.wait())  # no stale waiter left to wake
        await asyncio.sleep(0)
        still_waiting = not later.done()
        signal.set()
        await later
        return cancelled, still_waiting

    assert asyncio.run(scenario()) == (True, True)
