"""The SQLite outbox (`SqlitePushConfigStore.outbox`): `push_outbox` rows, written by the task
store in the transaction of the write that caused them (see `parley.server.push.outbox`)."""

# Queries are composed of constant fragments only; every value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from parley.model import Task, TaskEvent
from parley.protocol.negotiation import Version
from parley.server.push.outbox import BEHIND, DEAD, PENDING, Delivery
from parley.server.stores import rows
from parley.server.stores.sqlite_db import SqliteDatabase

CONFIG_IDS = """SELECT config_id FROM push_configs
    WHERE tenant = ? AND owner = ? AND task_id = ? ORDER BY rowid"""
PENDING_IN_QUEUE = """SELECT 1 FROM push_outbox q WHERE q.tenant = ?1 AND q.owner = ?2
    AND q.task_id = ?3 AND q.config_id = p.config_id AND q.state = 0"""
"""Whether notifications are pending for the config `p` of the task ?1..?3 (a subquery)."""
_RECORD = """INSERT INTO push_outbox (tenant, owner, task_id, config_id, event_id, payload,
    due_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
_COLUMNS = """o.id, o.tenant, o.owner, o.task_id, o.config_id, o.event_id, o.payload,
    o.attempts, o.due_at, o.created_at, o.state, o.last_error"""
_HEADS = f"""SELECT {_COLUMNS}, p.body, p.protocol FROM push_outbox o
    LEFT JOIN push_configs p ON p.tenant = o.tenant AND p.owner = o.owner
        AND p.task_id = o.task_id AND p.config_id = o.config_id
    WHERE o.state = {PENDING} AND o.due_at <= ? AND o.lease_until <= ?
    AND o.id = (SELECT min(h.id) FROM push_outbox h WHERE h.tenant = o.tenant
        AND h.owner = o.owner AND h.task_id = o.task_id AND h.config_id = o.config_id
        AND h.state = {PENDING})
    ORDER BY o.due_at, o.id LIMIT ?"""
_QUEUE = "tenant = ? AND owner = ? AND task_id = ? AND config_id = ?"
_ROW = f"id = ? AND {_QUEUE} AND event_id = ?"
"""A claimed notification: its id, and what it is (an id may be used again once the newest
rows are deleted; a worker settling late, after another took it over, then changes nothing)."""
_ANY_DUE = f"""SELECT 1 FROM push_outbox WHERE state = {PENDING} AND due_at <= ?
    AND lease_until <= ? LIMIT 1"""
"""Whether a claim would find anything: read first, so an idle worker takes no write lock."""
_NEXT = f"""UPDATE push_outbox SET due_at = min(due_at, ?) WHERE id = (SELECT min(id)
    FROM push_outbox WHERE {_QUEUE} AND state = {PENDING})"""
"""The queue's next notification is due now (its head was just settled)."""
_REPAIR = f"""UPDATE push_outbox SET due_at = ? WHERE state = {PENDING} AND due_at = {BEHIND}
    AND id = (SELECT min(h.id) FROM push_outbox h WHERE h.tenant = push_outbox.tenant
        AND h.owner = push_outbox.owner AND h.task_id = push_outbox.task_id
        AND h.config_id = push_outbox.config_id AND h.state = {PENDING})"""


def record(  # noqa: PLR0917 (the parts of one write)
    connection: sqlite3.Connection,
    key: tuple[str, str, str],
    queues: Sequence[tuple[str, int]],
    task: Task,
    version: int,
    events: Sequence[TaskEvent] | None,
    now: int,
) -> int:
    """Queue the write's notifications for the task's push configs (`queues`: each one's id,
    and whether notifications for it are pending), in its transaction: only a queue's
    first is due now, the others wait BEHIND it (`push.outbox`)."""
    if not queues:
        return 0
    found = rows.notifications(task, version, events)
    if len(found) == 1 and len(queues) == 1:  # the usual write: one event, one config
        (config_id, pending), (event_id, payload) = queues[0], found[0]
        connection.execute(
            _RECORD, (*key, config_id, event_id, payload, BEHIND if pending else now, now)
        )
        return 1
    connection.executemany(
        _RECORD,
        [
            (*key, config_id, event_id, payload, BEHIND if pending or i else now, now)
            for config_id, pending in queues
            for i, (event_id, payload) in enumerate(found)
        ],
    )
    return len(queues) * len(found)


def delivery(row: Sequence[Any], body: str | None = None, protocol: str | None = None) -> Delivery:
    """A delivery from the `_COLUMNS` of a row (and its config's body and protocol)."""
    id_, tenant, owner, task_id, config_id, event_id, payload, attempts, due, created = row[:10]
    return Delivery(
        id=id_,
        scope=(tenant, owner),
        task_id=task_id,
        config_id=config_id,
        notification_id=event_id,
        payload=payload.encode() if isinstance(payload, str) else bytes(payload),
        attempts=attempts,
        due_at=due,
        created_at=created,
        state=row[10],
        last_error=row[11],
        config=None if body is None else rows.push_config(body),
        protocol=Version(protocol) if protocol else Version.V1_0,
    )


