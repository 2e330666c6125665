"""Task generations (A2A 1.1 draft) in every store: a task is created at generation 1, each
status or artifact update folded into it adds exactly one (a message into history none),
and every backend keeps the number, across a reopen for the durable ones; a database
written before generations existed opens, migrates, and numbers on from its versions."""

from __future__ import annotations

import pytest

from parley.model import ListTasksRequest, Role, Task, TaskState
from parley.protocol import folding
from parley.server.stores import SchemaError, SchemaStatus, open_store
from parley.server.stores.sqlite_schema import MIGRATIONS
from tests.contracts.support import (
    ALICE,
    apply,
    artifact_event,
    execute_raw,
    opened,
    run,
    status_event,
    text_message,
    with_params,
)

LATEST = len(MIGRATIONS)


def _new(task_id: str) -> Task:
    message = text_message(f"m-{task_id}", "hello", Role.USER)
    return folding.new_task(message, task_id=task_id, context_id="c")


def test_every_update_adds_one_and_every_store_keeps_it(store_url: str) -> None:
    """R-GEN: +1 per status or artifact update, none for a message; get and list agree."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            stored = await store.create(ALICE, _new("t1"))
            assert stored.task.generation == 1
            task = stored.task
            seen = [stored.task.generation]
            for event in (
                status_event(task, TaskState.WORKING),
                artifact_event(task, "a", "one"),
                artifact_event(task, "a", "two", append=True),
                text_message("aside"),
                status_event(task, TaskState.WORKING, note="still"),
                status_event(task, TaskState.COMPLETED),
            ):
                stored = await apply(store, ALICE, stored, event)
                seen.append(stored.task.generation)
            assert seen == [1, 2, 3, 4, 4, 5, 6]
            got = await store.get(ALICE, "t1")
            assert got is not None
            assert got.task.generation == 6
            trimmed = await store.get(ALICE, "t1", history_length=0)
            assert trimmed is not None
            assert trimmed.task.generation == 6
            page = await store.list(ALICE, ListTasksRequest(), 10)
            assert [t.generation for t in page.tasks] == [6]

    run(main())


def test_a_durable_store_numbers_on_after_a_reopen(durable_url: str) -> None:
    async def main() -> None:
        async with opened(durable_url) as (store, _):
            stored = await store.create(ALICE, _new("t1"))
            stored = await apply(store, ALICE, stored, status_event(stored.task, TaskState.WORKING))
        async with opened(durable_url) as (store, _):
            again = await store.get(ALICE, "t1")
            assert again is not None
            assert again.task.generation == 2
            again = await apply(
                store, ALICE, again, status_event(again.task, TaskState.INPUT_REQUIRED)
            )
            assert again.task.generation == 3
        async with opened(durable_url) as (store, _):
            final = await store.get(ALICE, "t1")
            assert final is not None
            assert final.task.generation == 3

    run(main())


def test_a_database_written_before_generations_migrates(durable_url: str) -> None:
    """A schema-2 database (no generation column) opens and migrates; its tasks start from
    their version (at least their count of updates), and number on from there."""

    async def main() -> None:
        async with opened(durable_url) as (store, _):
            stored = await store.create(ALICE, _new("t1"))
            message = text_message("aside")
            stored = await apply(store, ALICE, stored, message, message)  # versions 2, 3
            assert (stored.version, stored.task.generation) == (3, 1)
        # Back to the schema before generations, as an older Parley left it.
        await execute_raw(durable_url, "ALTER TABLE tasks DROP COLUMN generation")
        await execute_raw(durable_url, "DELETE FROM parley_schema WHERE version >= 3")
        await execute_raw(durable_url, "ALTER TABLE parley_schema DROP COLUMN row_format")
        stores = open_store(with_params(durable_url, migrate="false"))
        try:
            assert await stores.tasks.schema_status() == SchemaStatus(2, LATEST)
            with pytest.raises(SchemaError, match="parley db upgrade"):
                await stores.tasks.open()
        finally:
            await stores.tasks.close()
        async with opened(durable_url) as (store, _):
            assert await store.schema_status() == SchemaStatus(LATEST, LATEST)
            migrated = await store.get(ALICE, "t1")
            assert migrated is not None
            assert migrated.task.generation == 3
            after = await apply(
                store, ALICE, migrated, status_event(migrated.task, TaskState.COMPLETED)
            )
            assert after.task.generation == 4

    run(main())
