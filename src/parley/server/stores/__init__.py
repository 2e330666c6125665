"""Task and push-config stores: the protocols and their backends."""

from parley.server.stores.base import (
    PushConfigStore,
    Scope,
    StaleWriteError,
    StoredTask,
    TaskPage,
    TaskStore,
)
from parley.server.stores.memory import InMemoryPushConfigStore, InMemoryTaskStore

__all__ = [
    "InMemoryPushConfigStore",
    "InMemoryTaskStore",
    "PushConfigStore",
    "Scope",
    "StaleWriteError",
    "StoredTask",
    "TaskPage",
    "TaskStore",
]
