"""Filling a store with many tasks quickly, for the ListTasks benchmark: two template tasks
are written through the store (so every row is what the store itself writes), then copied
in bulk by SQL with new ids, contexts (1,000 of them) and timestamps; one task in ten is
WORKING, the others COMPLETED, each with one history message and one artifact.
"""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime

from parley.model import Artifact, Message, Role, Task, TaskState, TaskStatus, TextPart
from parley.server.stores import Scope, open_store

TABLES = {
    "tasks": "tenant, owner, {id}, {context}, state, {status},"
    " sort_ts + {i} * CAST(1000000 AS BIGINT), metadata, version, history_count, event_count,"
    " created_at, updated_at, generation",
    "task_messages": "tenant, owner, {id}, position, body",
    "artifacts": "tenant, owner, {id}, artifact_id, position, header",
    "artifact_chunks": "tenant, owner, {id}, position, seq, parts",
}
KEYS = {"tasks": "id"}
TEMPLATES = {True: "template-working", False: "template-completed"}
START = datetime(2026, 1, 1, tzinfo=UTC)
SQLITE_STATUS = (
    "json_set(status, '$.timestamp',"
    f" strftime('%Y-%m-%dT%H:%M:%fZ', {int(START.timestamp())} + n.i, 'unixepoch'))"
)
POSTGRES_STATUS = (
    "jsonb_set(status::jsonb, '{timestamp}', to_jsonb(to_char("
    f"to_timestamp({int(START.timestamp())} + n.i) AT TIME ZONE 'UTC',"
    ' \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\')))::json'
)


def _template(task_id: str, state: TaskState) -> Task:
    user = Message(message_id="m1", role=Role.USER, parts=(TextPart(text="Summarise this."),))
    return Task(
        id=task_id,
        context_id="ctx-template",
        status=TaskStatus(state=state, timestamp=START),
        history=(user,),
        artifacts=(Artifact(artifact_id="a1", parts=(TextPart(text="A short summary."),)),),
    )


async def _write_templates(url: str, scope: Scope) -> None:
    stores = open_store(url)
    await stores.tasks.open()
    try:
        for working, task_id in TEMPLATES.items():
            state = TaskState.WORKING if working else TaskState.COMPLETED
            await stores.tasks.create(scope, _template(task_id, state))
    finally:
        await stores.tasks.close()


def _copies(table: str, scope: Scope, id_sql: str, status_sql: str, numbers: str) -> str:
    """Copies of a template's rows in `table`, task n's status one n seconds later."""
    columns = TABLES[table].format(
        id=id_sql, context="'ctx-' || (n.i % 1000)", status=status_sql, i="n.i"
    )
    key = KEYS.get(table, "task_id")
    # The template rows first, once (else the planner may rescan the table per copy).
    return (
        f"WITH tpl AS MATERIALIZED (SELECT * FROM {table}"
        f" WHERE tenant = '{scope[0]}' AND owner = '{scope[1]}' AND {key} = ?)"
        f" INSERT INTO {table} SELECT {columns} FROM tpl, {numbers}"
        " WHERE ((n.i % 10) = 0) = ?"
    )


async def fill_sqlite(url: str, scope: Scope, count: int) -> None:
    """`count` tasks in the SQLite database of `url` (templates included)."""
    await _write_templates(url, scope)
    path = url.removeprefix("sqlite:///")

    def bulk() -> None:
        connection = sqlite3.connect(path)
        numbers = (
            "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
            f"{count - 2}) SELECT i FROM n) AS n"
        )
        with connection:
            for table in TABLES:
                sql = _copies(table, scope, "printf('t%07d', n.i)", SQLITE_STATUS, numbers)
                for working, template in TEMPLATES.items():
                    connection.execute(sql, (template, working))
        connection.close()

    await asyncio.to_thread(bulk)


async def fill_postgres(url: str, scope: Scope, count: int) -> None:
    """`count` tasks in the PostgreSQL schema of `url` (templates included)."""
    import asyncpg  # noqa: PLC0415 - the postgres extra

    await _write_templates(url, scope)
    base, _, query = url.partition("?")
    schema = query.removeprefix("schema=")
    connection = await asyncpg.connect(base)
    try:
        await connection.execute(f'SET search_path TO "{schema}"')
        numbers = f"generate_series(1, {count - 2}) AS n(i)"
        for table in TABLES:
            ids = "format('t%s', lpad(n.i::text, 7, '0'))"
            sql = _copies(table, scope, ids, POSTGRES_STATUS, numbers)
            sql = sql.replace("?", "$1", 1).replace("?", "$2", 1)
            for working, template in TEMPLATES.items():
                await connection.execute(sql, template, working)
            # What autovacuum would do after such growth; it also lets the foreign-key
            # checks of the next table use the index.
            await connection.execute(f"ANALYZE {table}")
    finally:
        await connection.close()
