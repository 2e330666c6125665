"""The outbox contract (`parley.server.push.outbox.Outbox`, DESIGN 10) through the public
store API, on every backend: notifications wait in one queue per (task, config) in the
order their writes were made; a claim gives only due, unheld queue heads and holds them
until the lease ends; a worker reports delivered, retry, dead or gone (410); dead ones can
be listed and requeued. Delivery is at least once (R-PUSH-14), in order per webhook
(R-STREAM-7), with retries at the time the worker chose (R-PUSH-16); a deleted config gets
nothing more (R-PUSH-6)."""

from __future__ import annotations

import json
import time
from typing import Any

from parley.model import TaskPushNotificationConfig, TaskState
from parley.protocol.negotiation import Version
from parley.server.push.outbox import DEAD, PENDING, Delivery
from parley.server.stores import Stores
from tests.contracts.support import (
    ALICE,
    BOB,
    apply,
    artifact_event,
    make_task,
    opened,
    run,
    status_event,
)

FAR = time.time_ns() // 1000 + 10**12
"""A moment every notification is due by (µs), whatever the store's clock says."""
LEASE = 10**6


def config(config_id: str, task_id: str = "t1") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        url=f"https://hooks.example/{config_id}", task_id=task_id, id=config_id
    )


async def seed(stores: Stores, *config_ids: str, task_id: str = "t1", scope: Any = ALICE) -> None:
    """A task created with `config_ids` inline, then moved WORKING and given an artifact:
    three notifications per config (the creation, the status, the artifact)."""
    tasks = stores.tasks
    task = make_task(task_id)
    inline = tuple((config(c, task_id), Version.V1_0) for c in config_ids)
    stored = await tasks.create(scope, task, configs=inline)
    await apply(
        tasks,
        scope,
        stored,
        status_event(stored.task, TaskState.WORKING, note="busy"),
        artifact_event(stored.task, "a", "result"),
    )


def kind(delivery: Delivery) -> str:
    """What a notification tells of: `task`, `statusUpdate` or `artifactUpdate`."""
    [name] = json.loads(delivery.payload)
    return str(name)


async def drain(stores: Stores) -> list[tuple[str, str]]:
    """Deliver everything in claim order: (config id, kind) of each."""
    outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
    out: list[tuple[str, str]] = []
    while claimed := await outbox.claim(FAR, FAR + LEASE, 10):
        for delivery in claimed:
            out.append((delivery.config_id, kind(delivery)))
            await outbox.delivered(delivery)
    return out


