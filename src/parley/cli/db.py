"""`parley db status | upgrade | purge`: the task database's schema version, its
migrations run explicitly, and retention on demand (`--store URL`, default: what
`parley serve` uses)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from datetime import UTC, datetime
from typing import Any

from parley.cli.preflight import problem_line, store_problem
from parley.server.stores import (
    DEFAULT_STORE,
    SchemaError,
    SchemaStatus,
    Stores,
    describe,
    open_store,
)
from parley.server.stores.retention import parse_duration

STORE_ENV = "PARLEY_STORE"
"""The environment variable naming the store when `--store` is not given."""


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


def default_store() -> str:
    return os.environ.get(STORE_ENV) or DEFAULT_STORE


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default=default_store(),
        help="memory, sqlite:///path.db or postgresql://user@host:port/db "
        f"(default: ${STORE_ENV}, else {DEFAULT_STORE})",
    )


def add_db_command(commands: Any) -> None:
    db = commands.add_parser(
        "db",
        help="manage the task database",
        description="Inspect, migrate and purge the task database.",
    )
    actions = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    status = actions.add_parser(
        "status",
        help="show the schema version (exit status 1 unless up to date)",
        description="Show the database's schema version and the migrations pending.",
    )
    upgrade = actions.add_parser(
        "upgrade",
        help="apply pending migrations",
        description="Apply every pending schema migration (in one transaction).",
    )
    purge = actions.add_parser(
        "purge",
        help="delete old finished tasks",
        description="Delete terminal tasks (completed, failed, canceled, rejected) last "
        "updated longer ago than --older-than, with their history, artifacts and push "
        "configs, whichever agent they belong to.",
    )
    purge.add_argument(
        "--older-than",
        required=True,
        type=_duration,
        help="age, e.g. 30d, 12h, 90m, 2w",
    )
    for parser, run in ((status, _status), (upgrade, _upgrade), (purge, _purge)):
        add_store_argument(parser)
        parser.set_defaults(run=run)


def _duration(text: str) -> Any:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _stores(url: str) -> Stores:
    try:
        return open_store(url)
    except (ValueError, ImportError) as exc:
        raise SystemExit(f"parley db: {exc}") from None


def _status(arguments: argparse.Namespace) -> int:
    stores = _stores(arguments.store)
    status = _run(arguments, stores, stores.tasks.schema_status())
    where = describe(arguments.store)
    if status.latest == 0:
        _say(f"{where}: nothing is stored, there is no schema")
        return 0
    _say(
        f"{where}: schema version {status.current} (this Parley: {status.latest}), {_state(status)}"
    )
    return 0 if status.current == status.latest else 1


def _state(status: SchemaStatus) -> str:
    if status.too_new:
        return "newer than this Parley understands: upgrade parley-a2a"
    if status.pending:
        plural = "s" if status.pending > 1 else ""
        return f"{status.pending} migration{plural} pending: run `parley db upgrade`"
    return "up to date"


def _upgrade(arguments: argparse.Namespace) -> int:
    stores = _stores(arguments.store)
    before = _run(arguments, stores, stores.tasks.schema_status())
    try:
        after = _run(arguments, stores, stores.tasks.migrate())
    except SchemaError as exc:
        sys.stderr.write(f"parley db upgrade: {exc}\n")
        return 1
    where = describe(arguments.store)
    if after.current == before.current:
        _say(f"{where}: schema already at version {after.current}")
    else:
        _say(f"{where}: schema upgraded from version {before.current} to {after.current}")
    return 0


def _purge(arguments: argparse.Namespace) -> int:
    stores = _stores(arguments.store)
    cut = datetime.now(UTC) - arguments.older_than

    async def purge() -> int:
        await stores.tasks.open()
        return await stores.tasks.purge(cut)

    try:
        purged = _run(arguments, stores, purge())
    except SchemaError as exc:
        sys.stderr.write(f"parley db purge: {exc}\n")
        return 1
    _say(f"{describe(arguments.store)}: purged {purged} tasks finished before {cut.isoformat()}")
    return 0


def _run(arguments: argparse.Namespace, stores: Stores, work: Any) -> Any:
    """Run `work`, then close the stores; a store that cannot be reached or written is one
    line naming it, with a hint (`preflight.store_problem`), not a traceback."""
    try:
        return asyncio.run(_closing(stores, work))
    except Exception as exc:
        problem = store_problem(exc)
        if problem is None:
            raise
        line = problem_line(arguments.store, problem)
        raise SystemExit(f"parley db {arguments.db_command}: {line}") from None


async def _closing(stores: Stores, work: Any) -> Any:
    try:
        return await work
    finally:
        await stores.tasks.close()
