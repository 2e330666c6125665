"""The SQLite database behind the SQLite stores: one connection in WAL mode, driven from one
dedicated thread (the event loop never blocks on the file), with transactions and
versioned migrations.

`synchronous=FULL` by default: WAL then syncs at every commit, so an acknowledged write
survives power loss and OS crashes, not only a crash of the process (DESIGN: acknowledged
means durable). `?synchronous=normal` trades that for speed (a crash of the machine may
lose the last commits; the database stays consistent).

Group commit: `write` queues a write; the writes queued while the thread was busy run
together in one transaction, each in a savepoint of its own (a failing one is rolled back
alone), and one commit — one sync — makes them all durable before any is acknowledged.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from parley.server.push.outbox import trace_context
from parley.server.stores import migrations
from parley.server.stores.base import SchemaStatus, StoreClosedError, StoreOptions
from parley.server.stores.sqlite_schema import MIGRATIONS

T = TypeVar("T")

SYNCHRONOUS = ("full", "normal")
BUSY_TIMEOUT = 10.0
"""Seconds a write waits for another process's lock (e.g. `parley db purge` while serving)."""


@contextmanager
def transaction(connection: sqlite3.Connection, *, write: bool) -> Iterator[sqlite3.Connection]:
    """One transaction: BEGIN IMMEDIATE for writes (the write lock up front, so a stale
    read cannot happen inside), a plain BEGIN (a consistent snapshot) for reads."""
    connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield connection
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


