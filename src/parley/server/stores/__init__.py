"""Task and push-config stores: the protocols and their backends (memory, SQLite,
PostgreSQL), opened from a URL with `open_store`."""

from parley.server.stores.base import (
    DurablePushConfigStore,
    DurableTaskStore,
    PushConfigStore,
    SchemaError,
    SchemaStatus,
    Scope,
    StaleWriteError,
    StoreClosedError,
    StoredTask,
    StoreOptions,
    TaskPage,
    TaskStore,
)
from parley.server.stores.memory import InMemoryPushConfigStore, InMemoryTaskStore
from parley.server.stores.recovery import RESTART_MESSAGE
from parley.server.stores.urls import DEFAULT_STORE, Stores, describe, open_store

__all__ = [
    "DEFAULT_STORE",
    "RESTART_MESSAGE",
    "DurablePushConfigStore",
    "DurableTaskStore",
    "InMemoryPushConfigStore",
    "InMemoryTaskStore",
    "PushConfigStore",
    "SchemaError",
    "SchemaStatus",
    "Scope",
    "StaleWriteError",
    "StoreClosedError",
    "StoreOptions",
    "StoredTask",
    "Stores",
    "TaskPage",
    "TaskStore",
    "describe",
    "open_store",
]
