"""The in-memory outbox (`InMemoryPushConfigStore.outbox`): the reference implementation of
`parley.server.push.outbox.Outbox`. Nothing survives the process.

A queue per (task, config) holds its pending notifications in order, so a claim looks at
each queue's head only. A write queues a notification as a plain tuple of what it tells of
(`Recorded`); it becomes a `Delivery`, encoded (`outbox.payload`), when it is first claimed or
listed: nothing is written anywhere, so a write pays no encoding, and an event's objects
are immutable. Dead notifications are kept apart, by id."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime

from msgspec.structs import replace

from parley.model import Task, TaskEvent, TaskPushNotificationConfig
from parley.protocol.negotiation import Version
from parley.server.push.outbox import DEAD, PENDING, Delivery, Scope
from parley.server.push.outbox import payload as outbox_payload
from parley.server.stores import rows

ConfigLookup = Callable[[Scope, str, str], tuple[TaskPushNotificationConfig, Version] | None]
"""A config and its protocol version, by (scope, task id, config id)."""
Queue = tuple[str, str, str, str]
"""(tenant, caller, task id, config id)."""
Recorded = tuple[int, str, Task | TaskEvent, datetime]
"""A notification as a write queues it: id, notification id, what it tells of, when."""
Entry = Delivery | Recorded


def _queue(row: Delivery) -> Queue:
    return (*row.scope, row.task_id, row.config_id)


def _id(entry: Entry) -> int:
    return entry.id if isinstance(entry, Delivery) else entry[0]


def _made(queue: Queue, entry: Entry) -> Delivery:
    """A queued notification as a `Delivery`, encoded."""
    if isinstance(entry, Delivery):
        return entry
    number, notification_id, told, when = entry
    at = rows.micros(when)
    payload = outbox_payload(told).encode()
    return Delivery(number, queue[:2], queue[2], queue[3], notification_id, payload, 0, at, at)


class InMemoryOutbox:
    def __init__(self, lookup: ConfigLookup, forget: Callable[[Scope, str, str], None]) -> None:
        self._lookup = lookup
        self._forget = forget
        self._queues: dict[Queue, deque[Entry]] = {}
        """Each queue's pending notifications, in order."""
        self._dead: dict[int, Delivery] = {}
        self._leases: dict[int, int] = {}
        self._next = 1

    def record(
        self,
        scope: Scope,
        task_id: str,
        config_ids: Collection[str],
        found: Sequence[tuple[str, Task | TaskEvent]],
        now: datetime,
    ) -> int:
        """Queue each notification for each config (the task store's part of a write)."""
        number = self._next
        for config_id in config_ids:
            key = (*scope, task_id, config_id)
            queue = self._queues.get(key)
            if queue is None:
                queue = self._queues[key] = deque()
            for notification_id, told in found:
                queue.append((number, notification_id, told, now))
                number += 1
        self._next = number
        return len(config_ids) * len(found)

    def _head(self, key: Queue, queue: deque[Entry]) -> Delivery:
        head = queue[0]
        if not isinstance(head, Delivery):
            head = queue[0] = _made(key, head)
        return head

    def _heads(self) -> list[Delivery]:
        return [self._head(key, queue) for key, queue in self._queues.items()]

    async def claim(self, now: int, lease_until: int, limit: int) -> list[Delivery]:
        claimed: list[Delivery] = []
        for row in sorted(self._heads(), key=lambda r: (r.due_at, r.id)):
            if len(claimed) >= limit:
                break
            if row.due_at > now or self._leases.get(row.id, 0) > now:
                continue
            found = self._lookup(row.scope, row.task_id, row.config_id)
            if found is None:
                self._drop(_queue(row))
                continue
            self._leases[row.id] = lease_until
            claimed.append(replace(row, config=found[0], protocol=found[1]))
        return claimed

    def _drop(self, key: Queue) -> deque[Entry]:
        """The queue taken away, with its leases."""
        queue = self._queues.pop(key, deque())
        for entry in queue:
            self._leases.pop(_id(entry), None)
        return queue

    def _settle(self, delivery: Delivery) -> Delivery | None:
        """Take the notification off its queue (and its lease); the row, if it was there."""
        self._leases.pop(delivery.id, None)
        key = _queue(delivery)
        queue = self._queues.get(key)
        if not queue or _id(queue[0]) != delivery.id:
            return None
        head = _made(key, queue.popleft())
        if not queue:
            del self._queues[key]
        return head

    async def delivered(self, delivery: Delivery) -> None:
        self._settle(delivery)

    async def retry(self, delivery: Delivery, due_at: int, error: str) -> None:
        self._leases.pop(delivery.id, None)
        key = _queue(delivery)
        queue = self._queues.get(key)
        if queue and _id(queue[0]) == delivery.id:
            row = self._head(key, queue)
            queue[0] = replace(row, attempts=row.attempts + 1, due_at=due_at, last_error=error)

    async def bury(self, delivery: Delivery, error: str) -> None:
        row = self._settle(delivery)
        if row is not None:
            self._bury(replace(row, attempts=row.attempts + 1), error)

    def _bury(self, row: Delivery, error: str) -> None:
        self._dead[row.id] = replace(row, state=DEAD, last_error=error)

    async def disable(self, delivery: Delivery, error: str) -> None:
        await self.bury(delivery, error)
        key = _queue(delivery)
        for entry in self._drop(key):
            self._bury(_made(key, entry), error)
        self._forget(delivery.scope, delivery.task_id, delivery.config_id)

    async def repair(self, now: int) -> int:
        return 0  # a claim here reads every queue's head: nothing is left behind

    async def next_due(self) -> int | None:
        due = [row.due_at for row in self._heads()]
        return min(due) if due else None

    async def inspect(self, *, state: int, limit: int) -> list[Delivery]:
        found: Iterable[Delivery] = self._dead.values()
        if state == PENDING:
            found = (_made(key, each) for key, queue in self._queues.items() for each in queue)
        return sorted(found, key=lambda row: row.id)[:limit]

    async def requeue(self, ids: Sequence[int] | None, now: int) -> int:
        chosen = [row for row in self._dead.values() if ids is None or row.id in ids]
        for row in sorted(chosen, key=lambda row: row.id):  # each back in its queue, in order
            del self._dead[row.id]
            key = _queue(row)
            queue = self._queues.setdefault(key, deque())
            queue.append(replace(row, state=PENDING, due_at=now))
            if len(queue) > 1 and _id(queue[-2]) > row.id:
                self._queues[key] = deque(sorted(queue, key=_id))
        return len(chosen)

    async def release(self, ids: Sequence[int], now: int) -> None:
        for each in ids:  # only pending heads hold leases here
            if self._leases.get(each, 0) > now:
                self._leases[each] = now

    def drop_task(self, key: tuple[str, str, str]) -> None:
        """Forget every notification of a purged task."""
        for queue in [queue for queue in self._queues if queue[:3] == key]:
            self._drop(queue)
        for row in [row for row in self._dead.values() if (*row.scope, row.task_id) == key]:
            del self._dead[row.id]
