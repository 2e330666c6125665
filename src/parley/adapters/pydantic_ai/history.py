"""Where a pydantic-ai agent's message history is kept between A2A tasks, per conversation
(the A2A context, scoped by caller): the `History` protocol, in memory (`MemoryHistory`,
the default) or in a SQLite file (`SqliteHistory`, durable across restarts). Each run
appends its new messages as one batch, so two runs in one context never lose each other's
turns and a run's tool call and its result stay together.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Protocol

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter


class History(Protocol):
    """A conversation's messages, by key (`parley.adapters.conversation.conversation_key`)."""

    async def load(self, key: str) -> list[ModelMessage]:
        """Every message kept for `key`, oldest first ([] for a new conversation)."""
        ...

    async def append(self, key: str, messages: Sequence[ModelMessage]) -> None:
        """Add one run's new messages to `key`'s conversation."""
        ...


class MemoryHistory:
    """Histories in this process's memory: gone with it, and never trimmed (for tests and
    short-lived servers; `SqliteHistory` keeps them)."""

    def __init__(self) -> None:
        self._messages: dict[str, list[ModelMessage]] = {}

    async def load(self, key: str) -> list[ModelMessage]:
        return list(self._messages.get(key, ()))

    async def append(self, key: str, messages: Sequence[ModelMessage]) -> None:
        self._messages.setdefault(key, []).extend(messages)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS parley_pydantic_ai_history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    messages BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS parley_pydantic_ai_history_key
    ON parley_pydantic_ai_history (key, seq);
"""


class SqliteHistory:
    """Histories in a SQLite file, one row per run (pydantic-ai's own JSON form of its
    messages), read and written off the event loop."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with closing(self._connect()) as db, db:
            db.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    async def load(self, key: str) -> list[ModelMessage]:
        return await asyncio.to_thread(self._load, key)

    async def append(self, key: str, messages: Sequence[ModelMessage]) -> None:
        if messages:
            await asyncio.to_thread(self._append, key, list(messages))

    def _load(self, key: str) -> list[ModelMessage]:
        with closing(self._connect()) as db:
            rows = db.execute(
                "SELECT messages FROM parley_pydantic_ai_history WHERE key = ? ORDER BY seq",
                (key,),
            ).fetchall()
        loaded: list[ModelMessage] = []
        for (row,) in rows:
            loaded += ModelMessagesTypeAdapter.validate_json(row)
        return loaded

    def _append(self, key: str, messages: list[ModelMessage]) -> None:
        data = ModelMessagesTypeAdapter.dump_json(messages)
        with closing(self._connect()) as db, db:
            db.execute(
                "INSERT INTO parley_pydantic_ai_history (key, messages) VALUES (?, ?)",
                (key, data),
            )


__all__ = ["History", "MemoryHistory", "SqliteHistory"]
