"""Migration 5 of both durable backends: every row of model objects rewritten from format
0 (A2A 1.0 wire JSON, what schemas 1 to 4 held) to the stores' own format 1 (`row_format`),
eagerly, in the migration's transaction, so a store only ever reads its own format.

Format 0 is frozen here as it was written (camelCase names, enum names, everything else
as format 1 has it); nothing here follows a wire codec, so the rewrite stays what it is.
A value already in format 1 is left as it is (the rewrite may run twice over a row).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from parley.model import TaskState
from parley.server.stores.row_format import FORMAT, JSON, Obj, dumps, loads

_PART = {"mediaType": "media_type"}
_MESSAGE = {
    "messageId": "message_id",
    "contextId": "context_id",
    "taskId": "task_id",
    "referenceTaskIds": "reference_task_ids",
}
_ARTIFACT = {"artifactId": "artifact_id"}
_CONFIG = {"taskId": "task_id"}
_ROLES = {"ROLE_USER": 1, "ROLE_AGENT": 2}
_STATES = {f"TASK_STATE_{state.name}": int(state) for state in TaskState}


def _renamed(d: Obj, names: dict[str, str]) -> Obj:
    return {names.get(key, key): value for key, value in d.items()}


def parts(value: list[Obj]) -> list[Obj]:
    return [_renamed(part, _PART) for part in value]


def message(d: Obj) -> Obj:
    out = _renamed(d, _MESSAGE)
    out["role"] = _ROLES.get(out["role"], out["role"])
    out["parts"] = parts(out["parts"])
    return out


def status(d: Obj) -> Obj:
    out = dict(d)
    out["state"] = _STATES.get(out["state"], out["state"])
    if out.get("message") is not None:
        out["message"] = message(out["message"])
    return out


def header(d: Obj) -> Obj:
    return _renamed(d, _ARTIFACT)


def push_config(d: Obj) -> Obj:
    return _renamed(d, _CONFIG)


COLUMNS: tuple[tuple[str, str, Callable[[Any], JSON]], ...] = (
    ("tasks", "status", status),
    ("task_messages", "body", message),
    ("artifacts", "header", header),
    ("artifact_chunks", "parts", parts),
    ("push_configs", "body", push_config),
)
"""Every column holding model objects, and how a value of it is rewritten. `metadata`
(free JSON) and `push_outbox.payload` (a notification's body, sent as it is) stay."""

RECORD = f"UPDATE parley_schema SET row_format = {FORMAT} WHERE version = 5"  # noqa: S608
"""The format the rows are in, kept with the migration that rewrote them."""


def _rewrite(convert: Callable[[Any], JSON]) -> Callable[[str], str]:
    return lambda text: dumps(convert(loads(text)))


def upgrade_sqlite(connection: sqlite3.Connection) -> None:
    """Rewrite every row in place: one UPDATE per column, through a SQL function."""
    for table, column, convert in COLUMNS:
        connection.create_function("parley_rewrite", 1, _rewrite(convert), deterministic=True)
        connection.execute(f"UPDATE {table} SET {column} = parley_rewrite({column})")  # noqa: S608
    connection.create_function("parley_rewrite", 1, None)


BATCH = 1000
"""Rows rewritten per round trip on PostgreSQL."""


async def upgrade_postgres(connection: Any) -> None:
    """Rewrite every row in place, reading each table once through a cursor (it sees the
    table as it was when opened, not the rows rewritten meanwhile)."""
    for table, column, convert in COLUMNS:
        rewrite = _rewrite(convert)
        update = f"UPDATE {table} SET {column} = $2::json WHERE ctid = $1"  # noqa: S608
        cursor = await connection.cursor(f"SELECT ctid, {column}::text FROM {table}")  # noqa: S608
        while batch := await cursor.fetch(BATCH):
            await connection.executemany(update, [(row[0], rewrite(row[1])) for row in batch])