def _queue(each: Delivery) -> tuple[str, str, str, str]:
    return (*each.scope, each.task_id, each.config_id)


def _row(each: Delivery) -> tuple[int, str, str, str, str, str]:
    return (each.id, *each.scope, each.task_id, each.config_id, each.notification_id)


def _now() -> int:
    return time.time_ns() // 1000


class SqliteOutbox:
    def __init__(self, database: SqliteDatabase) -> None:
        self.database = database

    async def claim(self, now: int, lease_until: int, limit: int) -> list[Delivery]:
        due = await self.database.run(lambda c: c.execute(_ANY_DUE, (now, now)).fetchone())
        if due is None:
            return []

        def work(connection: sqlite3.Connection) -> list[Delivery]:
            found = connection.execute(_HEADS, (now, now, limit)).fetchall()
            claimed: list[Delivery] = []
            for row in found:
                if row[12] is None:  # the config was deleted: nothing more goes to it
                    connection.execute(
                        f"DELETE FROM push_outbox WHERE {_QUEUE} AND state = {PENDING}", row[1:5]
                    )
                    continue
                connection.execute(
                    "UPDATE push_outbox SET lease_until = ? WHERE id = ?", (lease_until, row[0])
                )
                claimed.append(delivery(row, row[12], row[13]))
            return claimed

        return await self.database.write(work)

    async def delivered(self, delivery: Delivery) -> None:
        def work(connection: sqlite3.Connection) -> None:
            connection.execute(f"DELETE FROM push_outbox WHERE {_ROW}", _row(delivery))
            connection.execute(_NEXT, (_now(), *_queue(delivery)))

        await self.database.write(work)

    async def retry(self, delivery: Delivery, due_at: int, error: str) -> None:
        await self.database.write(
            lambda c: c.execute(
                f"""UPDATE push_outbox SET attempts = attempts + 1, due_at = ?, lease_until = 0,
                last_error = ? WHERE {_ROW}""",
                (due_at, error, *_row(delivery)),
            )
        )

    async def bury(self, delivery: Delivery, error: str) -> None:
        def work(connection: sqlite3.Connection) -> None:
            connection.execute(
                f"""UPDATE push_outbox SET attempts = attempts + 1, state = {DEAD},
                lease_until = 0, last_error = ? WHERE {_ROW}""",
                (error, *_row(delivery)),
            )
            connection.execute(_NEXT, (_now(), *_queue(delivery)))

        await self.database.write(work)

    async def disable(self, delivery: Delivery, error: str) -> None:
        queue = _queue(delivery)

        def work(connection: sqlite3.Connection) -> None:
            connection.execute(
                f"UPDATE push_outbox SET attempts = attempts + 1 WHERE {_ROW}", _row(delivery)
            )
            connection.execute(
                f"""UPDATE push_outbox SET state = {DEAD}, lease_until = 0, last_error = ?
                WHERE {_QUEUE} AND state = {PENDING}""",
                (error, *queue),
            )
            connection.execute(
                "DELETE FROM push_configs WHERE tenant = ? AND owner = ? AND task_id = ?"
                " AND config_id = ?",
                queue,
            )

        await self.database.write(work)

    async def repair(self, now: int) -> int:
        return await self.database.write(lambda c: c.execute(_REPAIR, (now,)).rowcount)

    async def next_due(self) -> int | None:
        found = await self.database.run(
            lambda c: c.execute(
                f"SELECT min(due_at) FROM push_outbox WHERE state = {PENDING}"
            ).fetchone()
        )
        return None if found is None else found[0]

    async def inspect(self, *, state: int, limit: int) -> list[Delivery]:
        found = await self.database.run(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM push_outbox o WHERE o.state = ? ORDER BY o.id LIMIT ?",
                (state, limit),
            ).fetchall()
        )
        return [delivery(row) for row in found]

    async def requeue(self, ids: Sequence[int] | None, now: int) -> int:
        def work(connection: sqlite3.Connection) -> int:
            update = f"UPDATE push_outbox SET state = {PENDING}, due_at = ?, lease_until = 0"
            if ids is None:
                return connection.execute(f"{update} WHERE state = {DEAD}", (now,)).rowcount
            return sum(
                connection.execute(f"{update} WHERE state = {DEAD} AND id = ?", (now, i)).rowcount
                for i in ids
            )

        return await self.database.write(work)

    async def release(self, ids: Sequence[int], now: int) -> None:
        update = f"""UPDATE push_outbox SET lease_until = ?1 WHERE state = {PENDING}
            AND lease_until > ?1 AND id = ?2"""
        await self.database.write(lambda c: c.executemany(update, [(now, i) for i in ids]))
