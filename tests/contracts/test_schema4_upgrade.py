"""A database written before the stores' own format (schema version 4: model objects as A2A
1.0 wire JSON) opens with this code, is migrated, and reads back what was written: every
task (history, artifacts put together from their chunks, status, metadata, generation,
version), the pages of a listing, the push configs; pending notifications are kept. The
databases are dumps made by that code (`schema4_fixture`); what they must read back is the
same content written to the memory store."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from parley.model import ListTasksRequest, TaskState
from parley.server.stores import SchemaStatus, Stores, open_store, row_format, row_upgrade
from tests.contracts import schema4_fixture as fixture
from tests.contracts.conftest import require_postgres
from tests.contracts.support import (
    ALICE,
    POSTGRES_URL,
    apply,
    artifact_event,
    create_schema,
    drop_schema,
    opened,
    run,
    status_event,
    with_params,
)
from tests.contracts.test_migrations import LATEST


def _sqlite(folder: Path) -> str:
    path = folder / "schema4.db"
    connection = sqlite3.connect(path)
    try:
        # `iterdump` empties `sqlite_sequence`, left by the AUTOINCREMENT of schema 2; a
        # database made by the script has none (no table of schema 4 has AUTOINCREMENT).
        lines = fixture.SQLITE_DUMP.read_text().splitlines()
        connection.executescript("\n".join(x for x in lines if "sqlite_sequence" not in x))
    finally:
        connection.close()
    return f"sqlite:///{path}"


async def _load_postgres(schema: str) -> None:
    import asyncpg  # noqa: PLC0415 - the postgres extra

    lines = [
        line
        for line in fixture.POSTGRES_DUMP.read_text().splitlines()
        if not line.startswith("\\") and not line.startswith("CREATE SCHEMA ")
    ]
    script = "\n".join(lines).replace(f"{fixture.POSTGRES_SCHEMA}.", f'"{schema}".')
    connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
    try:
        await connection.execute(script)
    finally:
        await connection.close()


def _postgres() -> Iterator[str]:
    require_postgres()
    schema = asyncio.run(create_schema())
    try:
        asyncio.run(_load_postgres(schema))
        yield with_params(POSTGRES_URL, schema=schema)
    finally:
        asyncio.run(drop_schema(schema))


@pytest.fixture(params=["sqlite", "postgres"])
def old_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database as the code of schema version 4 left it."""
    if request.param == "sqlite":
        yield _sqlite(tmp_path)
    else:
        yield from _postgres()


async def _fetch(url: str, query: str) -> list[tuple[object, ...]]:
    """Rows of one query on the database behind a durable store URL, bypassing Parley."""
    if url.startswith("sqlite:///"):
        connection = sqlite3.connect(url[len("sqlite:///") :].partition("?")[0])
        try:
            return connection.execute(query).fetchall()
        finally:
            connection.close()
    import asyncpg  # noqa: PLC0415

    schema = url.partition("schema=")[2].partition("&")[0]
    pg = await asyncpg.connect(POSTGRES_URL, timeout=5, server_settings={"search_path": schema})
    try:
        return [tuple(row) for row in await pg.fetch(query)]
    finally:
        await pg.close()


async def _columns(url: str) -> str:
    """Every value of the columns holding model objects, as one text."""
    texts = []
    for table, column, _ in row_upgrade.COLUMNS:
        texts += [str(row[0]) for row in await _fetch(url, f"SELECT {column} FROM {table}")]
    return "\n".join(texts)


@asynccontextmanager
async def _reference() -> AsyncIterator[Stores]:
    async with opened("memory") as stores:
        await fixture.populate(stores)
        yield stores


async def _same_tasks(found: Stores, expected: Stores) -> None:
    for scope in fixture.SCOPES:
        for task_id in fixture.TASKS:
            for length in (None, 0, 1):
                got = await found.tasks.get(scope, task_id, history_length=length)
                assert got == await expected.tasks.get(scope, task_id, history_length=length)
            configs = await found.push_configs.list(scope, task_id)
            assert configs == await expected.push_configs.list(scope, task_id)
            for config in configs:
                assert await found.push_configs.get(scope, task_id, config.id) == config


async def _same_pages(found: Stores, expected: Stores, request: ListTasksRequest) -> int:
    pages = 0
    for scope in fixture.SCOPES:
        token = ""
        while True:
            asked = ListTasksRequest(
                context_id=request.context_id,
                status=request.status,
                history_length=request.history_length,
                include_artifacts=request.include_artifacts,
                page_token=token,
            )
            page = await found.tasks.list(scope, asked, 2)
            assert page == await expected.tasks.list(scope, asked, 2)
            pages += 1
            token = page.next_page_token
            if not token:
                break
    return pages


LISTINGS = (
    ListTasksRequest(),
    ListTasksRequest(include_artifacts=True),
    ListTasksRequest(history_length=0),
    ListTasksRequest(context_id="ctx-page"),
    ListTasksRequest(status=TaskState.COMPLETED, include_artifacts=True),
)


def test_a_schema4_database_migrates_and_reads_back_what_was_written(old_url: str) -> None:
    async def main() -> None:
        stores = open_store(old_url)
        assert await stores.tasks.schema_status() == SchemaStatus(current=4, latest=LATEST)
        await stores.tasks.close()
        before = await _columns(old_url)
        assert '"messageId":"m-user"' in before
        assert '"state":"TASK_STATE_COMPLETED"' in before
        outbox = "SELECT event_id, payload FROM push_outbox ORDER BY id"
        pending = await _fetch(old_url, outbox)
        assert len(pending) == 4  # two tasks, created and completed, one config each
        async with opened(old_url) as found, _reference() as expected:
            assert await found.tasks.schema_status() == SchemaStatus(LATEST, LATEST)
            after = await _columns(old_url)
            assert '"message_id":"m-user"' in after
            assert "messageId" not in after
            assert "TASK_STATE_" not in after
            recorded = "SELECT version, row_format FROM parley_schema ORDER BY version"
            assert await _fetch(old_url, recorded) == [
                (1, None), (2, None), (3, None), (4, None), (5, row_format.FORMAT)
            ]  # fmt: skip
            assert await _fetch(old_url, outbox) == pending  # bodies to send, kept
            await _same_tasks(found, expected)
            pages = [await _same_pages(found, expected, request) for request in LISTINGS]
            assert sum(pages) > len(LISTINGS) * len(fixture.SCOPES)  # some lists had pages

    run(main())


def test_a_migrated_task_takes_more_writes(old_url: str) -> None:
    """A task written in the old format, then saved in the new one, reads back whole."""

    async def main() -> None:
        async with _reference() as expected:
            async with opened(old_url) as found:
                for stores in (found, expected):
                    stored = await stores.tasks.get(ALICE, "untimed")
                    assert stored is not None
                    await apply(
                        stores.tasks,
                        ALICE,
                        stored,
                        artifact_event(stored.task, "a-new", "made ", name="late"),
                        artifact_event(stored.task, "a-new", "later", append=True),
                        status_event(stored.task, TaskState.WORKING, note="on it", minute=9),
                    )
            async with opened(old_url) as reopened:
                await _same_tasks(reopened, expected)

    run(main())
