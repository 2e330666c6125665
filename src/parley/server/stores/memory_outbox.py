"""The in-memory outbox (`InMemoryPushConfigStore.outbox`): the reference implementation of
`parley.server.push.outbox.Outbox`. Nothing survives the process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from parley.model import TaskPushNotificationConfig
from parley.protocol.negotiation import Version
from parley.server.push.outbox import DEAD, PENDING, Delivery, Scope

ConfigLookup = Callable[[Scope, str, str], tuple[TaskPushNotificationConfig, Version] | None]
"""A config and its protocol version, by (scope, task id, config id)."""
Queue = tuple[str, str, str, str]


class InMemoryOutbox:
    def __init__(self, lookup: ConfigLookup, forget: Callable[[Scope, str, str], None]) -> None:
        self._lookup = lookup
        self._forget = forget
        self._rows: dict[int, Delivery] = {}  # insertion order is id order
        self._leases: dict[int, int] = {}
        self._next = 1

    def record(
        self,
        scope: Scope,
        task_id: str,
        config_ids: Sequence[str],
        found: list[tuple[str, str]],
        now: int,
    ) -> int:
        """Queue each notification for each config (the task store's part of a write)."""
        for config_id in config_ids:
            for notification_id, payload in found:
                self._rows[self._next] = Delivery(
                    self._next,
                    scope,
                    task_id,
                    config_id,
                    notification_id,
                    payload.encode(),
                    0,
                    now,
                    now,
                )
                self._next += 1
        return len(config_ids) * len(found)

    async def claim(self, now: int, lease_until: int, limit: int) -> list[Delivery]:
        heads: dict[Queue, Delivery] = {}
        for row in self._rows.values():
            if row.state == PENDING:
                heads.setdefault((*row.scope, row.task_id, row.config_id), row)
        claimed: list[Delivery] = []
        for row in sorted(heads.values(), key=lambda r: (r.due_at, r.id)):
            if len(claimed) >= limit:
                break
            if row.due_at > now or self._leases.get(row.id, 0) > now:
                continue
            found = self._lookup(row.scope, row.task_id, row.config_id)
            if found is None:
                self._drop(row)
                continue
            self._leases[row.id] = lease_until
            claimed.append(replace(row, config=found[0], protocol=found[1]))
        return claimed

    def _drop(self, head: Delivery) -> None:
        for row in list(self._rows.values()):
            if _same_queue(row, head) and row.state == PENDING:
                del self._rows[row.id]

    async def delivered(self, delivery: Delivery) -> None:
        self._rows.pop(delivery.id, None)
        self._leases.pop(delivery.id, None)

    async def retry(self, delivery: Delivery, due_at: int, error: str) -> None:
        row = self._rows.get(delivery.id)
        if row is not None:
            self._rows[row.id] = replace(
                row, attempts=row.attempts + 1, due_at=due_at, last_error=error
            )
        self._leases.pop(delivery.id, None)

    async def bury(self, delivery: Delivery, error: str) -> None:
        row = self._rows.get(delivery.id)
        if row is not None:
            self._rows[row.id] = replace(
                row, attempts=row.attempts + 1, state=DEAD, last_error=error
            )
        self._leases.pop(delivery.id, None)

    async def disable(self, delivery: Delivery, error: str) -> None:
        await self.bury(delivery, error)
        for row in list(self._rows.values()):
            if _same_queue(row, delivery) and row.state == PENDING:
                self._rows[row.id] = replace(row, state=DEAD, last_error=error)
        self._forget(delivery.scope, delivery.task_id, delivery.config_id)

    async def repair(self, now: int) -> int:
        return 0  # a claim here reads every row: nothing is left behind

    async def next_due(self) -> int | None:
        due = [row.due_at for row in self._rows.values() if row.state == PENDING]
        return min(due) if due else None

    async def inspect(self, *, state: int, limit: int) -> list[Delivery]:
        return [row for row in self._rows.values() if row.state == state][:limit]

    async def requeue(self, ids: Sequence[int] | None, now: int) -> int:
        chosen = [
            row
            for row in self._rows.values()
            if row.state == DEAD and (ids is None or row.id in ids)
        ]
        for row in chosen:
            self._rows[row.id] = replace(row, state=PENDING, due_at=now)
        return len(chosen)

    def drop_task(self, key: tuple[str, str, str]) -> None:
        """Forget every notification of a purged task."""
        for row in list(self._rows.values()):
            if (*row.scope, row.task_id) == key:
                del self._rows[row.id]


def _same_queue(row: Delivery, other: Delivery) -> bool:
    return (row.scope, row.task_id, row.config_id) == (other.scope, other.task_id, other.config_id)
