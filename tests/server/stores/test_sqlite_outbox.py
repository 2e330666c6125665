"""The SQLite outbox's ids: since schema 4 `push_outbox` has no AUTOINCREMENT, so an id
freed by deleting the newest rows is used again. A database written before (schema 3)
opens, migrates, and keeps its notifications, ids and order; a worker settling a
notification late, after its id went to another, changes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from parley.model import TaskPushNotificationConfig, TaskState
from parley.protocol.negotiation import Version
from parley.server.push.outbox import PENDING, Delivery
from parley.server.stores import SchemaStatus
from parley.server.stores.sqlite import SqlitePushConfigStore
from parley.server.stores.sqlite_outbox import SqliteOutbox
from parley.server.stores.sqlite_schema import MIGRATIONS
from tests.contracts.support import ALICE, apply, make_task, opened, run, status_event

LATEST = len(MIGRATIONS)
NOW = 2**61
"""µs since the epoch, after every due time (and before BEHIND)."""


def _config(task_id: str) -> tuple[TaskPushNotificationConfig, Version]:
    config = TaskPushNotificationConfig(task_id=task_id, id="c1", url="https://hook.example/a")
    return config, Version.V1_0


def _back_to_schema_3(path: Path) -> None:
    """The outbox as schema 3 left it (AUTOINCREMENT, its `sqlite_sequence` row), rows
    kept; the database at version 3, as an older Parley wrote it."""
    version_2 = MIGRATIONS[1]
    outbox_ddl = [step for step in version_2 if isinstance(step, str) and "push_outbox" in step]
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.execute("CREATE TABLE kept AS SELECT * FROM push_outbox")
            connection.execute("DROP TABLE push_outbox")
            for statement in outbox_ddl:
                connection.execute(statement)
            connection.execute("INSERT INTO push_outbox SELECT * FROM kept")
            connection.execute("DROP TABLE kept")
            connection.execute("DELETE FROM parley_schema WHERE version >= 4")
            connection.execute("ALTER TABLE parley_schema DROP COLUMN row_format")  # 5
    finally:
        connection.close()


def _outbox(push: object) -> SqliteOutbox:
    assert isinstance(push, SqlitePushConfigStore)
    return push.outbox


def _outbox_ddl(connection: sqlite3.Connection) -> str:
    (sql,) = connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'push_outbox'"
    ).fetchone()
    return str(sql)


def test_a_schema_3_outbox_migrates_with_its_notifications(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"

    async def write() -> list[Delivery]:
        async with opened(url) as (store, push):
            stored = await store.create(ALICE, make_task("t1"), configs=(_config("t1"),))
            await apply(store, ALICE, stored, status_event(stored.task, TaskState.COMPLETED))
            return await _outbox(push).inspect(state=PENDING, limit=10)

    before = run(write())
    assert [each.notification_id for each in before] == ["t1.1.0", "t1.2.0"]
    _back_to_schema_3(path)
    connection = sqlite3.connect(path)
    assert "AUTOINCREMENT" in _outbox_ddl(connection)
    connection.close()

    async def reopen() -> None:
        async with opened(url) as (store, push):
            assert await store.schema_status() == SchemaStatus(LATEST, LATEST)
            assert await _outbox(push).inspect(state=PENDING, limit=10) == before
            (head,) = await _outbox(push).claim(NOW, NOW + 1, 10)
            assert head.id == before[0].id
            await _outbox(push).delivered(head)
            (second,) = await _outbox(push).claim(NOW, NOW + 1, 10)  # the queue's order kept
            assert second.id == before[1].id
            await _outbox(push).delivered(second)
            assert await _outbox(push).inspect(state=PENDING, limit=10) == []

    run(reopen())
    connection = sqlite3.connect(path)
    assert "AUTOINCREMENT" not in _outbox_ddl(connection)
    connection.close()


def test_a_late_settle_of_a_reused_id_changes_nothing(tmp_path: Path) -> None:
    """A worker whose lease ran out settles after another worker delivered the notification
    and a new one took its id: the new one is neither deleted, retried nor buried."""

    async def main() -> None:
        async with opened(f"sqlite:///{tmp_path / 'ids.db'}") as (store, push):
            stored = await store.create(ALICE, make_task("t1"), configs=(_config("t1"),))
            (first,) = await _outbox(push).claim(NOW, NOW + 1, 10)
            await _outbox(push).delivered(first)  # the outbox is empty: its id is free again
            await apply(store, ALICE, stored, status_event(stored.task, TaskState.COMPLETED))
            (pending,) = await _outbox(push).inspect(state=PENDING, limit=10)
            assert (pending.id, pending.notification_id) == (first.id, "t1.2.0")
            await _outbox(push).delivered(first)
            await _outbox(push).retry(first, NOW * 2, "late")
            await _outbox(push).bury(first, "late")
            assert await _outbox(push).inspect(state=PENDING, limit=10) == [pending]

    run(main())
