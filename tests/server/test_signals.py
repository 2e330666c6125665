"""`Signal`, the Event the runner, the broker and agent functions wait on: set wakes every
waiter, a set signal lets a wait through at once, clear makes the next wait block, and a
waiter cancelled meanwhile is skipped and forgotten."""

from __future__ import annotations

import asyncio

import pytest

from parley.server.signals import Mutex, Signal


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


def test_a_mutex_is_taken_at_once_when_free_and_in_turn_when_held() -> None:
    async def scenario() -> list[str]:
        mutex = Mutex()
        order: list[str] = []

        async def worker(name: str) -> None:
            async with mutex:
                order.append(f"{name}+")
                await asyncio.sleep(0)
                order.append(f"{name}-")

        await mutex.acquire()  # free: held at once
        assert mutex.locked()
        workers = [asyncio.ensure_future(worker(name)) for name in ("a", "b")]
        await asyncio.sleep(0)
        assert order == []  # both wait
        mutex.release()
        await asyncio.gather(*workers)
        assert not mutex.locked()
        return order

    assert asyncio.run(scenario()) == ["a+", "a-", "b+", "b-"]


def test_a_cancelled_mutex_waiter_passes_the_turn_on() -> None:
    async def scenario() -> bool:
        mutex = Mutex()
        await mutex.acquire()
        gone = asyncio.ensure_future(mutex.acquire())
        staying = asyncio.ensure_future(mutex.acquire())
        await asyncio.sleep(0)
        mutex.release()  # wakes `gone`, which is cancelled before it runs
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        await staying
        return mutex.locked()

    assert asyncio.run(scenario())


def test_releasing_a_free_mutex_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        Mutex().release()
