"""The store protocols. Every call is scoped by (tenant, caller) before any lookup
(DESIGN 8); updates carry the version they expect, and a stale write raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from parley.model import ListTasksRequest, Task, TaskEvent, TaskPushNotificationConfig

Scope = tuple[str, str]
"""(tenant, caller id): the key prefix of everything a caller may see."""


class StaleWriteError(Exception):
    """An update expected a version of the task that is no longer current."""


@dataclass(frozen=True, slots=True)
class StoredTask:
    """A task as stored, with its version (incremented by every committed update)."""

    task: Task
    version: int


@dataclass(frozen=True, slots=True)
class TaskPage:
    """One page of a listing; `next_page_token` is empty on the last page."""

    tasks: tuple[Task, ...]
    next_page_token: str
    total_size: int


class TaskStore(Protocol):
    """Where tasks live. `save` receives both the folded task and the events that
    produced it, so a backend may append events rather than rewrite the task."""

    async def create(self, scope: Scope, task: Task) -> StoredTask: ...

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None: ...

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask: ...

    async def list(self, scope: Scope, request: ListTasksRequest, page_size: int) -> TaskPage: ...


class PushConfigStore(Protocol):
    """Push-notification configs of tasks, scoped like tasks."""

    async def put(self, scope: Scope, config: TaskPushNotificationConfig) -> None: ...

    async def get(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None: ...

    async def list(self, scope: Scope, task_id: str) -> tuple[TaskPushNotificationConfig, ...]: ...

    async def delete(self, scope: Scope, task_id: str, config_id: str) -> None: ...
