"""The in-memory outbox (`InMemoryPushConfigStore.outbox`): the reference implementation of
`parley.server.push.outbox.Outbox`. Nothing survives the process.

A queue per (task, config) holds its pending notifications in order, so a claim looks at
each queue's head only. A notification keeps the task or event it tells of, and is encoded
(`rows.payload`) when first claimed or listed: nothing is written anywhere, so a write
pays no encoding, and an event's objects are immutable."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace

from parley.model import Task, TaskEvent, TaskPushNotificationConfig
from parley.protocol.negotiation import Version
from parley.server.push.outbox import DEAD, PENDING, Delivery, Scope
from parley.server.stores import rows

ConfigLookup = Callable[[Scope, str, str], tuple[TaskPushNotificationConfig, Version] | None]
"""A config and its protocol version, by (scope, task id, config id)."""
Queue = tuple[str, str, str, str]


def _queue(row: Delivery) -> Queue:
    return (*row.scope, row.task_id, row.config_id)


class InMemoryOutbox:
    def __init__(self, lookup: ConfigLookup, forget: Callable[[Scope, str, str], None]) -> None:
        self._lookup = lookup
        self._forget = forget
        self._rows: dict[int, Delivery] = {}  # insertion order is id order
        self._queues: dict[Queue, deque[int]] = {}
        """The ids of each queue's pending notifications, in order."""
        self._told: dict[int, Task | TaskEvent] = {}
        """What a notification not yet encoded tells of."""
        self._leases: dict[int, int] = {}
        self._next = 1

    def record(
        self,
        scope: Scope,
        task_id: str,
        config_ids: Sequence[str],
        found: Sequence[tuple[str, Task | TaskEvent]],
        now: int,
    ) -> int:
        """Queue each notification for each config (the task store's part of a write)."""
        for config_id in config_ids:
            queue = self._queues.setdefault((*scope, task_id, config_id), deque())
            for notification_id, told in found:
                number = self._next
                self._next += 1
                row = Delivery(number, scope, task_id, config_id, notification_id, b"", 0, now, now)
                self._rows[number] = row
                self._told[number] = told
                queue.append(number)
        return len(config_ids) * len(found)

    def _encoded(self, row: Delivery) -> Delivery:
        told = self._told.pop(row.id, None)
        if told is None:
            return row
        row = self._rows[row.id] = replace(row, payload=rows.payload(told).encode())
        return row

    async def claim(self, now: int, lease_until: int, limit: int) -> list[Delivery]:
        heads = [self._rows[ids[0]] for ids in self._queues.values()]
        claimed: list[Delivery] = []
        for row in sorted(heads, key=lambda r: (r.due_at, r.id)):
            if len(claimed) >= limit:
                break
            if row.due_at > now or self._leases.get(row.id, 0) > now:
                continue
            found = self._lookup(row.scope, row.task_id, row.config_id)
            if found is None:
                self._drop(_queue(row))
                continue
            self._leases[row.id] = lease_until
            claimed.append(replace(self._encoded(row), config=found[0], protocol=found[1]))
        return claimed

    def _drop(self, queue: Queue) -> None:
        for number in self._queues.pop(queue, ()):
            self._rows.pop(number, None)
            self._told.pop(number, None)
            self._leases.pop(number, None)

    def _settle(self, delivery: Delivery) -> Delivery | None:
        """Take the notification off its queue (and its lease); the row, if it is still
        there."""
        self._leases.pop(delivery.id, None)
        queue = _queue(delivery)
        ids = self._queues.get(queue)
        if ids and ids[0] == delivery.id:
            ids.popleft()
            if not ids:
                del self._queues[queue]
        return self._rows.get(delivery.id)

    async def delivered(self, delivery: Delivery) -> None:
        self._settle(delivery)
        self._rows.pop(delivery.id, None)
        self._told.pop(delivery.id, None)

    async def retry(self, delivery: Delivery, due_at: int, error: str) -> None:
        row = self._rows.get(delivery.id)
        if row is not None:
            self._rows[row.id] = replace(
                row, attempts=row.attempts + 1, due_at=due_at, last_error=error
            )
        self._leases.pop(delivery.id, None)

    async def bury(self, delivery: Delivery, error: str) -> None:
        row = self._settle(delivery)
        if row is not None:
            self._rows[row.id] = replace(
                self._encoded(row), attempts=row.attempts + 1, state=DEAD, last_error=error
            )

    async def disable(self, delivery: Delivery, error: str) -> None:
        await self.bury(delivery, error)
        for number in self._queues.pop(_queue(delivery), ()):
            self._rows[number] = replace(
                self._encoded(self._rows[number]), state=DEAD, last_error=error
            )
        self._forget(delivery.scope, delivery.task_id, delivery.config_id)

    async def repair(self, now: int) -> int:
        return 0  # a claim here reads every queue's head: nothing is left behind

    async def next_due(self) -> int | None:
        due = [self._rows[ids[0]].due_at for ids in self._queues.values()]
        return min(due) if due else None

    async def inspect(self, *, state: int, limit: int) -> list[Delivery]:
        found = [row for row in self._rows.values() if row.state == state][:limit]
        return [self._encoded(row) for row in found]

    async def requeue(self, ids: Sequence[int] | None, now: int) -> int:
        chosen = [
            row
            for row in self._rows.values()
            if row.state == DEAD and (ids is None or row.id in ids)
        ]
        for row in chosen:  # each back in its queue, in id order
            self._rows[row.id] = replace(row, state=PENDING, due_at=now)
            queue = self._queues.setdefault(_queue(row), deque())
            queue.append(row.id)
            if len(queue) > 1 and queue[-2] > row.id:
                self._queues[_queue(row)] = deque(sorted(queue))
        return len(chosen)

    def drop_task(self, key: tuple[str, str, str]) -> None:
        """Forget every notification of a purged task."""
        for row in list(self._rows.values()):
            if (*row.scope, row.task_id) == key:
                self._rows.pop(row.id)
                self._told.pop(row.id, None)
                self._leases.pop(row.id, None)
        for queue in [queue for queue in self._queues if queue[:3] == key]:
            del self._queues[queue]