class SqliteDatabase:
    """One SQLite file, its connection and its thread. `open` connects and migrates (or
    checks the schema); every operation is a function run on the thread."""

    def __init__(
        self, path: Path, options: StoreOptions | None = None, *, synchronous: str = "full"
    ) -> None:
        if synchronous.lower() not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}")
        self.path = path
        self.options = options if options is not None else StoreOptions()
        self.synchronous = synchronous.upper()
        self._executor: ThreadPoolExecutor | None = None
        self._connection: sqlite3.Connection | None = None
        self._open = False
        self._opening = asyncio.Lock()
        self._queued: list[tuple[Callable[[sqlite3.Connection], Any], asyncio.Future[Any]]] = []
        self._committer: asyncio.Task[None] | None = None

    @property
    def where(self) -> str:
        return f"sqlite:///{self.path}"

    async def open(self) -> None:
        """Connect; migrate (or refuse a schema that is behind); refuse a newer one."""
        async with self._opening:  # two stores share the database: open it once
            if self._open:
                return
            await self._connect()
            try:
                migrate = self.options.migrate
                status = await self.migrate() if migrate else await self.schema_status()
                migrations.check(self.where, status)
            except BaseException:
                await self.close()
                raise
            self._open = True

    async def close(self) -> None:
        executor, connection = self._executor, self._connection
        self._executor = self._connection = None
        self._open = False
        if executor is None or connection is None:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(executor, connection.close)
        finally:
            executor.shutdown(wait=False)

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work(connection)` on the database thread (the store must be open)."""
        if not self._open:
            raise StoreClosedError(f"{self.where} is not open (AgentService.startup opens it)")
        return await self._call(work)

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work(connection)` inside a write transaction shared with the other writes
        queued meanwhile (group commit); return once that transaction is committed.
        `work` must not begin or end transactions itself."""
        if not self._open:
            raise StoreClosedError(f"{self.where} is not open (AgentService.startup opens it)")
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        if trace_context.get() is not None:  # the notifications it records carry it
            work = _in_context(contextvars.copy_context(), work)
        self._queued.append((work, done))
        if self._committer is None:
            self._committer = asyncio.get_running_loop().create_task(self._commit_queued())
        return await done

    async def _commit_queued(self) -> None:
        """Commit the queued writes, group after group, until none is left."""
        try:
            while self._queued:
                group, self._queued = self._queued, []
                try:
                    outcomes = await self._call(functools.partial(_run_group, group))
                except asyncio.CancelledError:
                    for _, done in group:
                        done.cancel()
                    raise
                except Exception as exc:  # the commit failed (or the store closed)
                    outcomes = [exc] * len(group)
                for (_, done), outcome in zip(group, outcomes, strict=True):
                    if done.done():
                        continue
                    if isinstance(outcome, Exception):
                        done.set_exception(outcome)
                    else:
                        done.set_result(outcome)
        finally:
            self._committer = None

    async def migrate(self) -> SchemaStatus:
        """Apply pending migrations in one transaction; SchemaError if the schema is newer."""
        await self._connect()
        return await self._call(self._migrate)

    async def schema_status(self) -> SchemaStatus:
        await self._connect()
        return await self._call(_status)

    async def _call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        executor, connection = self._executor, self._connection
        if executor is None or connection is None:
            raise StoreClosedError(f"{self.where} is closed")
        return await asyncio.get_running_loop().run_in_executor(executor, work, connection)

    async def _connect(self) -> None:
        if self._executor is not None:
            return
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parley-sqlite")
        try:
            connection = await asyncio.get_running_loop().run_in_executor(executor, self._dial)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        self._executor, self._connection = executor, connection

    def _dial(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            (mode,) = _journal_mode_wal(connection)
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"{self.where}: cannot use WAL (got {mode})")
            connection.execute(f"PRAGMA synchronous={self.synchronous}")
            connection.execute("PRAGMA foreign_keys=ON")
        except BaseException:
            connection.close()
            raise
        return connection

    def _migrate(self, connection: sqlite3.Connection) -> SchemaStatus:
        with transaction(connection, write=True):
            connection.execute(
                "CREATE TABLE IF NOT EXISTS parley_schema"
                " (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            status = _status(connection)
            if status.too_new:
                raise migrations.too_new(self.where, status)
            for version in range(status.current + 1, status.latest + 1):
                connection.execute(
                    "INSERT INTO parley_schema (version, applied_at) VALUES (?, ?)",
                    (version, datetime.now(UTC).isoformat()),
                )
                for step in MIGRATIONS[version - 1]:
                    if isinstance(step, str):
                        connection.execute(step)
                    else:
                        step(connection)
        return SchemaStatus(current=max(status.current, status.latest), latest=status.latest)


def _journal_mode_wal(connection: sqlite3.Connection) -> tuple[str]:
    """`PRAGMA journal_mode=WAL`, waiting for another connection switching it meanwhile:
    the switch answers "database is locked" at once, not after the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        try:
            found: tuple[str] = connection.execute("PRAGMA journal_mode=WAL").fetchone()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
        else:
            return found


def _run_group(
    group: list[tuple[Callable[[sqlite3.Connection], Any], asyncio.Future[Any]]],
    connection: sqlite3.Connection,
) -> list[Any]:
    """On the database thread: every write of `group` in its own savepoint, one commit.
    Returns each write's result, or the exception it raised (its savepoint rolled back)."""
    outcomes: list[Any] = []
    with transaction(connection, write=True):
        for work, _ in group:
            connection.execute("SAVEPOINT write")
            try:
                outcomes.append(work(connection))
            except Exception as exc:  # handed to that write's caller
                connection.execute("ROLLBACK TO write")
                outcomes.append(exc)
            connection.execute("RELEASE write")
    return outcomes


def _status(connection: sqlite3.Connection) -> SchemaStatus:
    found = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'parley_schema'"
    ).fetchone()
    current = 0
    if found is not None:
        (current,) = connection.execute(
            "SELECT coalesce(max(version), 0) FROM parley_schema"
        ).fetchone()
    return SchemaStatus(current=int(current), latest=len(MIGRATIONS))


def _in_context(
    context: contextvars.Context, work: Callable[[sqlite3.Connection], T]
) -> Callable[[sqlite3.Connection], T]:
    """`work`, run in `context` (on the database thread, which has its own)."""
    return lambda connection: context.run(work, connection)
