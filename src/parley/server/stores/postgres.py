"""The PostgreSQL task and push-config stores (asyncpg, pooled): the same tables as SQLite;
a task is read in one statement (history and artifacts aggregated by the server), so a read
is consistent without a transaction.
"""

# Queries are composed of constant fragments only; every value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from parley.model import ListTasksRequest, Task, TaskEvent, TaskPushNotificationConfig
from parley.protocol import paging
from parley.protocol.negotiation import Version
from parley.server.stores import recovery, rows
from parley.server.stores.base import (
    InlineConfigs,
    Scope,
    StaleWriteError,
    StoredTask,
    TaskPage,
)
from parley.server.stores.migrations import ACTIVE_STATES, sql_list
from parley.server.stores.postgres_db import PostgresDatabase
from parley.server.stores.postgres_outbox import PostgresOutbox
from parley.server.stores.postgres_sql import (
    ARTIFACTS,
    CHILD,
    CREATE,
    CREATE_CONFIGURED,
    GET,
    HISTORY,
    KEY,
    PURGE,
    RECORD_AFTER,
    SAVE,
    SAVE_BARE,
    UPDATE_TASK,
    Key,
    save_arguments,
    write_rows,
)
from parley.server.stores.retention import DurableLifecycle

PURGE_BATCH = 500
"""Tasks deleted per purge transaction."""
COUNTS_KEPT = 10_000
"""Tasks whose (version, history count, event count) a store remembers for one-statement
saves; others take the read-then-write path."""


def _nothing() -> None:
    pass


async def put_config(
    connection: Any, scope: Scope, config: TaskPushNotificationConfig, protocol: Version
) -> None:
    await connection.execute(
        """INSERT INTO push_configs (tenant, owner, task_id, config_id, body, protocol)
        VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant, owner, task_id, config_id)
        DO UPDATE SET body = excluded.body, protocol = excluded.protocol""",
        *scope,
        config.task_id,
        config.id,
        rows.push_config_json(rows.with_tenant(config, scope[0])),
        protocol.value,
    )


def _config_arrays(scope: Scope, configs: InlineConfigs) -> tuple[list[str], list[str], list[str]]:
    """$15..$17 of `CREATE_CONFIGURED`: the configs' ids, bodies and protocols (the last of
    an id given twice, as putting them in turn would leave)."""
    given = {config.id: (config, protocol) for config, protocol in configs}
    return (
        list(given),
        [rows.push_config_json(rows.with_tenant(c, scope[0])) for c, _ in given.values()],
        [protocol.value for _, protocol in given.values()],
    )


def _notifications(
    task: Task, version: int, events: Sequence[TaskEvent] | None
) -> tuple[list[str], list[str]]:
    found = rows.notifications(task, version, events)
    return [each[0] for each in found], [each[1] for each in found]


def _task(row: Sequence[Any]) -> Task:
    """A task from (id, context id, status, metadata, history, artifacts, generation),
    history and artifacts aggregated as JSON by the server."""
    task_id, context_id, status, metadata, history, artifacts, generation = row
    found = [] if artifacts is None else rows.loads(artifacts)
    return rows.task(
        task_id,
        context_id,
        status_text=status,
        metadata_text=metadata,
        history=[] if history is None else rows.loads(history),
        artifacts=[rows.artifact(header, chunks or []) for header, chunks in found],
        generation=generation,
    )


class _Query:
    """A WHERE clause being built, with its numbered parameters."""

    def __init__(self, scope: Scope) -> None:
        self.params: list[object] = [*scope]
        self.clauses = ["t.tenant = $1", "t.owner = $2"]

    def param(self, value: object) -> str:
        self.params.append(value)
        return f"${len(self.params)}"

    def where(self, clause: str) -> None:
        self.clauses.append(clause)

    def sql(self) -> str:
        return " AND ".join(self.clauses)


def _filtered(scope: Scope, request: ListTasksRequest) -> _Query:
    query = _Query(scope)
    if request.context_id:
        query.where(f"t.context_id = {query.param(request.context_id)}")
    if request.status is not None:
        query.where(f"t.state = {query.param(int(request.status))}")
    if request.status_timestamp_after is not None:
        query.where(f"t.sort_ts >= {query.param(rows.micros(request.status_timestamp_after))}")
    return query


