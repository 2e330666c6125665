"""The SQLite task and push-config stores (the embedded default of `parley serve`): a task
row holds the current status, and history messages and artifact chunks are appended as
rows, so a save writes only what changed and a listing loads artifacts only when asked.
"""

# Queries are composed of constant fragments only; every value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from operator import itemgetter

from parley.model import (
    Artifact,
    ListTasksRequest,
    Task,
    TaskEvent,
    TaskPushNotificationConfig,
)
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
from parley.server.stores.migrations import ACTIVE_STATES, TERMINAL_STATES, sql_list
from parley.server.stores.retention import DurableLifecycle
from parley.server.stores.sqlite_db import SqliteDatabase, transaction
from parley.server.stores.sqlite_outbox import CONFIG_IDS, PENDING_IN_QUEUE, SqliteOutbox, record

PURGE_BATCH = 500
"""Tasks deleted per purge transaction (the write lock is held that long, no longer)."""

_KEY = "tenant = ? AND owner = ? AND id = ?"
_CHILD = "tenant = ? AND owner = ? AND task_id = ?"
_INSERT_TASK = """INSERT INTO tasks (tenant, owner, id, context_id, state, status, sort_ts,
    metadata, version, history_count, event_count, created_at, updated_at, generation)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 0, ?, ?, ?) ON CONFLICT DO NOTHING"""
_UPDATE_TASK = f"""UPDATE tasks SET state = ?, status = ?, sort_ts = ?, metadata = ?,
    version = version + 1, history_count = ?, event_count = event_count + ?, updated_at = ?,
    generation = ? WHERE {_KEY}"""
_UPSERT_HEADER = """INSERT INTO artifacts (tenant, owner, task_id, artifact_id, position, header)
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, owner, task_id, position)
    DO UPDATE SET artifact_id = excluded.artifact_id, header = excluded.header"""
_INSERT_CHUNK = """INSERT INTO artifact_chunks (tenant, owner, task_id, position, seq, parts)
    VALUES (?, ?, ?, ?, ?, ?)"""
_INSERT_MESSAGE = """INSERT INTO task_messages (tenant, owner, task_id, position, body)
    VALUES (?, ?, ?, ?, ?)"""
_ARTIFACTS = """SELECT a.position, a.header, c.parts FROM artifacts a
    JOIN artifact_chunks c USING (tenant, owner, task_id, position)
    WHERE a.tenant = ? AND a.owner = ? AND a.task_id = ? ORDER BY a.position, c.seq"""
_FINISHED = f"state IN {sql_list(TERMINAL_STATES)} AND updated_at < ?"

Key = tuple[str, str, str]

_SAVE_READ = f"""SELECT t.version, t.history_count, t.event_count, p.rowid, p.config_id,
    CASE WHEN p.rowid IS NOT NULL THEN EXISTS ({PENDING_IN_QUEUE}) END
    FROM tasks t LEFT JOIN push_configs p ON p.tenant = ?1 AND p.owner = ?2 AND p.task_id = ?3
    WHERE t.tenant = ?1 AND t.owner = ?2 AND t.id = ?3"""
"""What a save reads first, in one statement: the task's counts, and a row per push config
of the task (its rowid, id, and whether notifications for it are pending; one row of NULLs
when it has none)."""


def _put_config(
    connection: sqlite3.Connection,
    scope: Scope,
    config: TaskPushNotificationConfig,
    protocol: Version,
) -> None:
    stored = config if config.tenant == scope[0] else rows.with_tenant(config, scope[0])
    body = rows.push_config_json(stored)
    connection.execute(
        """INSERT INTO push_configs (tenant, owner, task_id, config_id, body, protocol)
        VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, owner, task_id, config_id)
        DO UPDATE SET body = excluded.body, protocol = excluded.protocol""",
        (*scope, config.task_id, config.id, body, protocol.value),
    )


def _write_rows(connection: sqlite3.Connection, key: Key, changes: rows.Rows) -> None:
    connection.executemany(
        _UPSERT_HEADER, [(*key, h.artifact_id, h.position, h.header) for h in changes.headers]
    )
    for chunk in changes.chunks:
        if chunk.replace:
            connection.execute(
                f"DELETE FROM artifact_chunks WHERE {_CHILD} AND position = ?",
                (*key, chunk.position),
            )
        connection.execute(_INSERT_CHUNK, (*key, chunk.position, chunk.seq, chunk.parts))
    connection.executemany(_INSERT_MESSAGE, [(*key, *message) for message in changes.messages])


def _history(connection: sqlite3.Connection, key: Key, first: int) -> list[rows.JSON]:
    cursor = connection.execute(
        f"SELECT body FROM task_messages WHERE {_CHILD} AND position >= ? ORDER BY position",
        (*key, first),
    )
    return [rows.loads(body) for (body,) in cursor]


