"""A worker that stops cleanly gives back the leases of what it was sending or holding for a
per-host slot (`Outbox.release`), so a worker started after it (a restart, a rolling
deploy) delivers them at once, not when the leases would have run out; a store already
closed does not break the stop."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from parley.model import Task, TaskState, TaskStatus
from parley.server.push.delivery import DeliveryWorker, PushSettings
from parley.server.push.outbox import PENDING, Delivery
from parley.server.stores import Stores, open_store
from tests.contracts.support import ALICE
from tests.push.receiver import Receiver, Reply, eventually
from tests.push.support import config, fast, run

LONG_LEASE = fast(timeout=60.0, per_host=1)
"""Leases of 65 s: far past what any test here waits, so only a lease given back lets a
restarted worker deliver."""


async def record(stores: Stores, receiver: Receiver, *paths: str) -> None:
    """A task per path, each with a config for `receiver` at that path: one notification
    each (the task's creation), all due at once."""
    for index, path in enumerate(paths):
        task_id = f"t{index}"
        await stores.push_configs.put(ALICE, config(receiver.url(path), id="c", task_id=task_id))
        status = TaskStatus(state=TaskState.SUBMITTED)
        await stores.tasks.create(ALICE, Task(id=task_id, context_id="c", status=status))


def worker(stores: Stores, settings: PushSettings = LONG_LEASE) -> DeliveryWorker:
    return DeliveryWorker(stores.push_configs.outbox, stores.tasks, settings)  # type: ignore[attr-defined]


def test_a_stop_gives_back_what_was_in_flight_or_waiting_and_a_restart_sends_it(
    store_url: str,
) -> None:
    gate = asyncio.Event()  # never set: the first request is never answered

    async def main() -> None:
        stores = open_store(store_url)
        await stores.tasks.open()
        try:
            async with Receiver([Reply(gate=gate)]) as receiver:
                await record(stores, receiver, "/a", "/b")
                first = worker(stores)
                await first.start()  # one attempt held on the gate, the other waiting
                await eventually(lambda: len(receiver.requests) == 1)
                await first.stop()
                assert first.delivered == 0
                second = worker(stores)
                await second.start()
                try:
                    await eventually(lambda: second.delivered == 2, what="both delivered")
                finally:
                    await second.stop()
                held, *rest = receiver.requests
                assert sorted(r.target for r in rest) == ["/a", "/b"]
                assert held.id in {r.id for r in rest}  # sent again: at least once
                assert await stores.push_configs.outbox.inspect(state=PENDING, limit=10) == []  # type: ignore[attr-defined]
        finally:
            await stores.tasks.close()

    run(main())


def test_a_stop_after_the_store_closed_logs_and_leaves_the_leases_to_expire(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gate = asyncio.Event()

    async def main() -> None:
        stores = open_store(f"sqlite:///{tmp_path}/parley.db")
        await stores.tasks.open()
        async with Receiver([Reply(gate=gate)]) as receiver:
            await record(stores, receiver, "/a")
            first = worker(stores)
            await first.start()
            await eventually(lambda: len(receiver.requests) == 1)
            await stores.tasks.close()
            with caplog.at_level(logging.WARNING, "parley.push"):
                await first.stop()  # does not raise
        [warned] = [r.getMessage() for r in caplog.records if "not given back" in r.getMessage()]
        assert "1 leases not given back (StoreClosedError(" in warned

    run(main())


@pytest.mark.parametrize("fails", [False, True])
def test_a_stop_during_a_claim_gives_back_what_the_claim_took(
    fails: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop is cancelled while the outbox is claiming: the claim still ends, and what
    it took is given back (a claim that fails took nothing)."""
    entered, go = asyncio.Event(), asyncio.Event()

    async def main() -> None:
        stores = open_store("memory")
        box = stores.push_configs.outbox  # type: ignore[attr-defined]
        claim = box.claim

        async def held_claim(now: int, lease_until: int, limit: int) -> list[Delivery]:
            entered.set()
            await go.wait()
            if fails:
                raise ConnectionError("the outbox went away")
            claimed: list[Delivery] = await claim(now, lease_until, limit)
            return claimed

        async with Receiver() as receiver:
            await record(stores, receiver, "/a")
            first = worker(stores)
            with monkeypatch.context() as patched:
                patched.setattr(box, "claim", held_claim)
                await first.start()
                await entered.wait()
                stopping = asyncio.get_running_loop().create_task(first.stop())
                await asyncio.sleep(0)  # the loop is cancelled, the claim goes on
                go.set()
                await stopping
            assert receiver.requests == []
            second = worker(stores)
            await second.start()
            try:
                await eventually(lambda: second.delivered == 1, what="delivered")
            finally:
                await second.stop()
            assert [r.target for r in receiver.requests] == ["/a"]

    run(main())
