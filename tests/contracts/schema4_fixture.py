"""Databases written by the stores of schema version 4 (model objects as A2A 1.0 wire JSON),
kept as dumps in `tests/contracts/data/`, and what they hold: `populate` writes tasks, pages,
artifact chunks, push configs and pending notifications through a store; run on the memory
store it gives what a migrated database must read back.

The dumps were made at commit 279b642, the last before the stores' own format, with
`python -m tests.contracts.schema4_fixture` (SQLite: `iterdump` of the file; PostgreSQL:
`pg_dump --inserts` of the schema `parley_fixture`). Running it again now would write the
current format, so it is kept to show how they were made, not to remake them.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import tempfile
from datetime import timedelta
from pathlib import Path

from msgspec.structs import replace

from parley.model import (
    Artifact,
    AuthenticationInfo,
    DataPart,
    Message,
    RawPart,
    Role,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TextPart,
    UrlPart,
)
from parley.protocol import folding
from parley.protocol.negotiation import Version
from parley.server.stores import Stores, open_store
from tests.contracts.support import (
    ALICE,
    ALICE_ELSEWHERE,
    BOB,
    POSTGRES_URL,
    T0,
    Clock,
    apply,
    artifact_event,
    make_task,
    status_event,
    with_params,
)

DATA = Path(__file__).parent / "data"
SQLITE_DUMP = DATA / "schema4.sqlite.sql"
POSTGRES_DUMP = DATA / "schema4.postgres.sql"
POSTGRES_SCHEMA = "parley_fixture"
"""The schema named in the PostgreSQL dump (a test loads it under a fresh name)."""

SCOPES = (ALICE, BOB, ALICE_ELSEWHERE)
TASKS = ("rich", "untimed", "bare", "pushed", *(f"page-{i}" for i in range(5)))


def _rich() -> Task:
    question = Message(
        message_id="m-user",
        role=Role.USER,
        parts=(
            TextPart(text="Summarise these.", media_type="text/plain", metadata={"k": [1, 2]}),
            RawPart(raw=b"\x00\x01binary\xff", media_type="application/octet-stream"),
            UrlPart(url="https://example.com/report.pdf", filename="report.pdf"),
            DataPart(data={"rows": [{"a": 1.5, "b": None}], "ok": True}, filename="d.json"),
        ),
        context_id="ctx-rich",
        task_id="rich",
        metadata={"source": "fixture", "nested": {"deep": ["x"]}},
        extensions=("https://example.com/ext/v1",),
        reference_task_ids=("untimed",),
    )
    note = Message(
        message_id="m-note",
        role=Role.AGENT,
        parts=(TextPart(text="Working on it"),),
        context_id="ctx-rich",
        task_id="rich",
    )
    return Task(
        id="rich",
        context_id="ctx-rich",
        status=TaskStatus(
            state=TaskState.WORKING, message=note, timestamp=T0 + timedelta(microseconds=123_000)
        ),
        history=(question,),
        artifacts=(
            Artifact(
                artifact_id="a-first",
                parts=(TextPart(text="first "),),
                name="summary",
                description="the summary",
                metadata={"pages": 3},
                extensions=("https://example.com/ext/v1",),
            ),
        ),
        metadata={"priority": "high", "tags": ["a", "b"]},
        generation=1,
    )


def _bare() -> Task:
    """What the model allows but a peer may not send: an empty message id, no parts."""
    empty = Message(message_id="", role=Role.AGENT, parts=())
    return Task(
        id="bare",
        context_id="ctx-bare",
        status=TaskStatus(state=TaskState.INPUT_REQUIRED, timestamp=T0),
        history=(empty,),
        artifacts=(Artifact(artifact_id="", parts=()),),
    )


async def _write_rich(stores: Stores) -> None:
    tasks = stores.tasks
    stored = await tasks.create(ALICE, _rich())
    task = stored.task
    stored = await apply(
        tasks,
        ALICE,
        stored,
        artifact_event(task, "a-first", "second ", append=True),
        artifact_event(task, "a-second", "other", name="second"),
        artifact_event(task, "a-first", "again", append=True),
        artifact_event(task, "a-second", "replaced"),
    )
    several = (
        artifact_event(stored.task, "a-second", " and more", append=True),
        status_event(stored.task, TaskState.COMPLETED, note="done", minute=5, why="finished"),
    )
    task = stored.task
    for event in several:
        task = folding.apply_event(task, event)
    await tasks.save(ALICE, task, several, stored.version)


async def populate(stores: Stores) -> None:
    """Write the fixture's content through `stores` (opened)."""
    await _write_rich(stores)
    untimed = make_task("untimed", context_id="ctx-rich", state=TaskState.SUBMITTED, minute=None)
    await stores.tasks.create(ALICE, untimed)
    await stores.tasks.create(ALICE, _bare())
    for i in range(5):
        page = make_task(f"page-{i}", context_id="ctx-page", minute=10 + i % 3)
        await stores.tasks.create(BOB, page)
        await stores.tasks.create(ALICE_ELSEWHERE, replace(page, context_id="ctx-elsewhere"))
    hook = TaskPushNotificationConfig(
        url="https://hooks.example.com/a2a",
        task_id="pushed",
        id="hook-1",
        token="tok-1",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )
    pushed = make_task("pushed", context_id="ctx-push", minute=20)
    for scope in (ALICE, ALICE_ELSEWHERE):
        stored = await stores.tasks.create(scope, pushed, configs=((hook, Version.V1_0),))
        await apply(stores.tasks, scope, stored, status_event(pushed, TaskState.COMPLETED))
        other = replace(hook, id="hook-2", url="https://other.example.com/", authentication=None)
        await stores.push_configs.put(scope, other, protocol=Version.V0_3)
    await stores.push_configs.put(
        BOB, TaskPushNotificationConfig(url="https://bob.example.com/", task_id="page-0", id="b")
    )


async def _write(url: str) -> Stores:
    stores = open_store(url, clock=Clock())
    await stores.tasks.open()
    await stores.push_configs.open()
    try:
        await populate(stores)
    finally:
        await stores.push_configs.close()
        await stores.tasks.close()
    return stores


def _dump_sqlite() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "parley.db"
        asyncio.run(_write(f"sqlite:///{path}"))
        connection = sqlite3.connect(path)
        try:
            SQLITE_DUMP.write_text("\n".join(connection.iterdump()) + "\n")
        finally:
            connection.close()


async def _postgres(statement: str) -> None:
    import asyncpg  # noqa: PLC0415 - the postgres extra

    connection = await asyncpg.connect(POSTGRES_URL)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def _dump_postgres() -> None:
    asyncio.run(_postgres(f"DROP SCHEMA IF EXISTS {POSTGRES_SCHEMA} CASCADE"))
    asyncio.run(_postgres(f"CREATE SCHEMA {POSTGRES_SCHEMA}"))
    try:
        asyncio.run(_write(with_params(POSTGRES_URL, schema=POSTGRES_SCHEMA)))
        dump = subprocess.run(
            [
                "pg_dump",
                "--dbname",
                POSTGRES_URL,
                "--schema",
                POSTGRES_SCHEMA,
                "--no-owner",
                "--no-privileges",
                "--inserts",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        POSTGRES_DUMP.write_text(dump)
    finally:
        asyncio.run(_postgres(f"DROP SCHEMA IF EXISTS {POSTGRES_SCHEMA} CASCADE"))


if __name__ == "__main__":
    DATA.mkdir(exist_ok=True)
    _dump_sqlite()
    _dump_postgres()