def test_a_claim_gives_only_the_head_of_each_queue_in_write_order(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a")
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            [head] = await outbox.claim(FAR, FAR + LEASE, 10)
            assert (head.scope, head.task_id, head.config_id) == (ALICE, "t1", "a")
            assert (kind(head), head.attempts, head.state) == ("task", 0, PENDING)
            assert head.protocol is Version.V1_0
            assert head.config is not None
            assert head.config.url == "https://hooks.example/a"
            assert await outbox.claim(FAR, FAR + LEASE, 10) == []  # held, and nothing behind
            await outbox.delivered(head)
            assert await drain(stores) == [("a", "statusUpdate"), ("a", "artifactUpdate")]
            assert await outbox.next_due() is None

    run(main())


def test_each_config_has_its_own_queue(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a", "b")
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            [one] = await outbox.claim(FAR, FAR + LEASE, 1)  # the limit holds
            [other] = await outbox.claim(FAR, FAR + LEASE, 10)
            assert {one.config_id, other.config_id} == {"a", "b"}
            # one event told to two webhooks: the same notification id, two deliveries
            assert one.notification_id == other.notification_id
            assert one.id != other.id
            for delivery in (one, other):
                await outbox.delivered(delivery)
            order = await drain(stores)
            for config_id in ("a", "b"):
                assert [k for c, k in order if c == config_id] == [
                    "statusUpdate",
                    "artifactUpdate",
                ]

    run(main())


def test_a_lease_that_runs_out_is_claimed_again(store_url: str) -> None:
    """R-PUSH-14: a worker that died holding a notification does not lose it."""

    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a")
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            [held] = await outbox.claim(FAR, FAR + LEASE, 10)
            assert await outbox.claim(FAR + LEASE - 1, FAR + 2 * LEASE, 10) == []
            [again] = await outbox.claim(FAR + LEASE + 1, FAR + 3 * LEASE, 10)
            assert (again.id, again.notification_id) == (held.id, held.notification_id)
            assert kind(again) == "task"

    run(main())


def test_a_released_lease_is_claimable_at_once_as_it_was(store_url: str) -> None:
    """A worker stopping cleanly gives back what it held: claimable again at once, its
    attempts and last error as they were; another worker's lease and settled rows stay."""

    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a", "b", "c")
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            heads = {d.config_id: d for d in await outbox.claim(FAR, FAR + LEASE, 10)}
            await outbox.retry(heads["a"], FAR, "503 from the receiver")
            [a] = await outbox.claim(FAR, FAR + LEASE, 10)
            await outbox.bury(heads["c"], "refused")
            [c_next] = await outbox.claim(FAR, FAR + LEASE, 10)
            assert await outbox.claim(FAR + 1, FAR + LEASE, 10) == []
            await outbox.release([a.id, c_next.id, heads["c"].id], FAR + 1)
            again = {d.config_id: d for d in await outbox.claim(FAR + 1, FAR + LEASE, 10)}
            assert sorted(again) == ["a", "c"]  # b is still held by its lease
            assert (again["a"].id, again["a"].attempts) == (a.id, 1)
            assert (kind(again["a"]), again["a"].last_error) == ("task", "503 from the receiver")
            assert (again["c"].id, again["c"].attempts, kind(again["c"])) == (
                c_next.id,
                0,
                "statusUpdate",
            )
            [dead] = await outbox.inspect(state=DEAD, limit=10)
            assert (dead.id, dead.attempts, dead.last_error) == (heads["c"].id, 1, "refused")
            await outbox.release([dead.id], FAR + 2)
            assert [d.id for d in await outbox.inspect(state=DEAD, limit=10)] == [dead.id]

    run(main())


def test_a_retry_counts_the_attempt_and_waits_until_its_time(store_url: str) -> None:
    """R-PUSH-16: the worker chooses when to try again; nothing behind it overtakes it."""

    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a")
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            [head] = await outbox.claim(FAR, FAR + LEASE, 10)
            later = FAR + 5 * LEASE
            await outbox.retry(head, later, "503 from the receiver")
            assert await outbox.next_due() == later
            assert await outbox.claim(later - 1, later + LEASE, 10) == []
            [again] = await outbox.claim(later, later + LEASE, 10)
            assert (again.id, again.attempts, kind(again)) == (head.id, 1, "task")
            await outbox.retry(again, later + 1, "timeout")
            [third] = await outbox.claim(later + 1, later + 1 + LEASE, 10)
            assert third.attempts == 2

    run(main())


def test_a_dead_notification_is_kept_and_its_queue_moves_on(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a")
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            [head] = await outbox.claim(FAR, FAR + LEASE, 10)
            await outbox.bury(head, "gave up after 5 attempts")
            [dead] = await outbox.inspect(state=DEAD, limit=10)
            assert (dead.id, dead.state, dead.attempts) == (head.id, DEAD, 1)
            assert dead.last_error == "gave up after 5 attempts"
            [following] = await outbox.claim(FAR, FAR + LEASE, 10)
            assert kind(following) == "statusUpdate"
            pending = await outbox.inspect(state=PENDING, limit=10)
            assert [kind(p) for p in pending] == ["statusUpdate", "artifactUpdate"]

    run(main())


def test_dead_notifications_can_be_requeued(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a")
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            for _ in range(3):
                [head] = await outbox.claim(FAR, FAR + LEASE, 10)
                await outbox.bury(head, "no")
            assert len(await outbox.inspect(state=DEAD, limit=10)) == 3
            assert await outbox.next_due() is None
            first, *rest = await outbox.inspect(state=DEAD, limit=10)
            assert await outbox.requeue([first.id], FAR) == 1
            assert [d.id for d in await outbox.inspect(state=DEAD, limit=10)] == [
                d.id for d in rest
            ]
            assert await outbox.requeue(None, FAR) == 2
            assert await outbox.inspect(state=DEAD, limit=10) == []
            assert sorted(k for _, k in await drain(stores)) == [
                "artifactUpdate",
                "statusUpdate",
                "task",
            ]

    run(main())


def test_a_gone_receiver_deletes_its_config_and_buries_its_queue(store_url: str) -> None:
    """A 410: the config is deleted, what waited for it is dead, other configs go on."""

    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a", "b")
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            heads = await outbox.claim(FAR, FAR + LEASE, 10)
            gone = next(d for d in heads if d.config_id == "a")
            await outbox.disable(gone, "410 Gone")
            assert await stores.push_configs.get(ALICE, "t1", "a") is None
            assert await stores.push_configs.get(ALICE, "t1", "b") is not None
            dead = await outbox.inspect(state=DEAD, limit=10)
            assert {d.config_id for d in dead} == {"a"}
            await outbox.delivered(next(d for d in heads if d.config_id == "b"))
            assert {c for c, _ in await drain(stores)} == {"b"}

    run(main())


def test_a_deleted_config_gets_nothing_more(store_url: str) -> None:
    """R-PUSH-6: after Delete, no later deliveries — not even of what was waiting."""

    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a", "b")
            await stores.push_configs.delete(ALICE, "t1", "a")
            assert {c for c, _ in await drain(stores)} == {"b"}

    run(main())


def test_queues_of_callers_are_apart(store_url: str) -> None:
    """The same task and config ids under two callers are two queues, each its own scope."""

    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a", scope=ALICE)
            await seed(stores, "a", scope=BOB)
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            heads = await outbox.claim(FAR, FAR + LEASE, 10)
            assert sorted(d.scope for d in heads) == sorted([ALICE, BOB])
            assert all(d.config is not None and d.config.task_id == "t1" for d in heads)

    run(main())


def test_a_write_without_configs_records_nothing(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores)
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            assert await outbox.claim(FAR, FAR + LEASE, 10) == []
            assert await outbox.next_due() is None
            assert await outbox.inspect(state=PENDING, limit=10) == []

    run(main())


def test_repair_finds_nothing_to_repair_in_a_settled_outbox(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as stores:
            await seed(stores, "a")
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            assert await outbox.repair(FAR) == 0
            assert [k for _, k in await drain(stores)] == [
                "task",
                "statusUpdate",
                "artifactUpdate",
            ]

    run(main())
