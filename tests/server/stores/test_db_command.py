"""`parley db status | upgrade | purge` and `parley serve --store`, in process, against
real databases: a fresh one is reported behind, upgraded once, purged of old finished
tasks; a newer schema is refused with a clear message."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.cli.main import build_parser, main
from parley.cli.serve import make_app
from parley.model import TaskState
from parley.server.agent import Agent
from parley.server.stores import DEFAULT_STORE
from parley.server.stores.sqlite import SqliteTaskStore
from parley.server.stores.sqlite_schema import MIGRATIONS
from tests.contracts.support import ALICE, Clock, execute_raw, make_task, opened, run


def test_status_upgrade_and_purge(durable_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "status", "--store", durable_url]) == 1
    latest = len(MIGRATIONS)
    pending = f"schema version 0 (this Parley: {latest}), {latest} migrations pending"
    assert pending in capsys.readouterr().out
    assert main(["db", "upgrade", "--store", durable_url]) == 0
    assert f"schema upgraded from version 0 to {latest}" in capsys.readouterr().out
    assert main(["db", "upgrade", "--store", durable_url]) == 0
    assert f"schema already at version {latest}" in capsys.readouterr().out
    assert main(["db", "status", "--store", durable_url]) == 0
    assert f"schema version {latest} (this Parley: {latest}), up to date" in capsys.readouterr().out

    async def seed() -> None:
        async with opened(durable_url, Clock()) as (store, _):  # updated in 2025
            await store.create(ALICE, make_task("old", state=TaskState.COMPLETED))
            await store.create(ALICE, make_task("running"))
        async with opened(durable_url) as (store, _):  # updated now
            await store.create(ALICE, make_task("new", state=TaskState.COMPLETED))

    run(seed())
    assert main(["db", "purge", "--older-than", "30d", "--store", durable_url]) == 0
    assert ": purged 1 tasks finished before " in capsys.readouterr().out

    async def remaining() -> list[str]:
        async with opened(durable_url) as (store, _):
            return [t for t in ("old", "running", "new") if await store.get(ALICE, t)]

    assert run(remaining()) == ["running", "new"]


def test_a_newer_schema_is_reported_and_refused(
    durable_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "upgrade", "--store", durable_url]) == 0
    run(
        execute_raw(
            durable_url,
            "INSERT INTO parley_schema (version, applied_at) VALUES (7, CURRENT_TIMESTAMP)",
        )
    )
    capsys.readouterr()
    assert main(["db", "status", "--store", durable_url]) == 1
    assert (
        f"schema version 7 (this Parley: {len(MIGRATIONS)}), newer than this Parley"
        in capsys.readouterr().out
    )
    assert main(["db", "upgrade", "--store", durable_url]) == 1
    assert "newer than this Parley understands" in capsys.readouterr().err
    assert main(["db", "purge", "--older-than", "1d", "--store", durable_url]) == 1
    assert "newer than this Parley understands" in capsys.readouterr().err


def test_memory_and_bad_stores(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "status", "--store", "memory"]) == 0
    assert "nothing is stored" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="parley db: unknown store 'nope'"):
        main(["db", "status", "--store", "nope"])
    with pytest.raises(SystemExit):
        main(["db", "purge", "--older-than", "soon", "--store", "memory"])
    assert "invalid duration" in capsys.readouterr().err


def test_the_store_defaults_to_the_environment_then_sqlite(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PARLEY_STORE", raising=False)
    assert build_parser().parse_args(["db", "status"]).store == DEFAULT_STORE
    assert DEFAULT_STORE == "sqlite:///parley.db"
    monkeypatch.setenv("PARLEY_STORE", "memory")
    assert build_parser().parse_args(["db", "status"]).store == "memory"
    assert build_parser().parse_args(["serve", "m:a"]).store is None  # resolved when run


def test_serve_gives_an_agent_the_named_store(tmp_path: Path) -> None:
    agent = Agent("Stored")
    app = make_app(agent, "http://t", "hybrid", store=f"sqlite:///{tmp_path / 'p.db'}")
    assert isinstance(app.settings.handler.store, SqliteTaskStore)
    assert app.settings.handler.push_store.database is app.settings.handler.store.database
    with pytest.raises(SystemExit, match="parley serve: --store: unknown store"):
        make_app(agent, "http://t", "hybrid", store="oracle://x")
