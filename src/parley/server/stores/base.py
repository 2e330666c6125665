"""The store protocols. Every call is scoped by (tenant, caller) before any lookup
(DESIGN 8); updates carry the version they expect, and a stale write raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple, Protocol

import msgspec

from parley.model import ListTasksRequest, Task, TaskEvent, TaskPushNotificationConfig
from parley.protocol.negotiation import Version

Scope = tuple[str, str]
"""(tenant, caller id): the key prefix of everything a caller may see. `AgentService`
puts its agent's namespace before the tenant (`namespaces`), so agents sharing a store
have disjoint scopes; to a store, that is just another tenant."""


class TaskKey(NamedTuple):
    """One task's key: its scope (tenant, caller id) and its id. The broker, the runner
    and the bus key live tasks by it; a plain tuple of the same strings is equal to it."""

    tenant: str
    caller: str
    task_id: str

    @property
    def scope(self) -> Scope:
        """(tenant, caller). On a hot path `key[:2]` is the same without a call."""
        return (self.tenant, self.caller)


InlineConfigs = tuple[tuple[TaskPushNotificationConfig, Version], ...]
"""Push configs set with a task as it is created, each with the A2A version it came in."""


class StaleWriteError(Exception):
    """An update expected a version of the task that is no longer current."""


class StoredTask(msgspec.Struct, frozen=True, gc=False):
    """A task as stored, with its version (incremented by every committed update).
    Untracked by the garbage collector, like the model objects it holds."""

    task: Task
    version: int


class TaskPage(msgspec.Struct, frozen=True):
    """One page of a listing; `next_page_token` is empty on the last page."""

    tasks: tuple[Task, ...]
    next_page_token: str
    total_size: int


class TaskStore(Protocol):
    """Where tasks live. `save` receives both the folded task and the events that
    produced it, so a backend may append events rather than rewrite the task."""

    async def create(self, scope: Scope, task: Task, *, configs: InlineConfigs = ()) -> StoredTask:
        """Store a new task (StaleWriteError if it exists). `configs`: push configs of the
        task, set in the same transaction, so they hear its creation; given only by a
        service whose push-config store this store `shares_configs` with."""
        ...

    async def get(
        self, scope: Scope, task_id: str, *, history_length: int | None = None
    ) -> StoredTask | None:
        """The task, with only its `history_length` most recent messages when given
        (None: all; 0: none), read without loading the rest of its history."""
        ...

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask: ...

    async def list(self, scope: Scope, request: ListTasksRequest, page_size: int) -> TaskPage: ...


class PushConfigStore(Protocol):
    """Push-notification configs of tasks, scoped like tasks."""

    async def put(
        self, scope: Scope, config: TaskPushNotificationConfig, *, protocol: Version = Version.V1_0
    ) -> None:
        """Set (or replace) a config; `protocol` is the A2A version it was set in, the
        version of the notifications it gets."""
        ...

    async def get(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None: ...

    async def list(self, scope: Scope, task_id: str) -> tuple[TaskPushNotificationConfig, ...]: ...

    async def delete(self, scope: Scope, task_id: str, config_id: str) -> None: ...


# ----------------------------------------------------------------------------- durable stores


class SchemaError(Exception):
    """The database schema is not the one this Parley understands (newer, or not migrated)."""


class StoreClosedError(RuntimeError):
    """A durable store was used before `open()` (AgentService.startup opens it) or after
    `close()`."""


class SchemaStatus(msgspec.Struct, frozen=True):
    """Where a database's schema stands: its version and the latest this code knows."""

    current: int
    latest: int

    @property
    def pending(self) -> int:
        """Migrations `migrate()` would apply."""
        return max(self.latest - self.current, 0)

    @property
    def too_new(self) -> bool:
        """Written by a newer Parley: refused."""
        return self.current > self.latest


class StoreOptions(msgspec.Struct, frozen=True):
    """How a durable store behaves on `open()` (set from the store URL's query).

    `migrate`: apply pending migrations on open (else refuse a schema that is behind);
    `recover`: on start, fail the tasks a previous process of the same agent (namespace)
    left SUBMITTED or WORKING;
    `retention`: purge terminal tasks last updated longer ago than this, every
    `purge_every`, while open (None: never; `parley db purge` does it on demand).
    """

    migrate: bool = True
    recover: bool = True
    retention: timedelta | None = None
    purge_every: timedelta = timedelta(hours=1)


class DurableTaskStore(TaskStore, Protocol):
    """A task store with a lifecycle: open (connect, migrate), recover, purge, close.

    `recover(now, namespace=)` moves every SUBMITTED or WORKING task of that agent
    namespace (of every scope in it; None: of every namespace) to FAILED with a status
    message and returns how many; `purge(older_than)` deletes the terminal tasks last
    updated before `older_than`, in every namespace (retention is the database's), with
    their history, artifacts and push configs, and returns how many tasks went.
    """

    @property
    def options(self) -> StoreOptions: ...

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def migrate(self) -> SchemaStatus: ...

    async def schema_status(self) -> SchemaStatus: ...

    async def recover(self, now: datetime, *, namespace: str | None = None) -> int: ...

    async def purge(self, older_than: datetime) -> int: ...


class DurablePushConfigStore(PushConfigStore, Protocol):
    """A push-config store sharing its task store's database (open and close are shared)."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...
