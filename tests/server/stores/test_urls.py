"""Store URLs: which backend each names, the options in their query, and the errors for
what names no store (with passwords kept out of messages)."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from parley.server import stamps
from parley.server.stores import (
    InMemoryPushConfigStore,
    InMemoryTaskStore,
    StoreOptions,
    describe,
    open_store,
)
from parley.server.stores.postgres import PostgresPushConfigStore, PostgresTaskStore
from parley.server.stores.sqlite import SqlitePushConfigStore, SqliteTaskStore


@pytest.mark.parametrize("url", ["memory", "memory://", " memory "])
def test_memory(url: str) -> None:
    tasks, push = open_store(url)
    assert isinstance(tasks, InMemoryTaskStore)
    assert isinstance(push, InMemoryPushConfigStore)
    assert tasks.push_configs is push
    assert not tasks.options.recover  # nothing survives a restart: nothing to recover
    assert tasks.clock is stamps.utc_now  # the server's millisecond clock, unless given


def test_a_given_clock_times_every_store(tmp_path: Path) -> None:
    def clock() -> datetime:
        return datetime(2026, 1, 2, tzinfo=UTC)

    memory = open_store("memory", clock=clock).tasks
    sqlite = open_store(f"sqlite:///{tmp_path / 'a.db'}", clock=clock).tasks
    assert isinstance(memory, InMemoryTaskStore)
    assert isinstance(sqlite, SqliteTaskStore)
    assert memory.clock is clock
    assert sqlite.clock is clock


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///parley.db", Path("parley.db")),
        ("sqlite:///data/tasks.db", Path("data/tasks.db")),
        ("sqlite:////var/lib/parley/tasks.db", Path("/var/lib/parley/tasks.db")),
        ("SQLITE:///x.db?synchronous=normal", Path("x.db")),
    ],
)
def test_sqlite_paths(url: str, path: Path) -> None:
    tasks, push = open_store(url)
    assert isinstance(tasks, SqliteTaskStore)
    assert isinstance(push, SqlitePushConfigStore)
    assert tasks.database is push.database
    assert tasks.database.path == path
    assert tasks.options == StoreOptions()


def test_sqlite_options() -> None:
    tasks, _ = open_store(
        "sqlite:///x.db?migrate=false&recover=no&retention=30d&purge_every=2h&synchronous=NORMAL"
    )
    assert isinstance(tasks, SqliteTaskStore)
    assert tasks.options == StoreOptions(
        migrate=False,
        recover=False,
        retention=timedelta(days=30),
        purge_every=timedelta(hours=2),
    )
    assert tasks.database.synchronous == "NORMAL"


def test_postgres_options_and_driver_parameters() -> None:
    url = (
        "postgresql://app:s3cret@db.example:5433/parley?schema=agents&pool_min_size=2"
        "&pool_max_size=30&recover=false&sslmode=require&application_name=parley"
    )
    tasks, push = open_store(url)
    assert isinstance(tasks, PostgresTaskStore)
    assert isinstance(push, PostgresPushConfigStore)
    database = tasks.database
    assert database is push.database
    assert (database.schema, database.min_size, database.max_size) == ("agents", 2, 30)
    assert database.dsn == (
        "postgresql://app:s3cret@db.example:5433/parley?sslmode=require&application_name=parley"
    )
    assert "s3cret" not in database.where
    assert tasks.options == StoreOptions(recover=False)
    assert isinstance(open_store("postgres://localhost/db").tasks, PostgresTaskStore)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "unknown store"),
        ("redis://localhost", "unknown store"),
        ("sqlite://relative.db", "expected sqlite:///path.db"),
        ("sqlite:///", "names no file"),
        ("sqlite:///x.db?retention=forever", "invalid duration"),
        ("sqlite:///x.db?retention=0d", "must be positive"),
        ("sqlite:///x.db?migrate=maybe", "must be true or false"),
        ("sqlite:///x.db?cache=shared", "unknown store parameter 'cache'"),
        ("sqlite:///x.db?synchronous=off", "synchronous must be one of"),
        ("mysql://u:hunter2@h/db", "unknown store 'mysql://u:***@h/db'"),
    ],
)
def test_what_names_no_store_is_refused(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        open_store(url)
    assert "hunter2" not in str(caught.value)


def test_describe_hides_the_password() -> None:
    assert describe("postgresql://u:pw@h:5432/db?x=1") == "postgresql://u:***@h:5432/db?x=1"
    assert describe("postgresql://u@h/db") == "postgresql://u@h/db"
    assert describe("sqlite:///a.db") == "sqlite:///a.db"


def test_without_asyncpg_postgres_fails_with_one_line_naming_the_extra() -> None:
    """The driver is imported by the PostgreSQL backend only (here: made unimportable)."""
    code = (
        "import sys; sys.modules['asyncpg'] = None\n"
        "from parley.server.stores import open_store\n"
        "open_store('memory'); open_store('sqlite:///x.db')\n"
        "try:\n"
        "    open_store('postgresql://localhost/db')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout == (
        "PostgreSQL stores need the postgres extra: pip install 'parley-a2a[postgres]'\n"
    )
