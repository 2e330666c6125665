"""What `AgentService.startup` / `shutdown` do with its stores: open them (connect,
migrate), apply the restart policy, and close them. Stores without a lifecycle (any
object with just the protocol's methods) are left alone.
"""

from __future__ import annotations

import logging
from datetime import datetime

from parley.server.stores.base import PushConfigStore, TaskStore

log = logging.getLogger("parley.server.stores")


async def start(
    store: TaskStore,
    push_store: PushConfigStore,
    now: datetime,
    namespace: str | None = None,
    *,
    recover: bool = True,
) -> int:
    """Open both stores, then fail the tasks of agent `namespace` (None: of every agent) a
    previous process left running, unless the store's options or `recover` say not to
    (replicas with leases recover a dead one's tasks instead); return how many were
    failed."""
    for each in _distinct(store, push_store):
        open_ = getattr(each, "open", None)
        if open_ is not None:
            await open_()
    options = getattr(store, "options", None)
    recovery = getattr(store, "recover", None)
    if not recover or recovery is None or options is None or not options.recover:
        return 0
    failed: int = await recovery(now, namespace=namespace)
    if failed:
        log.warning("failed %d tasks left running by the previous process", failed)
    return failed


async def stop(store: TaskStore, push_store: PushConfigStore) -> None:
    """Close both stores (the push-config store first: they may share a database)."""
    for each in reversed(_distinct(store, push_store)):
        close = getattr(each, "close", None)
        if close is not None:
            await close()


def _distinct(*stores: object) -> list[object]:
    return list({id(each): each for each in stores}.values())
