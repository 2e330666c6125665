"""In-memory stores: the reference implementations (and what `--store memory` serves)."""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import replace

from parley.model import ListTasksRequest, Task, TaskEvent, TaskPushNotificationConfig
from parley.protocol import paging
from parley.server.stores.base import Scope, StaleWriteError, StoredTask, TaskPage


class InMemoryTaskStore:
    """Tasks in a dict keyed by (tenant, caller, task id)."""

    def __init__(self) -> None:
        self._tasks: dict[tuple[str, str, str], StoredTask] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, scope: Scope, task: Task) -> StoredTask:
        key = (*scope, task.id)
        if key in self._tasks:
            raise StaleWriteError(f"task {task.id} already exists")
        stored = StoredTask(task=task, version=1)
        self._tasks[key] = stored
        return stored

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        return self._tasks.get((*scope, task_id))

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask:
        key = (*scope, task.id)
        current = self._tasks.get(key)
        if current is None or current.version != expected_version:
            raise StaleWriteError(f"task {task.id} is not at version {expected_version}")
        stored = StoredTask(task=task, version=expected_version + 1)
        self._tasks[key] = stored
        return stored

    async def list(self, scope: Scope, request: ListTasksRequest, page_size: int) -> TaskPage:
        tenant, caller = scope
        matching = [
            stored.task
            for (t, c, _), stored in self._tasks.items()
            if t == tenant and c == caller and _matches(stored.task, request)
        ]
        ordered = paging.sort_tasks(matching)
        cursor = paging.decode_page_token(request.page_token) if request.page_token else None
        page, next_cursor = paging.page(ordered, cursor, page_size)
        token = paging.encode_page_token(next_cursor) if next_cursor else ""
        return TaskPage(tasks=tuple(page), next_page_token=token, total_size=len(matching))


def _matches(task: Task, request: ListTasksRequest) -> bool:
    if request.context_id and task.context_id != request.context_id:
        return False
    if request.status is not None and task.status.state is not request.status:
        return False
    after = request.status_timestamp_after
    if after is not None:
        stamp = task.status.timestamp
        if stamp is None or stamp < after:
            return False
    return True


class InMemoryPushConfigStore:
    """Push configs in a dict keyed by (tenant, caller, task id) then config id."""

    def __init__(self) -> None:
        self._configs: dict[tuple[str, str, str], dict[str, TaskPushNotificationConfig]] = {}

    async def put(self, scope: Scope, config: TaskPushNotificationConfig) -> None:
        stored = replace(config, tenant=scope[0])
        self._configs.setdefault((*scope, config.task_id), {})[config.id] = stored

    async def get(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        return self._configs.get((*scope, task_id), {}).get(config_id)

    async def list(self, scope: Scope, task_id: str) -> tuple[TaskPushNotificationConfig, ...]:
        return tuple(self._configs.get((*scope, task_id), {}).values())

    async def delete(self, scope: Scope, task_id: str, config_id: str) -> None:
        configs = self._configs.get((*scope, task_id))
        if configs is not None:
            configs.pop(config_id, None)
            if not configs:
                del self._configs[(*scope, task_id)]
