"""The PostgreSQL database behind the PostgreSQL stores: an asyncpg pool, optionally in its
own schema (`?schema=` in the store URL), and versioned migrations applied under an
advisory lock (several processes may start at once). The only module importing asyncpg.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeAlias

try:
    import asyncpg
except ImportError:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "PostgreSQL stores need the postgres extra: pip install 'parley-a2a[postgres]'"
    ) from None

from parley.protocol.errors import UnavailableError
from parley.server.stores import migrations
from parley.server.stores.base import SchemaStatus, StoreClosedError, StoreOptions
from parley.server.stores.postgres_schema import MIGRATIONS

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Connection: TypeAlias = PoolConnectionProxy[asyncpg.Record]
    """A pooled connection, as the stores use it."""

UniqueViolationError = asyncpg.UniqueViolationError

_MIGRATION_LOCK = 0x7061726C6579  # "parley": serializes concurrent migrations
ACQUIRE_TIMEOUT = 10.0
"""Seconds a request waits for a pooled connection (PostgreSQL slow or unreachable)."""
UNREACHABLE = (
    OSError,  # refused, reset, no route (TimeoutError too: connecting or acquiring)
    asyncpg.exceptions.ConnectionDoesNotExistError,  # lost mid-statement
    asyncpg.exceptions.PostgresConnectionError,  # SQLSTATE class 08
    asyncpg.exceptions.CannotConnectNowError,  # starting up, shutting down
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
)


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class PostgresDatabase:
    """One PostgreSQL database (and schema) and its connection pool."""

    def __init__(
        self,
        dsn: str,
        options: StoreOptions | None = None,
        *,
        where: str = "postgresql",
        schema: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
    ) -> None:
        self.dsn = dsn
        self.options = options if options is not None else StoreOptions()
        self.where = where
        self.schema = schema
        self.min_size = min_size
        self.max_size = max_size
        self._pool: asyncpg.Pool[asyncpg.Record] | None = None
        self._open = False
        self._opening = asyncio.Lock()

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
        pool, self._pool = self._pool, None
        self._open = False
        if pool is not None:
            await pool.close()

    @asynccontextmanager
    async def connection(self, *, write: bool = False) -> AsyncIterator[Connection]:
        """A pooled connection, inside a transaction when `write` (the store must be open).
        PostgreSQL unreachable (refused, reset, shutting down): UnavailableError, the
        transaction rolled back, nothing done."""
        if not self._open or self._pool is None:
            raise StoreClosedError(f"{self.where} is not open (AgentService.startup opens it)")
        try:
            async with self._pool.acquire(timeout=ACQUIRE_TIMEOUT) as connection:
                if write:
                    async with connection.transaction():
                        yield connection
                else:
                    yield connection
        except UNREACHABLE as exc:
            raise UnavailableError(
                "The task store is unreachable for now: try again shortly"
            ) from exc

    async def migrate(self) -> SchemaStatus:
        """Apply pending migrations in one transaction; SchemaError if the schema is newer."""
        pool = await self._connect()
        async with pool.acquire() as connection, connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            if self.schema:
                await connection.execute(
                    f"CREATE SCHEMA IF NOT EXISTS {quote_identifier(self.schema)}"
                )
            await connection.execute(
                "CREATE TABLE IF NOT EXISTS parley_schema"
                " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)"
            )
            status = await _status(connection)
            if status.too_new:
                raise migrations.too_new(self.where, status)
            for version in range(status.current + 1, status.latest + 1):
                await connection.execute(
                    "INSERT INTO parley_schema (version, applied_at) VALUES ($1, $2)",
                    version,
                    datetime.now(UTC),
                )
                for step in MIGRATIONS[version - 1]:
                    if isinstance(step, str):
                        await connection.execute(step)
                    else:
                        await step(connection)
        return SchemaStatus(current=max(status.current, status.latest), latest=status.latest)

    async def schema_status(self) -> SchemaStatus:
        pool = await self._connect()
        async with pool.acquire() as connection:
            return await _status(connection)

    async def _connect(self) -> asyncpg.Pool[asyncpg.Record]:
        if self._pool is None:
            # Generic plans: the statements are OLTP lookups by key, and the custom plans
            # PostgreSQL otherwise keeps choosing for the save (its outbox part) cost a
            # planning on every execution (0.4 ms, more than the save itself).
            settings = {"plan_cache_mode": "force_generic_plan"}
            if self.schema:
                settings["search_path"] = quote_identifier(self.schema)
            self._pool = await asyncpg.create_pool(
                self.dsn,
                min_size=self.min_size,
                max_size=self.max_size,
                server_settings=settings,
            )
        return self._pool


async def _status(connection: Connection) -> SchemaStatus:
    current = 0
    if await connection.fetchval("SELECT to_regclass('parley_schema') IS NOT NULL"):
        current = await connection.fetchval("SELECT coalesce(max(version), 0) FROM parley_schema")
    return SchemaStatus(current=int(current), latest=len(MIGRATIONS))
