"""Helpers of the store contract suite: store URLs for each backend (a fresh SQLite file,
a fresh PostgreSQL schema dropped afterwards), opening stores, building tasks and events."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from msgspec.structs import replace

from parley.model import (
    Artifact,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import folding
from parley.server.stores import Scope, StoredTask, Stores, TaskStore, open_store

T = TypeVar("T")

T0 = datetime(2025, 3, 15, 18, 30, tzinfo=UTC)
ALICE: Scope = ("", "alice")
BOB: Scope = ("", "bob")
ALICE_ELSEWHERE: Scope = ("tenant-2", "alice")

POSTGRES_URL = os.environ.get("PARLEY_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
"""The PostgreSQL server the suite runs against (each test in a schema of its own)."""

TIMEOUT = 60.0


def run(coro: Coroutine[Any, Any, T], timeout: float = TIMEOUT) -> T:
    """Run `coro` in a fresh event loop, failing with TimeoutError after `timeout` s."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


@dataclass
class Clock:
    """A clock the test moves by hand (the stores' `updated_at`, for purges)."""

    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


def with_params(url: str, **params: str) -> str:
    """`url` with more query parameters."""
    extra = "&".join(f"{key}={value}" for key, value in params.items())
    if not extra:
        return url
    return f"{url}{'&' if '?' in url else '?'}{extra}"


@asynccontextmanager
async def opened(url: str, clock: Clock | None = None) -> AsyncIterator[Stores]:
    """The stores of `url`, open for the duration (closed even if the test fails)."""
    stores = open_store(url, clock=clock) if clock is not None else open_store(url)
    await stores.tasks.open()
    await stores.push_configs.open()
    try:
        yield stores
    finally:
        await stores.push_configs.close()
        await stores.tasks.close()


async def create_schema() -> str:
    import asyncpg  # noqa: PLC0415 - the postgres extra

    schema = f"parley_test_{uuid.uuid4().hex[:12]}"
    connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
    try:
        await connection.execute(f'CREATE SCHEMA "{schema}"')
    finally:
        await connection.close()
    return schema


async def drop_schema(schema: str) -> None:
    import asyncpg  # noqa: PLC0415

    connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


# ----------------------------------------------------------------------------- tasks


def text_message(message_id: str, text: str = "", role: Role = Role.AGENT) -> Message:
    return Message(message_id=message_id, role=role, parts=(TextPart(text=text or message_id),))


def texts(artifact: Artifact) -> list[str]:
    """The texts of an artifact's text parts."""
    return [part.text for part in artifact.parts if isinstance(part, TextPart)]


def make_task(
    task_id: str,
    *,
    context_id: str = "c",
    state: TaskState = TaskState.WORKING,
    minute: int | None = 0,
) -> Task:
    stamp = None if minute is None else T0 + timedelta(minutes=minute)
    first = text_message(f"m-{task_id}", task_id, Role.USER)
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=stamp),
        history=(replace(first, task_id=task_id, context_id=context_id),),
    )


def status_event(
    task: Task, state: TaskState, *, note: str = "", minute: int = 60, **metadata: Any
) -> TaskStatusUpdateEvent:
    message = None
    if note:
        message = replace(text_message(note), task_id=task.id, context_id=task.context_id)
    return TaskStatusUpdateEvent(
        task_id=task.id,
        context_id=task.context_id,
        status=TaskStatus(state=state, message=message, timestamp=T0 + timedelta(minutes=minute)),
        metadata=metadata or None,
    )


def artifact_event(
    task: Task, artifact_id: str, *texts: str, append: bool = False, name: str = ""
) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task.id,
        context_id=task.context_id,
        artifact=Artifact(
            artifact_id=artifact_id,
            parts=tuple(TextPart(text=text) for text in texts),
            name=name,
        ),
        append=append,
    )


async def apply(
    store: TaskStore, scope: Scope, stored: StoredTask, *events: TaskEvent
) -> StoredTask:
    """Fold `events` into the stored task and save them (one save per event)."""
    for event in events:
        task = folding.apply_event(stored.task, event)
        stored = await store.save(scope, task, (event,), stored.version)
    return stored


async def move(store: TaskStore, scope: Scope, task_id: str, state: TaskState, minute: int) -> Task:
    """Load a task, give it a new status at `minute`, save it; the new task."""
    stored = await store.get(scope, task_id)
    assert stored is not None
    stored = await apply(store, scope, stored, status_event(stored.task, state, minute=minute))
    return stored.task


async def execute_raw(url: str, statement: str) -> None:
    """Run one SQL statement on the database behind a durable store URL, bypassing Parley."""
    if url.startswith("sqlite:///"):
        import sqlite3  # noqa: PLC0415

        connection = sqlite3.connect(url[len("sqlite:///") :].partition("?")[0])
        try:
            with connection:
                connection.execute(statement)
        finally:
            connection.close()
        return
    import asyncpg  # noqa: PLC0415

    base, _, query = url.partition("?")
    schema = dict(pair.split("=", 1) for pair in query.split("&") if pair)["schema"]
    raw = await asyncpg.connect(base, server_settings={"search_path": schema})
    try:
        await raw.execute(statement)
    finally:
        await raw.close()
