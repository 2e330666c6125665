"""The restart policy: a task a previous process left SUBMITTED or WORKING has no agent
running it any more, so on start it is failed with a status message saying why, folded
and saved like any other event (its previous status message goes to history). Only the
starting agent's tasks: another agent sharing the store may be running its own.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime

from parley.protocol import folding, lifecycle
from parley.server.stores import namespaces
from parley.server.stores.base import Scope, StaleWriteError, TaskStore

RESTART_MESSAGE = "The server restarted while this task was running"
"""The text of the status message of a task failed by recovery."""

_ATTEMPTS = 5


async def fail_interrupted(
    store: TaskStore,
    keys: Iterable[tuple[str, str, str]],
    now: datetime,
    namespace: str | None = None,
) -> int:
    """Fail each (tenant, caller, task id) of `namespace` (None: of any) that is still
    active; return how many were."""
    failed = 0
    for tenant, caller, task_id in keys:
        if namespace is not None and not namespaces.owns(namespace, tenant):
            continue
        if await _fail((tenant, caller), task_id, store, now):
            failed += 1
    return failed


async def _fail(scope: Scope, task_id: str, store: TaskStore, now: datetime) -> bool:
    for _ in range(_ATTEMPTS):  # a concurrent writer (another process) may move first
        stored = await store.get(scope, task_id)
        if stored is None or stored.task.status.state not in lifecycle.ACTIVE:
            return False
        task = stored.task
        event = folding.failure(task, RESTART_MESSAGE, str(uuid.uuid4()), now)
        try:
            await store.save(scope, folding.apply_event(task, event), (event,), stored.version)
        except StaleWriteError:
            continue
        return True
    raise StaleWriteError(f"task {task_id} kept changing while it was being recovered")
