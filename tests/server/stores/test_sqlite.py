"""SQLite specifics: WAL and the chosen `synchronous`, foreign keys on, every statement
run on the one dedicated thread (never the event loop's), and a database directory that
does not exist yet is created."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from parley.server.stores import StaleWriteError, open_store
from parley.server.stores.sqlite import SqliteTaskStore
from tests.contracts.support import ALICE, make_task, run


def pragmas(connection: sqlite3.Connection) -> tuple[str, int, int, str]:
    (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
    (synchronous,) = connection.execute("PRAGMA synchronous").fetchone()
    (foreign_keys,) = connection.execute("PRAGMA foreign_keys").fetchone()
    return mode, synchronous, foreign_keys, threading.current_thread().name


@pytest.mark.parametrize(("query", "level"), [("", 2), ("?synchronous=normal", 1)])
def test_wal_synchronous_and_one_thread(tmp_path: Path, query: str, level: int) -> None:
    url = f"sqlite:///{tmp_path / 'new' / 'dir' / 'parley.db'}{query}"

    async def main() -> None:
        tasks, _ = open_store(url)
        assert isinstance(tasks, SqliteTaskStore)
        await tasks.open()
        try:
            mode, synchronous, foreign_keys, thread = await tasks.database.run(pragmas)
            assert (mode, synchronous, foreign_keys) == ("wal", level, 1)
            assert thread.startswith("parley-sqlite")
            assert thread != threading.current_thread().name
        finally:
            await tasks.close()

    run(main())
    assert (tmp_path / "new" / "dir" / "parley.db").exists()


def test_concurrent_writes_share_one_commit(tmp_path: Path) -> None:
    """Group commit: writes queued together commit together (one sync), each in its own
    savepoint — the one that fails is rolled back alone and told, the others are stored."""

    async def main() -> None:
        stores = open_store(f"sqlite:///{tmp_path / 'group.db'}")
        store = stores.tasks
        assert isinstance(store, SqliteTaskStore)
        await store.open()
        try:
            statements: list[str] = []
            await store.database.run(lambda c: c.set_trace_callback(statements.append))
            await store.create(ALICE, make_task("t0"))
            creates = [store.create(ALICE, make_task(f"t{i}")) for i in range(50)]
            results = await asyncio.gather(*creates, return_exceptions=True)
            await store.database.run(lambda c: c.set_trace_callback(None))
        finally:
            await store.close()
        assert isinstance(results[0], StaleWriteError)  # t0 exists: refused alone
        assert not any(isinstance(r, BaseException) for r in results[1:])
        assert statements.count("COMMIT") <= 3  # the first write, then the queued ones
        assert statements.count("ROLLBACK TO write") == 1
        with sqlite3.connect(tmp_path / "group.db") as connection:
            (count,) = connection.execute("SELECT count(*) FROM tasks").fetchone()
        connection.close()
        assert count == 50

    run(main())