def _artifacts(connection: sqlite3.Connection, key: Key) -> list[Artifact]:
    found: dict[int, tuple[rows.JSON, list[rows.JSON]]] = {}
    for position, header, parts in connection.execute(_ARTIFACTS, key):
        entry = found.get(position)
        if entry is None:
            entry = found[position] = (rows.loads(header), [])
        entry[1].append(rows.loads(parts))
    return [rows.artifact(header, chunks) for header, chunks in found.values()]


def _filters(scope: Scope, request: ListTasksRequest) -> tuple[str, list[object]]:
    clauses = ["tenant = ?", "owner = ?"]
    params: list[object] = [*scope]
    if request.context_id:
        clauses.append("context_id = ?")
        params.append(request.context_id)
    if request.status is not None:
        clauses.append("state = ?")
        params.append(int(request.status))
    if request.status_timestamp_after is not None:
        clauses.append("sort_ts >= ?")
        params.append(rows.micros(request.status_timestamp_after))
    return " AND ".join(clauses), params


class SqliteTaskStore(DurableLifecycle):
    """Tasks in a SQLite file (see `sqlite_schema` for the tables)."""

    def __init__(
        self, database: SqliteDatabase, *, clock: Callable[[], datetime] = rows.utc_now
    ) -> None:
        super().__init__(database, clock=clock)
        self.database: SqliteDatabase = database
        self.recorded: Callable[[], None] = _nothing
        """Called after a write recorded notifications (the delivery worker's wake-up)."""

    # ----------------------------------------------------------------- tasks

    def shares_configs(self, push_store: object) -> bool:
        """Whether `create` may set configs of `push_store` (one of the same database)."""
        return getattr(push_store, "database", None) is self.database

    async def create(self, scope: Scope, task: Task, *, configs: InlineConfigs = ()) -> StoredTask:
        key = (*scope, task.id)
        now = rows.micros(self.clock())
        head = (
            task.context_id,
            int(task.status.state),
            rows.status_json(task.status),
            rows.sort_ts(task),
            rows.metadata_json(task.metadata),
            len(task.history),
            now,
            now,
            task.generation,
        )
        changes = rows.created(task)

        def work(connection: sqlite3.Connection) -> int:
            if connection.execute(_INSERT_TASK, (*key, *head)).rowcount == 0:
                raise StaleWriteError(f"task {task.id} already exists")
            _write_rows(connection, key, changes)
            for config, protocol in configs:
                _put_config(connection, scope, config, protocol)
            # A new task has no notifications yet, and only the configs given with it (a
            # config is set for an existing task), or, given none, those put before.
            if configs:
                queues = [(config_id, 0) for config_id in {c.id: 0 for c, _ in configs}]
            else:
                queues = [(config_id, 0) for (config_id,) in connection.execute(CONFIG_IDS, key)]
            return record(connection, key, queues, task, 1, None, now)

        if await self.database.write(work):
            self.recorded()
        return StoredTask(task=task, version=1)

    async def get(
        self, scope: Scope, task_id: str, *, history_length: int | None = None
    ) -> StoredTask | None:
        key = (*scope, task_id)
        shape = rows.Shape(history_length=history_length, include_artifacts=True)

        def work(connection: sqlite3.Connection) -> StoredTask | None:
            with transaction(connection, write=False):
                head = connection.execute(
                    "SELECT context_id, status, metadata, version, history_count, generation"
                    f" FROM tasks WHERE {_KEY}",
                    key,
                ).fetchone()
                if head is None:
                    return None
                context_id, status, metadata, version, history_count, generation = head
                history: list[rows.JSON] = []
                if history_length != 0:
                    history = _history(connection, key, rows.first_position(history_count, shape))
                artifacts = _artifacts(connection, key)
            task = rows.task(
                task_id,
                context_id,
                status_text=status,
                metadata_text=metadata,
                history=history,
                artifacts=artifacts,
                generation=generation,
            )
            return StoredTask(task=task, version=version)

        return await self.database.run(work)

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask:
        key = (*scope, task.id)
        head = (
            int(task.status.state),
            rows.status_json(task.status),
            rows.sort_ts(task),
            rows.metadata_json(task.metadata),
            len(task.history),
            len(events),
            rows.micros(self.clock()),
            task.generation,
        )

        def work(connection: sqlite3.Connection) -> int:
            read = connection.execute(_SAVE_READ, key).fetchall()
            if not read or read[0][0] != expected_version:
                raise StaleWriteError(f"task {task.id} is not at version {expected_version}")
            found = read[0]
            changes = rows.appended(task, events, found[1], found[2])
            connection.execute(_UPDATE_TASK, (*head, *key))
            _write_rows(connection, key, changes)
            if found[3] is None:  # no push config: nothing to record
                return 0
            queues = [each[4:] for each in sorted(read, key=itemgetter(3))]
            version = expected_version + 1
            return record(connection, key, queues, task, version, events, head[-2])

        if await self.database.write(work):
            self.recorded()
        return StoredTask(task=task, version=expected_version + 1)

    async def list(self, scope: Scope, request: ListTasksRequest, page_size: int) -> TaskPage:
        size = paging.check_page_size(page_size)
        shape = rows.shape_of(request)
        where, params = _filters(scope, request)
        after = ""
        page_params = list(params)
        if request.page_token:
            cursor = paging.decode_page_token(request.page_token)
            after = " AND (sort_ts, id) < (?, ?)"
            page_params += [rows.cursor_ts(cursor), cursor.task_id]
        query = f"""SELECT id, context_id, status, metadata, history_count, generation FROM tasks
            WHERE {where}{after} ORDER BY sort_ts DESC, id DESC LIMIT ?"""

        def work(connection: sqlite3.Connection) -> TaskPage:
            with transaction(connection, write=False):
                (total,) = connection.execute(
                    f"SELECT count(*) FROM tasks WHERE {where}", params
                ).fetchone()
                found = connection.execute(query, [*page_params, size + 1]).fetchall()
                tasks = tuple(self._listed(connection, scope, row, shape) for row in found[:size])
            token = (
                paging.encode_page_token(paging.cursor_of(tasks[-1])) if len(found) > size else ""
            )
            return TaskPage(tasks=tasks, next_page_token=token, total_size=total)

        return await self.database.run(work)

    @staticmethod
    def _listed(
        connection: sqlite3.Connection,
        scope: Scope,
        row: tuple[str, str, str, str | None, int, int],
        shape: rows.Shape,
    ) -> Task:
        task_id, context_id, status, metadata, history_count, generation = row
        key = (*scope, task_id)
        history: list[rows.JSON] = []
        if shape.history_length != 0:
            history = _history(connection, key, rows.first_position(history_count, shape))
        artifacts = _artifacts(connection, key) if shape.include_artifacts else []
        return rows.task(
            task_id,
            context_id,
            status_text=status,
            metadata_text=metadata,
            history=history,
            artifacts=artifacts,
            generation=generation,
        )

    # ----------------------------------------------------------------- restart, retention

    async def recover(self, now: datetime, *, namespace: str | None = None) -> int:
        active = await self.database.run(
            lambda connection: connection.execute(
                f"SELECT tenant, owner, id FROM tasks WHERE state IN {sql_list(ACTIVE_STATES)}"
            ).fetchall()
        )
        return await recovery.fail_interrupted(self, active, now, namespace)

    async def purge(self, older_than: datetime) -> int:
        cut = rows.micros(older_than)

        def batch(connection: sqlite3.Connection) -> int:
            with transaction(connection, write=True):
                keys = connection.execute(
                    f"SELECT tenant, owner, id FROM tasks WHERE {_FINISHED}"
                    " ORDER BY updated_at LIMIT ?",
                    (cut, PURGE_BATCH),
                ).fetchall()
                connection.executemany(f"DELETE FROM push_configs WHERE {_CHILD}", keys)
                connection.executemany(f"DELETE FROM push_outbox WHERE {_CHILD}", keys)
                connection.executemany(f"DELETE FROM tasks WHERE {_KEY}", keys)
            return len(keys)

        purged = 0
        while True:
            count = await self.database.run(batch)
            purged += count
            if count < PURGE_BATCH:
                return purged


