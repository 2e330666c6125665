"""Per-task, ordered fan-out of stream events to any number of subscribers.

Theory of operation: `publish` is called by the task runner, under the task's lock,
after the store committed the event; it never waits. Each subscriber has a bounded
buffer. A subscriber that falls `buffer_size` events behind is dropped (its stream
ends with an error telling it to resubscribe), so a slow client never stalls the agent
or the other subscribers. An event that ends the stream (terminal or interrupted
state) is delivered and then closes every subscription of that task.

The broker is behind a small protocol so a cross-replica implementation (Redis)
can replace it (DESIGN 7).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Protocol

from parley.model import StreamEvent
from parley.protocol.errors import InternalError

TaskKey = tuple[str, str, str]
"""(tenant, caller, task id)."""

_CLOSED = object()


class Subscription:
    """One subscriber's ordered view of a task's events (an async iterator)."""

    def __init__(self, broker: EventBroker, key: TaskKey, buffer_size: int) -> None:
        self._broker = broker
        self._key = key
        self._buffer: deque[object] = deque()
        self._limit = buffer_size
        self._ready = asyncio.Event()
        self._ended = False
        self.dropped = False

    def _offer(self, item: object) -> bool:
        """Queue an item; False (and the subscription ends) when the buffer is full."""
        if item is not _CLOSED and len(self._buffer) >= self._limit:
            self.dropped = True
            self._buffer.clear()
            self._buffer.append(_CLOSED)
            self._ready.set()
            return False
        self._buffer.append(item)
        self._ready.set()
        return True

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._ended:
            raise StopAsyncIteration
        while not self._buffer:
            self._ready.clear()
            await self._ready.wait()
        item = self._buffer.popleft()
        if item is _CLOSED:
            self._ended = True
            self.close()
            if self.dropped:
                raise InternalError(
                    "This stream fell too far behind and was closed: resubscribe to continue",
                    metadata={"taskId": self._key[2]},
                )
            raise StopAsyncIteration
        return item  # type: ignore[return-value]

    def close(self) -> None:
        """Unsubscribe (idempotent)."""
        self._broker._remove(self._key, self)


class EventBroker:
    """In-process fan-out (one replica)."""

    def __init__(self, buffer_size: int = 1024) -> None:
        self._subscribers: dict[TaskKey, list[Subscription]] = {}
        self.buffer_size = buffer_size

    def subscribe(self, key: TaskKey) -> Subscription:
        subscription = Subscription(self, key, self.buffer_size)
        self._subscribers.setdefault(key, []).append(subscription)
        return subscription

    def publish(self, key: TaskKey, event: StreamEvent, *, final: bool = False) -> None:
        """Deliver to every subscriber in order; `final` closes them after the event."""
        subscribers = self._subscribers.get(key)
        if not subscribers:
            return
        for subscription in list(subscribers):
            if not subscription._offer(event):
                self._remove(key, subscription)
            elif final:
                subscription._offer(_CLOSED)
        if final:
            self._subscribers.pop(key, None)

    def pressed(self, key: TaskKey) -> bool:
        """Whether a subscriber of the task has filled half its buffer (the producer
        should let the writers run)."""
        half = self.buffer_size // 2
        return any(len(s._buffer) > half for s in self._subscribers.get(key, ()))

    def subscriber_count(self, key: TaskKey | None = None) -> int:
        """Open subscriptions (of one task, or of all): for tests and metrics."""
        if key is not None:
            return len(self._subscribers.get(key, ()))
        return sum(len(subs) for subs in self._subscribers.values())

    def _remove(self, key: TaskKey, subscription: Subscription) -> None:
        subscribers = self._subscribers.get(key)
        if subscribers and subscription in subscribers:
            subscribers.remove(subscription)
            if not subscribers:
                del self._subscribers[key]


class Broker(Protocol):
    """What the runner needs of a broker."""

    def subscribe(self, key: TaskKey) -> Subscription: ...

    def publish(self, key: TaskKey, event: StreamEvent, *, final: bool = False) -> None: ...

    def pressed(self, key: TaskKey) -> bool: ...

    def subscriber_count(self, key: TaskKey | None = None) -> int: ...
