"""A PostgreSQL outbox race, forced step by step: a task write records a notification
behind its queue's head while that head is being settled in another transaction. The
write saw the head (so the new notification waits BEHIND it); the settle did not see the
new notification (so it made nothing due): it must still be due once both committed, not
stranded until the next `Outbox.repair` (every 30 s). The write locks the head it sees
FOR SHARE, so it waits for the settle and reads the queue again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from parley.model import TaskPushNotificationConfig, TaskState
from parley.server.push.outbox import BEHIND, Outbox
from parley.server.stores import Stores
from tests.contracts.conftest import require_postgres
from tests.contracts.support import (
    ALICE,
    POSTGRES_URL,
    apply,
    create_schema,
    drop_schema,
    make_task,
    opened,
    status_event,
    with_params,
)
from tests.push.receiver import eventually
from tests.push.support import run


@asynccontextmanager
async def postgres() -> AsyncIterator[tuple[Stores, str]]:
    schema = await create_schema()
    try:
        async with opened(with_params(POSTGRES_URL, schema=schema)) as stores:
            yield stores, schema
    finally:
        await drop_schema(schema)


def now_us() -> int:
    return time.time_ns() // 1000


@pytest.mark.parametrize("settle", ["delivered", "buried"])
def test_a_notification_recorded_as_its_head_settles_is_due(settle: str) -> None:
    require_postgres()
    import asyncpg  # noqa: PLC0415 - the postgres extra

    async def scenario() -> None:
        async with postgres() as (stores, schema):
            hook = TaskPushNotificationConfig(url="https://hooks.example.com/", id="c", task_id="t")
            await stores.push_configs.put(ALICE, hook)
            created = await stores.tasks.create(ALICE, make_task("t"))
            outbox: Outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            [head] = await outbox.claim(now_us(), now_us() + 10**7, 10)

            blocker = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
            try:
                transaction = blocker.transaction()
                await transaction.start()
                await blocker.execute("SELECT 1 FROM tasks WHERE id = 't' FOR UPDATE")
                event = status_event(created.task, TaskState.COMPLETED)
                save = asyncio.create_task(apply(stores.tasks, ALICE, created, event))

                async def waiting() -> bool:  # the write has begun, and waits for the blocker
                    found = await blocker.fetchval(
                        "SELECT count(*) FROM pg_stat_activity"
                        " WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))"
                    )
                    return bool(found)

                await eventually(waiting, what="the task write waiting")
                if settle == "delivered":  # the head settles meanwhile
                    await outbox.delivered(head)
                else:
                    await outbox.bury(head, "HTTP 400")
                await transaction.rollback()
                await save
            finally:
                await blocker.close()

            [behind] = await outbox.inspect(state=0, limit=10)
            assert behind.notification_id == "t.2.0"
            claimed = await outbox.claim(now_us(), now_us() + 10**7, 10)
            assert [each.notification_id for each in claimed] == ["t.2.0"], (
                f"stranded: due_at {behind.due_at} (BEHIND is {BEHIND})"
            )

    run(scenario())
