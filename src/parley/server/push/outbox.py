"""The outbox seam (DESIGN 10): notifications are recorded by the task store in the same
transaction as the task write that causes them, and the delivery worker takes them from
here. Each push-config store has one (`push_store.outbox`), over the same database.

A notification waits in the queue of its (task, config), in the order it was recorded;
`claim` gives only the head of each queue, when it is due and no worker holds it, and
holds it (a lease) until the worker reports: delivered (deleted), retry at a later time,
dead (kept for inspection, the queue moves on), or the config is gone (410: the config is
deleted and what waited for it is dead). A worker that stops cleanly gives back the leases
of what it was sending or holding (`release`); one that dies leaves its leases to expire, and
the heads are claimed again: delivery is at least once. Times are µs since the epoch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Protocol

import msgspec

from parley.model import Task, TaskEvent, TaskPushNotificationConfig
from parley.protocol.negotiation import Version
from parley.wire.v1_0.protojson_codec import CODEC

Scope = tuple[str, str]

PENDING = 0
DEAD = 1
BEHIND = 2**62
"""The `due_at` of a notification waiting behind the head of its queue: not due until the
head is settled, when the next becomes due at once. So only heads are due, and a claim
reads the due heads, not the whole backlog."""


TRACE_MARK = "\x1e"
"""Between a stored notification id and the W3C trace context recorded with it."""
trace_context: ContextVar[Callable[[], str] | None] = ContextVar("parley_push_trace", default=None)
"""What makes the trace context of the write being made (`traceparent`, then `tracestate`,
both in the W3C form, after TRACE_MARK each; "" when not sampled), set around a store call
by the observability wrapper; None, unset, when tracing is off. A notification recorded
meanwhile stores it after its id, so its delivery continues the trace of the request
that caused it. It is made only when a notification is recorded."""


def traced(notification_id: str) -> str:
    """The id a store records: `notification_id`, followed by the trace context if any."""
    context = trace_context.get()
    return notification_id if context is None else notification_id + context()


def payload(told: Task | TaskEvent) -> str:
    """A notification's body: the A2A 1.0 StreamResponse JSON of a task or event. A store
    records it as it will be sent (a message in flight), not in its own row format."""
    return msgspec.json.encode(CODEC.encode_event(told)).decode("utf-8")


class Delivery(msgspec.Struct, frozen=True):
    """One notification for one config: `payload` is the A2A 1.0 StreamResponse JSON of the
    event; `config` the config as stored now (None when listed for inspection)."""

    id: int
    scope: Scope
    task_id: str
    config_id: str
    notification_id: str
    payload: bytes
    attempts: int
    due_at: int
    created_at: int
    state: int = PENDING
    last_error: str | None = None
    config: TaskPushNotificationConfig | None = None
    protocol: Version = Version.V1_0

    @property
    def sent_id(self) -> str:
        """The notification id the receiver is sent (the stored id, without the trace
        context recorded after it)."""
        stored = self.notification_id
        return stored.rsplit(TRACE_MARK, 2)[0] if TRACE_MARK in stored else stored

    @property
    def trace_headers(self) -> dict[str, str]:
        """The W3C `traceparent` (and `tracestate`) recorded with the notification."""
        if TRACE_MARK not in self.notification_id:
            return {}
        _, parent, state = self.notification_id.rsplit(TRACE_MARK, 2)
        return {"traceparent": parent, "tracestate": state} if state else {"traceparent": parent}


class Outbox(Protocol):
    async def claim(self, now: int, lease_until: int, limit: int) -> list[Delivery]:
        """Up to `limit` due, unheld queue heads, held until `lease_until`; a head whose
        config was deleted is dropped with its queue."""
        ...

    async def delivered(self, delivery: Delivery) -> None: ...

    async def retry(self, delivery: Delivery, due_at: int, error: str) -> None:
        """Count the attempt (that failed with `error`) and try again at `due_at`."""
        ...

    async def bury(self, delivery: Delivery, error: str) -> None:
        """Count the attempt and keep it as dead; its queue moves on."""
        ...

    async def disable(self, delivery: Delivery, error: str) -> None:
        """The receiver said the config is gone (410): delete the config, bury its queue."""
        ...

    async def repair(self, now: int) -> int:
        """Make due the queues' heads left BEHIND (a head settled in a transaction that did
        not yet see the notification recorded behind it); how many. Run now and then."""
        ...

    async def next_due(self) -> int | None:
        """When the earliest pending notification is due (None: nothing pending)."""
        ...

    async def inspect(self, *, state: int, limit: int) -> list[Delivery]:
        """Pending or dead notifications, oldest first (for `parley push`)."""
        ...

    async def requeue(self, ids: Sequence[int] | None, now: int) -> int:
        """Make dead notifications (`ids`, or all of them) pending again, due now; how many."""
        ...

    async def release(self, ids: Sequence[int], now: int) -> None:
        """Give back the leases of the notifications `ids` (a worker stopping cleanly, its
        attempts cancelled): those still pending and held are claimable again at `now`,
        their attempts not counted and their last error kept; others are untouched."""
        ...