def _nothing() -> None:
    pass


class SqlitePushConfigStore:
    """Push configs in the same SQLite file, scoped like tasks, and their outbox."""

    def __init__(self, database: SqliteDatabase) -> None:
        self.database = database
        self.outbox = SqliteOutbox(database)

    async def open(self) -> None:
        await self.database.open()

    async def close(self) -> None:
        await self.database.close()

    async def put(
        self, scope: Scope, config: TaskPushNotificationConfig, *, protocol: Version = Version.V1_0
    ) -> None:
        await self.database.run(lambda connection: _put_config(connection, scope, config, protocol))

    async def get(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        found = await self.database.run(
            lambda connection: connection.execute(
                f"SELECT body FROM push_configs WHERE {_CHILD} AND config_id = ?",
                (*scope, task_id, config_id),
            ).fetchone()
        )
        return None if found is None else rows.push_config(found[0])

    async def list(self, scope: Scope, task_id: str) -> tuple[TaskPushNotificationConfig, ...]:
        found = await self.database.run(
            lambda connection: connection.execute(
                f"SELECT body FROM push_configs WHERE {_CHILD} ORDER BY rowid",
                (*scope, task_id),
            ).fetchall()
        )
        return tuple(rows.push_config(body) for (body,) in found)

    async def delete(self, scope: Scope, task_id: str, config_id: str) -> None:
        """The config, and the notifications still waiting for it (none is sent after)."""
        key = (*scope, task_id, config_id)

        def work(connection: sqlite3.Connection) -> None:
            connection.execute(f"DELETE FROM push_configs WHERE {_CHILD} AND config_id = ?", key)
            connection.execute(
                f"DELETE FROM push_outbox WHERE {_CHILD} AND config_id = ? AND state = 0", key
            )

        await self.database.write(work)
