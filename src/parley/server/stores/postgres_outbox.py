"""The PostgreSQL outbox (`PostgresPushConfigStore.outbox`): `push_outbox` rows, written by the
task store in the statement of the write that caused them (see `parley.server.push.outbox`).
Workers in several processes share it: a claim skips rows another worker has locked."""

# Queries are composed of constant fragments only; every value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

import time
from collections.abc import Sequence

from parley.server.push.outbox import BEHIND, DEAD, PENDING, Delivery
from parley.server.stores.postgres_db import PostgresDatabase
from parley.server.stores.sqlite_outbox import delivery

_COLUMNS = """o.id, o.tenant, o.owner, o.task_id, o.config_id, o.event_id, o.payload::text,
    o.attempts, o.due_at, o.created_at, o.state, o.last_error"""
_QUEUE = "tenant = $1 AND owner = $2 AND task_id = $3 AND config_id = $4"
_ANY_DUE = f"""SELECT 1 FROM push_outbox WHERE state = {PENDING} AND due_at <= $1
    AND lease_until <= $1 LIMIT 1"""
"""Whether a claim would find anything: read first, so an idle worker opens no transaction."""
_NEXT = f"""UPDATE push_outbox SET due_at = least(due_at, $5) WHERE id = (SELECT min(id)
    FROM push_outbox WHERE {_QUEUE} AND state = {PENDING})"""
"""The queue's next notification is due now (its head was just settled)."""
_REPAIR = f"""UPDATE push_outbox o SET due_at = $1 WHERE o.state = {PENDING}
    AND o.due_at = {BEHIND} AND o.id = (SELECT min(h.id) FROM push_outbox h
        WHERE h.tenant = o.tenant AND h.owner = o.owner AND h.task_id = o.task_id
        AND h.config_id = o.config_id AND h.state = {PENDING})"""
_CLAIM = f"""WITH heads AS (
        SELECT o.id FROM push_outbox o
        WHERE o.state = {PENDING} AND o.due_at <= $1 AND o.lease_until <= $1
        AND o.id = (SELECT min(h.id) FROM push_outbox h WHERE h.tenant = o.tenant
            AND h.owner = o.owner AND h.task_id = o.task_id AND h.config_id = o.config_id
            AND h.state = {PENDING})
        ORDER BY o.due_at, o.id LIMIT $3 FOR UPDATE OF o SKIP LOCKED),
    held AS (
        UPDATE push_outbox o SET lease_until = $2 FROM heads WHERE o.id = heads.id
        RETURNING o.*)
    SELECT {_COLUMNS}, p.body::text, p.protocol FROM held o
    LEFT JOIN push_configs p ON p.tenant = o.tenant AND p.owner = o.owner
        AND p.task_id = o.task_id AND p.config_id = o.config_id
    ORDER BY o.due_at, o.id"""


def _queue(each: Delivery) -> tuple[str, str, str, str]:
    return (*each.scope, each.task_id, each.config_id)


def _now() -> int:
    return time.time_ns() // 1000


class PostgresOutbox:
    def __init__(self, database: PostgresDatabase) -> None:
        self.database = database

    async def claim(self, now: int, lease_until: int, limit: int) -> list[Delivery]:
        async with self.database.connection() as connection:  # idle: no transaction
            if await connection.fetchval(_ANY_DUE, now) is None:
                return []
        async with self.database.connection(write=True) as connection:
            found = await connection.fetch(_CLAIM, now, lease_until, limit)
            claimed: list[Delivery] = []
            for row in found:
                if row[12] is None:  # the config was deleted: nothing more goes to it
                    await connection.execute(
                        f"DELETE FROM push_outbox WHERE {_QUEUE} AND state = {PENDING}",
                        *row[1:5],
                    )
                    continue
                claimed.append(delivery(tuple(row), row[12], row[13]))
        return claimed

    async def delivered(self, delivery: Delivery) -> None:
        async with self.database.connection(write=True) as connection:
            await connection.execute("DELETE FROM push_outbox WHERE id = $1", delivery.id)
            await connection.execute(_NEXT, *_queue(delivery), _now())

    async def retry(self, delivery: Delivery, due_at: int, error: str) -> None:
        async with self.database.connection() as connection:
            await connection.execute(
                """UPDATE push_outbox SET attempts = attempts + 1, due_at = $1, lease_until = 0,
                last_error = $2 WHERE id = $3""",
                due_at,
                error,
                delivery.id,
            )

    async def bury(self, delivery: Delivery, error: str) -> None:
        async with self.database.connection(write=True) as connection:
            await connection.execute(
                f"""UPDATE push_outbox SET attempts = attempts + 1, state = {DEAD},
                lease_until = 0, last_error = $1 WHERE id = $2""",
                error,
                delivery.id,
            )
            await connection.execute(_NEXT, *_queue(delivery), _now())

    async def disable(self, delivery: Delivery, error: str) -> None:
        queue = (*delivery.scope, delivery.task_id, delivery.config_id)
        async with self.database.connection(write=True) as connection:
            await connection.execute(
                "UPDATE push_outbox SET attempts = attempts + 1 WHERE id = $1", delivery.id
            )
            await connection.execute(
                f"""UPDATE push_outbox SET state = {DEAD}, lease_until = 0, last_error = $5
                WHERE {_QUEUE} AND state = {PENDING}""",
                *queue,
                error,
            )
            await connection.execute(
                "DELETE FROM push_configs WHERE tenant = $1 AND owner = $2 AND task_id = $3"
                " AND config_id = $4",
                *queue,
            )

    async def repair(self, now: int) -> int:
        async with self.database.connection() as connection:
            done = await connection.execute(_REPAIR, now)
        return int(done.rsplit(" ", 1)[-1])

    async def next_due(self) -> int | None:
        async with self.database.connection() as connection:
            found = await connection.fetchval(
                f"SELECT min(due_at) FROM push_outbox WHERE state = {PENDING}"
            )
        return None if found is None else int(found)

    async def inspect(self, *, state: int, limit: int) -> list[Delivery]:
        async with self.database.connection() as connection:
            found = await connection.fetch(
                f"SELECT {_COLUMNS} FROM push_outbox o WHERE o.state = $1 ORDER BY o.id LIMIT $2",
                state,
                limit,
            )
        return [delivery(tuple(row)) for row in found]

    async def requeue(self, ids: Sequence[int] | None, now: int) -> int:
        update = f"UPDATE push_outbox SET state = {PENDING}, due_at = $1, lease_until = 0"
        async with self.database.connection() as connection:
            if ids is None:
                done = await connection.execute(f"{update} WHERE state = {DEAD}", now)
            else:
                done = await connection.execute(
                    f"{update} WHERE state = {DEAD} AND id = ANY($2::bigint[])", now, list(ids)
                )
        return int(done.rsplit(" ", 1)[-1])

    async def release(self, ids: Sequence[int], now: int) -> None:
        async with self.database.connection() as connection:
            await connection.execute(
                f"""UPDATE push_outbox SET lease_until = $1 WHERE state = {PENDING}
                AND lease_until > $1 AND id = ANY($2::bigint[])""",
                now,
                list(ids),
            )
