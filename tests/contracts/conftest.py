"""The store contract suite runs every test against each backend: memory, SQLite (a fresh
file) and PostgreSQL (a fresh schema on the real server, dropped afterwards). Without a
reachable PostgreSQL the PostgreSQL cases are skipped, except in CI (`CI` set), where
they fail."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contracts.support import POSTGRES_URL, create_schema, drop_schema, with_params

BACKENDS = ["memory", "sqlite", "postgres"]
DURABLE = ["sqlite", "postgres"]


def _postgres_unavailable() -> str:
    """Why PostgreSQL cannot be used, or "" when it can."""
    try:
        import asyncpg  # noqa: F401, PLC0415
    except ImportError:
        return "asyncpg is not installed (the postgres extra)"
    try:
        schema = asyncio.run(create_schema())
        asyncio.run(drop_schema(schema))
    except (OSError, TimeoutError) as exc:
        return f"PostgreSQL at {POSTGRES_URL} is unreachable: {exc}"
    return ""


_unavailable: list[str] = []


def require_postgres() -> None:
    if not _unavailable:
        _unavailable.append(_postgres_unavailable())
    reason = _unavailable[0]
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


def _url(backend: str, tmp_path: Path) -> Iterator[str]:
    if backend == "memory":
        yield "memory"
    elif backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'parley.db'}"
    else:
        require_postgres()
        schema = asyncio.run(create_schema())
        try:
            yield with_params(POSTGRES_URL, schema=schema, pool_max_size="20")
        finally:
            asyncio.run(drop_schema(schema))


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL naming fresh, empty stores of each backend."""
    yield from _url(request.param, tmp_path)


@pytest.fixture(params=DURABLE)
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL naming a fresh, empty database of each durable backend."""
    yield from _url(request.param, tmp_path)