class PostgresTaskStore(DurableLifecycle):
    """Tasks in PostgreSQL (see `postgres_schema` for the tables)."""

    def __init__(
        self, database: PostgresDatabase, *, clock: Callable[[], datetime] = rows.utc_now
    ) -> None:
        super().__init__(database, clock=clock)
        self.database: PostgresDatabase = database
        self._counts: dict[Key, tuple[int, int, int, bool]] = {}
        """(version, history count, event count, has push configs) of tasks this store
        wrote last."""
        self.recorded: Callable[[], None] = _nothing
        """Called after a write recorded notifications (the delivery worker's wake-up)."""

    # ----------------------------------------------------------------- tasks

    def shares_configs(self, push_store: object) -> bool:
        """Whether `create` may set configs of `push_store` (one of the same database)."""
        return getattr(push_store, "database", None) is self.database

    async def create(self, scope: Scope, task: Task, *, configs: InlineConfigs = ()) -> StoredTask:
        key = (*scope, task.id)
        changes = rows.created(task)
        now = self.clock()
        status = rows.status_json(task.status)
        arguments = (
            *key,
            task.context_id,
            int(task.status.state),
            status,
            rows.sort_ts(task),
            rows.metadata_json(task.metadata),
            len(task.history),
            now,
            task.generation,
            *_notifications(task, 1, None),
            rows.micros(now),
        )
        async with self.database.connection(write=True) as connection:
            if configs:  # set with the task, in the same statement
                row = await connection.fetchrow(
                    CREATE_CONFIGURED, *arguments, *_config_arrays(scope, configs)
                )
            else:  # its first notification goes to the configs put before it, if any
                row = await connection.fetchrow(CREATE, *arguments)
            assert row is not None
            made, recorded = row
            if not made:
                raise StaleWriteError(f"task {task.id} already exists")
            await write_rows(connection, key, changes)
        self._remember(key, 1, len(task.history), 0, configs=bool(recorded))
        if recorded:
            self.recorded()
        return StoredTask(task=task, version=1)

    async def get(
        self, scope: Scope, task_id: str, *, history_length: int | None = None
    ) -> StoredTask | None:
        async with self.database.connection() as connection:
            row = await connection.fetchrow(GET, *scope, task_id, history_length)
        if row is None:
            return None
        context_id, status, metadata, version, generation, history, artifacts = row
        task = _task((task_id, context_id, status, metadata, history, artifacts, generation))
        return StoredTask(task=task, version=version)

    def _remember(
        self, key: Key, version: int, history_count: int, event_count: int, *, configs: bool
    ) -> None:
        counts = self._counts
        counts.pop(key, None)
        counts[key] = (version, history_count, event_count, configs)
        if len(counts) > COUNTS_KEPT:
            del counts[next(iter(counts))]

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask:
        key = (*scope, task.id)
        known = self._counts.pop(key, None)
        if known is not None and known[0] == expected_version:
            await self._save_known(key, task, events, expected_version, known)
        else:
            await self._save_read_first(key, task, events, expected_version)
        return StoredTask(task=task, version=expected_version + 1)

    async def _save_known(
        self,
        key: Key,
        task: Task,
        events: Sequence[TaskEvent],
        expected_version: int,
        known: tuple[int, int, int, bool],
    ) -> None:
        changes = rows.appended(task, events, known[1], known[2])
        now = self.clock()
        status = rows.status_json(task.status)
        arguments = (
            *key,
            int(task.status.state),
            status,
            rows.sort_ts(task),
            rows.metadata_json(task.metadata),
            len(task.history),
            len(events),
            now,
            task.generation,
            expected_version,
            *save_arguments(changes),
        )
        configs, recorded = known[3], 0
        async with self.database.connection() as connection:
            if not configs:  # none at the last write: no notification encoded, unless now
                row = await connection.fetchrow(SAVE_BARE, *arguments)
                assert row is not None
                applied, configs = row
            if configs:
                notified = _notifications(task, expected_version + 1, events)
                row = await connection.fetchrow(SAVE, *arguments, *notified, rows.micros(now))
                assert row is not None
                applied, recorded = row
        if not applied:
            raise StaleWriteError(f"task {task.id} is not at version {expected_version}")
        history, events_now = len(task.history), known[2] + len(events)
        self._remember(key, expected_version + 1, history, events_now, configs=configs)
        if recorded:
            self.recorded()

    async def _save_read_first(
        self, key: Key, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> None:
        status = rows.status_json(task.status)
        now = self.clock()
        async with self.database.connection(write=True) as connection:
            found = await connection.fetchrow(
                f"SELECT version, history_count, event_count FROM tasks WHERE {KEY} FOR UPDATE",
                *key,
            )
            if found is None or found[0] != expected_version:
                raise StaleWriteError(f"task {task.id} is not at version {expected_version}")
            changes = rows.appended(task, events, found[1], found[2])
            await connection.execute(
                UPDATE_TASK,
                *key,
                int(task.status.state),
                status,
                rows.sort_ts(task),
                rows.metadata_json(task.metadata),
                len(task.history),
                len(events),
                now,
                task.generation,
            )
            await write_rows(connection, key, changes)
            recorded = await connection.execute(
                RECORD_AFTER,
                *key,
                *_notifications(task, expected_version + 1, events),
                rows.micros(now),
            )
        notified = not recorded.endswith(" 0")
        history, events_now = len(task.history), found[2] + len(events)
        self._remember(key, expected_version + 1, history, events_now, configs=notified)
        if notified:
            self.recorded()

    async def list(self, scope: Scope, request: ListTasksRequest, page_size: int) -> TaskPage:
        size = paging.check_page_size(page_size)
        shape = rows.shape_of(request)
        query = _filtered(scope, request)
        count_sql = f"SELECT count(*) FROM tasks t WHERE {query.sql()}"
        count_params = list(query.params)
        if request.page_token:
            cursor = paging.decode_page_token(request.page_token)
            stamp, task_id = query.param(rows.cursor_ts(cursor)), query.param(cursor.task_id)
            query.where(f'(t.sort_ts, t.id) < ({stamp}, {task_id}::text COLLATE "C")')
        history = "NULL::json"
        if shape.history_length is None:
            history = HISTORY.format(first="0")
        elif shape.history_length > 0:
            history = HISTORY.format(first=f"t.history_count - {query.param(shape.history_length)}")
        artifacts = ARTIFACTS if shape.include_artifacts else "NULL::json"
        page_sql = f"""SELECT t.id, t.context_id, t.status, t.metadata, {history}, {artifacts},
            t.generation FROM tasks t WHERE {query.sql()} ORDER BY t.sort_ts DESC, t.id DESC
            LIMIT {query.param(size + 1)}"""
        async with self.database.connection() as connection:
            total = await connection.fetchval(count_sql, *count_params)
            found = await connection.fetch(page_sql, *query.params)
        tasks = tuple(_task(tuple(row)) for row in found[:size])
        token = paging.encode_page_token(paging.cursor_of(tasks[-1])) if len(found) > size else ""
        return TaskPage(tasks=tasks, next_page_token=token, total_size=int(total))

    # ----------------------------------------------------------------- restart, retention

    async def recover(self, now: datetime, *, namespace: str | None = None) -> int:
        async with self.database.connection() as connection:
            found = await connection.fetch(
                f"SELECT tenant, owner, id FROM tasks WHERE state IN {sql_list(ACTIVE_STATES)}"
            )
        keys = [(r[0], r[1], r[2]) for r in found]
        return await recovery.fail_interrupted(self, keys, now, namespace)

    async def purge(self, older_than: datetime) -> int:
        purged = 0
        while True:
            async with self.database.connection(write=True) as connection:
                count = int(await connection.fetchval(PURGE, older_than, PURGE_BATCH))
            purged += count
            if count < PURGE_BATCH:
                return purged


class PostgresPushConfigStore:
    """Push configs in the same PostgreSQL database, scoped like tasks, and their outbox."""

    def __init__(self, database: PostgresDatabase) -> None:
        self.database = database
        self.outbox = PostgresOutbox(database)

    async def open(self) -> None:
        await self.database.open()

    async def close(self) -> None:
        await self.database.close()

    async def put(
        self, scope: Scope, config: TaskPushNotificationConfig, *, protocol: Version = Version.V1_0
    ) -> None:
        async with self.database.connection() as connection:
            await put_config(connection, scope, config, protocol)

    async def get(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        async with self.database.connection() as connection:
            body = await connection.fetchval(
                f"SELECT body FROM push_configs WHERE {CHILD} AND config_id = $4",
                *scope,
                task_id,
                config_id,
            )
        return None if body is None else rows.push_config(body)

    async def list(self, scope: Scope, task_id: str) -> tuple[TaskPushNotificationConfig, ...]:
        async with self.database.connection() as connection:
            found = await connection.fetch(
                f"SELECT body FROM push_configs WHERE {CHILD} ORDER BY seq", *scope, task_id
            )
        return tuple(rows.push_config(row[0]) for row in found)

    async def delete(self, scope: Scope, task_id: str, config_id: str) -> None:
        """The config, and the notifications still waiting for it (none is sent after)."""
        async with self.database.connection(write=True) as connection:
            for table, pending in (("push_configs", ""), ("push_outbox", " AND state = 0")):
                await connection.execute(
                    f"DELETE FROM {table} WHERE {CHILD} AND config_id = $4{pending}",
                    *scope,
                    task_id,
                    config_id,
                )
