"""Schema migrations of the durable backends: applied on open by default, or explicitly
(`migrate`, what `parley db upgrade` runs) with `status` reporting where a database
stands; a schema behind is refused when migrations on start are off, a newer one always,
with a message saying what to do; a store is unusable before open and after close."""

from __future__ import annotations

import asyncio

import pytest

from parley.server.stores import SchemaError, SchemaStatus, StoreClosedError, open_store
from parley.server.stores.migrations import ACTIVE_STATES, TERMINAL_STATES, sql_list
from parley.server.stores.postgres_schema import MIGRATIONS as POSTGRES
from parley.server.stores.sqlite_schema import MIGRATIONS as SQLITE
from tests.contracts.support import ALICE, execute_raw, make_task, opened, run, with_params

LATEST = len(SQLITE)


def test_both_backends_know_the_same_versions() -> None:
    assert len(POSTGRES) == len(SQLITE) == LATEST
    for migrations in (POSTGRES, SQLITE):
        ddl = " ".join(step for steps in migrations for step in steps if isinstance(step, str))
        assert f"WHERE state IN {sql_list(ACTIVE_STATES)}" in ddl
        assert f"WHERE state IN {sql_list(TERMINAL_STATES)}" in ddl


def test_open_migrates_a_fresh_database_and_data_survives_a_reopen(durable_url: str) -> None:
    async def main() -> None:
        stores = open_store(durable_url)
        try:
            assert await stores.tasks.schema_status() == SchemaStatus(current=0, latest=LATEST)
        finally:
            await stores.tasks.close()
        async with opened(durable_url) as (store, _):
            assert await store.schema_status() == SchemaStatus(current=LATEST, latest=LATEST)
            created = await store.create(ALICE, make_task("t1"))
        async with opened(durable_url) as (store, _):
            assert await store.get(ALICE, "t1") == created
            assert await store.migrate() == SchemaStatus(current=LATEST, latest=LATEST)

    run(main())


def test_without_migrations_on_start_a_schema_behind_is_refused(durable_url: str) -> None:
    async def main() -> None:
        manual = with_params(durable_url, migrate="false")
        stores = open_store(manual)
        with pytest.raises(SchemaError, match="parley db upgrade"):
            await stores.tasks.open()
        with pytest.raises(StoreClosedError):
            await stores.tasks.get(ALICE, "t1")
        assert await stores.tasks.migrate() == SchemaStatus(current=LATEST, latest=LATEST)
        await stores.tasks.close()
        async with opened(manual) as (store, _):
            assert await store.get(ALICE, "t1") is None

    run(main())


@pytest.mark.parametrize("migrate", ["true", "false"])
def test_a_newer_schema_is_refused(durable_url: str, migrate: str) -> None:
    async def main() -> None:
        async with opened(durable_url) as (store, _):
            await store.create(ALICE, make_task("t1"))
        newer = LATEST + 1
        await execute_raw(
            durable_url,
            f"INSERT INTO parley_schema (version, applied_at) VALUES ({newer}, CURRENT_TIMESTAMP)",
        )
        stores = open_store(with_params(durable_url, migrate=migrate))
        message = f"schema is at version {newer}, newer than this Parley understands"
        with pytest.raises(SchemaError, match=message):
            await stores.tasks.open()
        with pytest.raises(SchemaError, match=message):
            await stores.tasks.migrate()
        assert await stores.tasks.schema_status() == SchemaStatus(current=newer, latest=LATEST)
        await stores.tasks.close()

    run(main())


def test_concurrent_opens_migrate_once(durable_url: str) -> None:
    async def main() -> None:
        stores = [open_store(durable_url) for _ in range(4)]
        await asyncio.gather(*(each.tasks.open() for each in stores))
        try:
            for each in stores:
                assert await each.tasks.schema_status() == SchemaStatus(LATEST, LATEST)
        finally:
            for each in stores:
                await each.tasks.close()

    run(main())


def test_a_store_is_unusable_before_open_and_after_close(durable_url: str) -> None:
    async def main() -> None:
        tasks, push = open_store(durable_url)
        with pytest.raises(StoreClosedError, match=r"AgentService\.startup"):
            await tasks.get(ALICE, "t1")
        await tasks.open()
        await push.open()  # shares the database: already open
        await tasks.create(ALICE, make_task("t1"))
        await push.close()
        await tasks.close()  # already closed: nothing to do
        with pytest.raises(StoreClosedError):
            await tasks.get(ALICE, "t1")
        with pytest.raises(StoreClosedError):
            await push.list(ALICE, "t1")

    run(main())
