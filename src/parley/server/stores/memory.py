"""In-memory stores: the reference implementations (and what `--store memory` serves).
Nothing survives the process, so there is no schema, and nothing to recover on start."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime

from msgspec.structs import replace

from parley.model import ListTasksRequest, Task, TaskEvent, TaskPushNotificationConfig
from parley.protocol import history, lifecycle, paging
from parley.protocol.negotiation import Version
from parley.server.stamps import utc_now
from parley.server.stores import recovery, rows
from parley.server.stores.base import (
    InlineConfigs,
    SchemaStatus,
    Scope,
    StaleWriteError,
    StoredTask,
    StoreOptions,
    TaskPage,
)
from parley.server.stores.memory_outbox import InMemoryOutbox
from parley.server.stores.memory_packed import PackedTask, packed

_TERMINAL = lifecycle.TERMINAL


class InMemoryTaskStore:
    """Tasks in a dict per scope (tenant, caller), keyed by task id: the key is the task's
    own id string, so a stored task costs no key of its own. A finished task is kept
    packed (`memory_packed`: about half the memory; a read unpacks it), with when it was
    created or saved finished (what a purge, of finished tasks only, compares).
    `push_configs`, when given, loses the configs of the tasks a purge deletes."""

    def __init__(
        self,
        *,
        push_configs: InMemoryPushConfigStore | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._tasks: dict[Scope, dict[str, StoredTask | PackedTask]] = {}
        self.push_configs = push_configs
        self.clock = clock
        self.options = StoreOptions(recover=False)
        self.recorded: Callable[[], None] = _nothing
        """Called after a write recorded notifications (the delivery worker's wake-up)."""

    def __len__(self) -> int:
        return sum(map(len, self._tasks.values()))

    def shares_configs(self, push_store: object) -> bool:
        """Whether `create` may set configs of `push_store` (its own linked store)."""
        return push_store is not None and push_store is self.push_configs

    async def create(self, scope: Scope, task: Task, *, configs: InlineConfigs = ()) -> StoredTask:
        tasks = self._tasks.get(scope)
        if tasks is None:
            tasks = self._tasks[scope] = {}
        elif task.id in tasks:
            raise StaleWriteError(f"task {task.id} already exists")
        push = self.push_configs
        if configs:
            assert push is not None
            for config, protocol in configs:
                push.set(scope, config, protocol)
        stored = StoredTask(task, 1)
        if task.status.state in _TERMINAL:  # packed, and timed: what `purge` reads
            tasks[task.id] = packed(task, 1, self.clock())
        else:  # an active task: no clock read (its time matters once it ends)
            tasks[task.id] = stored
        if push is not None and push._configs:  # (no call if no config is set)
            self._notify(scope, task, 1, None)
        return stored

    async def get(
        self, scope: Scope, task_id: str, *, history_length: int | None = None
    ) -> StoredTask | None:
        tasks = self._tasks.get(scope)
        found = tasks.get(task_id) if tasks is not None else None
        if found is None:
            return None
        stored = found.unpacked() if isinstance(found, PackedTask) else found
        if history_length is None:
            return stored
        return StoredTask(
            task=history.trim_history(stored.task, history_length), version=stored.version
        )

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask:
        tasks = self._tasks.get(scope)
        current = tasks.get(task.id) if tasks is not None else None
        if tasks is None or current is None or current.version != expected_version:
            raise StaleWriteError(f"task {task.id} is not at version {expected_version}")
        version = expected_version + 1
        stored = StoredTask(task, version)
        if task.status.state in _TERMINAL:  # packed, and timed: what `purge` reads
            tasks[task.id] = packed(task, version, self.clock())
        else:  # a running task's (hot) save: no clock read
            tasks[task.id] = stored
        if (push := self.push_configs) is not None and push._configs:  # (no call if none)
            self._notify(scope, task, version, events)
        return stored

    def _notify(
        self,
        scope: Scope,
        task: Task,
        version: int,
        events: Sequence[TaskEvent] | None,
    ) -> None:
        configs = self.push_configs
        assert configs is not None
        ids = configs.config_ids(scope, task.id)
        if not ids:
            return
        found = rows.notified(task, version, events)  # encoded when claimed
        if configs.outbox.record(scope, task.id, ids, found, self.clock()):
            self.recorded()

    async def list(self, scope: Scope, request: ListTasksRequest, page_size: int) -> TaskPage:
        tasks = self._tasks.get(scope, {})
        matching = [  # a packed task's head (enough to match and order it)
            stored.task for stored in tasks.values() if _matches(stored.task, request)
        ]
        ordered = paging.sort_tasks(matching)
        cursor = paging.decode_page_token(request.page_token) if request.page_token else None
        page, next_cursor = paging.page(ordered, cursor, page_size)
        token = paging.encode_page_token(next_cursor) if next_cursor else ""
        shaped = tuple(_shaped(_whole(tasks[task.id]), request) for task in page)
        return TaskPage(tasks=shaped, next_page_token=token, total_size=len(matching))

    # ----------------------------------------------------------------- lifecycle

    async def open(self) -> None:
        """Nothing to open."""

    async def close(self) -> None:
        """Nothing to close (the tasks stay until the store is dropped)."""

    async def migrate(self) -> SchemaStatus:
        return SchemaStatus(current=0, latest=0)

    async def schema_status(self) -> SchemaStatus:
        return SchemaStatus(current=0, latest=0)

    async def recover(self, now: datetime, *, namespace: str | None = None) -> int:
        active = [
            (*scope, task_id)
            for scope, tasks in self._tasks.items()
            for task_id, stored in tasks.items()
            if stored.task.status.state in lifecycle.ACTIVE
        ]
        return await recovery.fail_interrupted(self, active, now, namespace)

    async def purge(self, older_than: datetime) -> int:
        gone = [  # every finished task is packed, with its time
            (scope, task_id)
            for scope, tasks in self._tasks.items()
            for task_id, stored in tasks.items()
            if isinstance(stored, PackedTask) and stored.finished < older_than
        ]
        for scope, task_id in gone:
            del self._tasks[scope][task_id]
            if self.push_configs is not None:
                self.push_configs.drop_task((*scope, task_id))
        for scope in {scope for scope, _ in gone}:
            if not self._tasks[scope]:
                del self._tasks[scope]
        return len(gone)


def _nothing() -> None:
    pass


def _whole(stored: StoredTask | PackedTask) -> Task:
    return stored.unpacked().task if isinstance(stored, PackedTask) else stored.task


def _shaped(task: Task, request: ListTasksRequest) -> Task:
    """A listed task as the durable stores load it: history trimmed, artifacts if asked."""
    task = history.trim_history(task, request.history_length)
    return task if request.include_artifacts else history.without_artifacts(task)


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
        """Also read by the linked task store: empty, a task write records nothing (the
        one check it pays when no config is set)."""
        self._protocols: dict[tuple[str, str, str, str], Version] = {}
        self.outbox = InMemoryOutbox(self._lookup, self._forget)

    async def put(
        self, scope: Scope, config: TaskPushNotificationConfig, *, protocol: Version = Version.V1_0
    ) -> None:
        self.set(scope, config, protocol)

    def set(self, scope: Scope, config: TaskPushNotificationConfig, protocol: Version) -> None:
        """`put`, at once (the linked task store's `create` sets its configs so)."""
        stored = replace(config, tenant=scope[0])
        self._configs.setdefault((*scope, config.task_id), {})[config.id] = stored
        self._protocols[(*scope, config.task_id, config.id)] = protocol

    def config_ids(self, scope: Scope, task_id: str) -> Collection[str]:
        """The ids of a task's configs (what a task write records notifications for; a
        view, read at once)."""
        configs = self._configs.get((*scope, task_id))
        return configs.keys() if configs else ()

    def _lookup(
        self, scope: Scope, task_id: str, config_id: str
    ) -> tuple[TaskPushNotificationConfig, Version] | None:
        config = self._configs.get((*scope, task_id), {}).get(config_id)
        if config is None:
            return None
        return config, self._protocols.get((*scope, task_id, config_id), Version.V1_0)

    def _forget(self, scope: Scope, task_id: str, config_id: str) -> None:
        configs = self._configs.get((*scope, task_id))
        if configs is not None:
            configs.pop(config_id, None)
            if not configs:
                del self._configs[(*scope, task_id)]
        self._protocols.pop((*scope, task_id, config_id), None)

    async def get(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        return self._configs.get((*scope, task_id), {}).get(config_id)

    async def list(self, scope: Scope, task_id: str) -> tuple[TaskPushNotificationConfig, ...]:
        return tuple(self._configs.get((*scope, task_id), {}).values())

    async def open(self) -> None:
        """Nothing to open."""

    async def close(self) -> None:
        """Nothing to close."""

    def drop_task(self, key: tuple[str, str, str]) -> None:
        """Forget every config and notification of a task (its task was purged)."""
        for config_id in self._configs.pop(key, {}):
            self._protocols.pop((*key, config_id), None)
        self.outbox.drop_task(key)

    async def delete(self, scope: Scope, task_id: str, config_id: str) -> None:
        self._forget(scope, task_id, config_id)
