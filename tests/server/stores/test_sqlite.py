"""SQLite specifics: WAL and the chosen `synchronous`, foreign keys on, every statement
run on the one dedicated thread (never the event loop's), and a database directory that
does not exist yet is created."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from parley.server.stores import open_store
from parley.server.stores.sqlite import SqliteTaskStore
from tests.contracts.support import run


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
