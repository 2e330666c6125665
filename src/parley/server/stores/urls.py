"""Store URLs: `memory`, `sqlite:///relative/or//absolute/path.db`,
`postgresql://user@host:port/db` -> a task store and a push-config store sharing one
database. Query parameters tune the store; see `open_store`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from parley.server import stamps
from parley.server.stores.base import DurablePushConfigStore, DurableTaskStore, StoreOptions
from parley.server.stores.memory import InMemoryPushConfigStore, InMemoryTaskStore
from parley.server.stores.retention import parse_duration
from parley.server.stores.rows import utc_now

DEFAULT_STORE = "sqlite:///parley.db"
"""What `parley serve` uses when no `--store` is given."""

_COMMON = {"migrate", "recover", "retention", "purge_every"}
_SQLITE = {*_COMMON, "synchronous"}
_POSTGRES = {*_COMMON, "schema", "pool_min_size", "pool_max_size"}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class Stores(NamedTuple):
    """A task store and the push-config store in the same database."""

    tasks: DurableTaskStore
    push_configs: DurablePushConfigStore


def open_store(url: str, *, clock: Callable[[], datetime] | None = None) -> Stores:
    """The stores a URL names (not yet opened: `AgentService.startup` opens them). `clock`
    times what they keep (what a purge compares): by default the server's millisecond
    clock for the memory store (`stamps.utc_now`, cheaper to read), `datetime.now` in UTC
    for the durable ones (their rows keep microseconds).

    Query parameters: `migrate=false` (refuse a schema that is behind instead of
    migrating it on open), `recover=false` (leave SUBMITTED/WORKING tasks alone on start,
    e.g. when several replicas of one agent share one database: agents of different
    namespaces never recover each other's), `retention=30d` with `purge_every=1h` (purge
    terminal tasks that old while open, whichever agent's); SQLite: `synchronous=normal`
    (faster commits, not durable across a machine crash); PostgreSQL: `schema=name`,
    `pool_min_size`, `pool_max_size`, and anything asyncpg accepts (e.g. `sslmode`).
    ValueError for a URL that names no store; ImportError (naming the extra) when the
    backend's driver is missing.
    """
    spelled = url.strip()
    if spelled in ("memory", "memory://"):
        push = InMemoryPushConfigStore()
        memory = InMemoryTaskStore(
            push_configs=push, clock=clock if clock is not None else stamps.utc_now
        )
        return Stores(memory, push)
    scheme = spelled.partition(":")[0].lower()
    if scheme == "sqlite":
        return _sqlite(spelled, clock if clock is not None else utc_now)
    if scheme in ("postgresql", "postgres"):
        return _postgres(spelled, clock if clock is not None else utc_now)
    raise ValueError(
        f"unknown store {describe(url)!r}: use memory, sqlite:///path.db or "
        "postgresql://user@host:port/database"
    )


def describe(url: str) -> str:
    """The URL without its password (for messages and logs)."""
    parts = urlsplit(url.strip())
    if parts.password is None:
        return url.strip()
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _options(query: dict[str, str]) -> StoreOptions:
    every = query.pop("purge_every", None)
    retention = query.pop("retention", None)
    defaults = StoreOptions()
    return StoreOptions(
        migrate=_flag(query.pop("migrate", None), "migrate", default=True),
        recover=_flag(query.pop("recover", None), "recover", default=True),
        retention=None if retention is None else parse_duration(retention),
        purge_every=defaults.purge_every if every is None else parse_duration(every),
    )


def _flag(value: str | None, name: str, *, default: bool) -> bool:
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ValueError(f"store parameter {name} must be true or false, got {value!r}")


def _query(raw: str, known: set[str], *, strict: bool) -> dict[str, str]:
    query = dict(parse_qsl(raw, keep_blank_values=True, strict_parsing=False))
    unknown = sorted(set(query) - known)
    if strict and unknown:
        raise ValueError(
            f"unknown store parameter {unknown[0]!r} (known: {', '.join(sorted(known))})"
        )
    return query


def _sqlite(url: str, clock: Callable[[], datetime]) -> Stores:
    from parley.server.stores.sqlite import (  # noqa: PLC0415 - loaded only when used
        SqlitePushConfigStore,
        SqliteTaskStore,
    )
    from parley.server.stores.sqlite_db import SqliteDatabase  # noqa: PLC0415

    if not url.lower().startswith("sqlite:///"):
        raise ValueError(
            f"expected sqlite:///path.db (or sqlite:////absolute/path.db), got {url!r}"
        )
    location, _, raw = url[len("sqlite:///") :].partition("?")
    if not location:
        raise ValueError(f"{url!r} names no file: use sqlite:///path.db")
    query = _query(raw, _SQLITE, strict=True)
    synchronous = query.pop("synchronous", "full")
    database = SqliteDatabase(Path(location), _options(query), synchronous=synchronous)
    return Stores(SqliteTaskStore(database, clock=clock), SqlitePushConfigStore(database))


def _postgres(url: str, clock: Callable[[], datetime]) -> Stores:
    from parley.server.stores.postgres import (  # noqa: PLC0415 - an optional extra
        PostgresPushConfigStore,
        PostgresTaskStore,
    )
    from parley.server.stores.postgres_db import PostgresDatabase  # noqa: PLC0415

    parts = urlsplit(url)
    query = _query(parts.query, _POSTGRES, strict=False)
    schema = query.pop("schema", None) or None
    min_size = int(query.pop("pool_min_size", "1"))
    max_size = int(query.pop("pool_max_size", "10"))
    options = _options(query)
    dsn = urlunsplit(parts._replace(scheme="postgresql", query=urlencode(query)))
    database = PostgresDatabase(
        dsn,
        options,
        where=describe(url),
        schema=schema,
        min_size=min_size,
        max_size=max_size,
    )
    return Stores(PostgresTaskStore(database, clock=clock), PostgresPushConfigStore(database))
