"""Per-task, ordered fan-out of stream events to any number of subscribers, each event
with its sequence number; the replay window a resumed subscription reads (DESIGN 5).

Theory of operation: `publish` is called by the task runner, under the task's lock,
after the store committed the event; it never waits. Each subscriber has a bounded
buffer. A subscriber that falls `buffer_size` events behind is dropped (its stream
ends with an error telling it to resubscribe), so a slow client never stalls the agent
or the other subscribers. An event that ends the stream (terminal or interrupted
state) is delivered and then closes every subscription of that task.

Sequence numbers are the task's generations (`Task.generation`): every published
event has its own, one above the last, across restarts too for the durable stores. A
subscription may start with `head` entries (a snapshot, or events replayed from a
`ReplayWindow`); the runner builds it in the same synchronous stretch as it reads the
window, under the task's lock, so the head and the live events that follow have no gap
and no overlap.

The broker is behind a protocol (`Broker`) so a cross-replica one (`RedisBus`) can
replace it (DESIGN 7): `publish` is awaited (done at once here), a subscription may start
after a cursor (`subscribe(after=...)`, when `replayable` vouches for what follows it)
and drops an event not numbered above the last it took, so none is seen twice. It also
carries what replicas need of each other, which in process does nothing: stops
(`request_stop`, `stops`), leases (`claim`, `released`), a dead replica's tasks
(`recover`), follow-ups to where their task waits (`waiting`, `hand_off`, `takes`).
"""

from __future__ import annotations

from asyncio import Future, get_running_loop
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from typing import Protocol

from parley.model import SendMessageRequest, StreamEvent, Task
from parley.protocol.errors import A2AError, InternalError
from parley.server.context import CallContext
from parley.server.signals import DONE
from parley.server.stores.base import TaskKey

Entry = tuple[int | None, StreamEvent]
"""An event and its sequence number (None for a direct Message, which has no task)."""

Turn = tuple[int, Task]
"""A follow-up taken (`Broker.hand_off`): the task's sequence number (generation) and
snapshot once the message is recorded."""
Takes = Callable[[TaskKey, SendMessageRequest, CallContext], Awaitable[Turn]]

_KEPT = 8
"""Taken entries a subscription's buffer may keep until it starts over."""


class Subscription:
    """One subscriber's ordered view of a task's events (an async iterator); `sequence`
    is the sequence number of the event it returned last."""

    __slots__ = (
        "_broker",
        "_buffer",
        "_ended",
        "_key",
        "_last",
        "_limit",
        "_taken",
        "_waiter",
        "dropped",
        "failure",
        "sequence",
    )

    def __init__(
        self,
        broker: EventBroker,
        key: TaskKey,
        buffer_size: int,
        head: Iterable[Entry] = (),
        after: int | None = None,
    ) -> None:
        self._broker = broker
        self._key = key
        self._buffer: list[Entry | None] = list(head)  # None: the end
        self._taken = 0
        """How many of `_buffer`'s items were returned: not shifted out one by one, but
        emptied once all are and they are `_KEPT` or more (an idle stream holds a short
        list, not a deque's block of 64, ≈ 0.7 KiB)."""
        self._limit = buffer_size
        self._waiter: Future[None] | None = None
        """The consumer's wait for an item (one consumer: no `Signal`, no call per offer)."""
        self._ended = False
        self.dropped = False
        self.failure: A2AError | None = None
        """What ends the subscription with an error once its events are taken (`fail`)."""
        self.sequence: int | None = None
        numbers = [entry[0] for entry in self._buffer if entry is not None and entry[0]]
        self._last: int | None = max([*numbers, after or 0]) or None
        """The highest sequence number taken: what is not above it is a repeat."""

    def _offer(self, item: Entry | None) -> bool:
        """Queue an item (not a repeat) and wake the consumer; False (and the subscription
        ends) when the buffer is full."""
        kept = True
        if item is not None:
            number = item[0]
            if number is not None:
                last = self._last
                if last is not None and number <= last:
                    return True
                self._last = number
            if len(self._buffer) - self._taken >= self._limit:
                self.dropped = True
                self._buffer, self._taken, item, kept = [], 0, None, False
        self._buffer.append(item)
        if (waiter := self._waiter) is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)
        return kept

    def fail(self, error: A2AError) -> None:
        """End after the events already queued, raising `error` (e.g. the bus is gone)."""
        if not self._ended and self.failure is None:
            self.failure = error
            self._offer(None)

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._ended:
            raise StopAsyncIteration
        buffer = self._buffer
        taken = self._taken
        while taken >= len(buffer):
            waiter = self._waiter = get_running_loop().create_future()
            await waiter
            buffer, taken = self._buffer, self._taken
        item = buffer[taken]
        taken += 1
        if taken == len(buffer) and taken >= _KEPT:
            buffer.clear()  # all taken: started over (not per event: no allocation per event)
            taken = 0
        self._taken = taken
        if item is None:
            self._ended = True
            self.close()
            if self.failure is not None:
                raise self.failure
            if self.dropped:
                raise InternalError(
                    "This stream fell too far behind and was closed: resubscribe to continue",
                    metadata={"taskId": self._key.task_id},
                )
            raise StopAsyncIteration
        self.sequence, event = item
        return event

    def close(self) -> None:
        """Unsubscribe (idempotent)."""
        self._broker._remove(self._key, self)


class EventBroker:
    """In-process fan-out (one replica)."""

    failover = False
    """Whether a dead replica's tasks are recovered by the others (leases): the restart
    policy then does not fail tasks at start, which other replicas may be running."""

    def __init__(self, buffer_size: int = 1024) -> None:
        self._subscribers: dict[TaskKey, list[Subscription]] = {}
        self.buffer_size = buffer_size
        self.stops: Callable[[TaskKey], Awaitable[None]] = _nothing
        """What a stop requested by another replica awaits here (the runner sets it)."""
        self.recover: Callable[[TaskKey], Awaitable[None]] = _nothing
        """What a task whose replica died is handed to, here (the service sets it)."""
        self.takes: Takes = _not_taken
        """What a follow-up handed here by another replica goes to (the service sets it)."""

    async def start(self) -> None:
        """Nothing to connect to (a bus connects here)."""

    async def stop(self) -> None:
        """Nothing to let go of."""

    def subscribe(
        self, key: TaskKey, head: Iterable[Entry] = (), *, after: int | None = None
    ) -> Subscription:
        """A subscription that yields `head`, then every event published from now on (with
        a sequence number above `after` and above the head's)."""
        subscription = Subscription(self, key, self.buffer_size, head, after)
        self._subscribers.setdefault(key, []).append(subscription)
        return subscription

    async def replayable(self, key: TaskKey, after: int) -> bool:
        """Whether `subscribe(key, after=after)` yields every event numbered above `after`
        (published before too). In process: never (the runner's `ReplayWindow` replays)."""
        return False

    async def request_stop(self, key: TaskKey) -> None:
        """Ask the other replicas to stop their run of the task (it was canceled here);
        each awaits its `stops`. In process: there are none."""

    def claim(self, key: TaskKey) -> Awaitable[None]:
        """Hold the task's execution lease before its run starts here (a bus: so another
        replica recovers the task if this one dies). In process: nothing to hold."""
        return DONE

    def released(self, key: TaskKey) -> None:
        """The task's run here ended (not cancelled): let go of its lease."""

    def waiting(self, key: TaskKey) -> Awaitable[None]:
        """The task's agent function is suspended here, about to wait for a follow-up: a
        follow-up landing on another replica should be handed here. In process: done."""
        return DONE

    def hand_off(
        self, key: TaskKey, request: SendMessageRequest, ctx: CallContext
    ) -> Awaitable[Turn | None]:
        """Have the replica where the task waits (`waiting`) take this follow-up: the task
        as its message left it, or None when the run is to begin here. In process: None."""
        return DONE

    def publish(
        self, key: TaskKey, event: StreamEvent, *, final: bool = False, sequence: int | None = None
    ) -> Awaitable[None]:
        """Deliver to every subscriber in order; `final` closes them after the event. Done
        at once (what it returns is already done: no coroutine per event)."""
        subscribers = self._subscribers.get(key)
        if not subscribers:
            return DONE
        entry = (sequence, event)
        dropped: list[Subscription] | None = None  # (made when one is: not per event)
        for subscription in subscribers:
            if not subscription._offer(entry):
                dropped = [*(dropped or ()), subscription]
        if final:
            for subscription in subscribers:
                if not subscription.dropped:
                    subscription._offer(None)
            self._subscribers.pop(key, None)
        for subscription in dropped or ():
            self._remove(key, subscription)
        return DONE

    def deliver(
        self, key: TaskKey, event: StreamEvent, *, final: bool = False, sequence: int | None = None
    ) -> None:
        """`publish` to this process's subscribers, at once (what a bus reads, in tests)."""
        EventBroker.publish(self, key, event, final=final, sequence=sequence)

    def pressed(self, key: TaskKey) -> bool:
        """Whether a subscriber of the task has filled half its buffer (the producer
        should let the writers run)."""
        subscribers = self._subscribers.get(key)
        if subscribers:
            half = self.buffer_size // 2
            for subscription in subscribers:
                if len(subscription._buffer) - subscription._taken > half:
                    return True
        return False

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


async def _nothing(key: TaskKey) -> None:
    pass


async def _not_taken(key: TaskKey, request: SendMessageRequest, ctx: CallContext) -> Turn:
    raise InternalError("This replica takes no follow-ups")


class Broker(Protocol):
    """What the runner needs of a broker (`EventBroker` in process, a bus across
    replicas); the service starts and stops it with the app."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def subscribe(
        self, key: TaskKey, head: Iterable[Entry] = (), *, after: int | None = None
    ) -> Subscription: ...

    async def replayable(self, key: TaskKey, after: int) -> bool: ...

    failover: bool
    stops: Callable[[TaskKey], Awaitable[None]]
    recover: Callable[[TaskKey], Awaitable[None]]
    takes: Takes

    async def request_stop(self, key: TaskKey) -> None: ...

    def claim(self, key: TaskKey) -> Awaitable[None]: ...

    def released(self, key: TaskKey) -> None: ...

    def waiting(self, key: TaskKey) -> Awaitable[None]: ...

    def hand_off(
        self, key: TaskKey, request: SendMessageRequest, ctx: CallContext
    ) -> Awaitable[Turn | None]: ...

    def publish(
        self, key: TaskKey, event: StreamEvent, *, final: bool = False, sequence: int | None = None
    ) -> Awaitable[None]: ...

    def pressed(self, key: TaskKey) -> bool: ...

    def subscriber_count(self, key: TaskKey | None = None) -> int: ...


class ReplayWindow:
    """The last events published for one live task, kept to resume a subscription.

    Holds at most `limit` events. `floor` is the sequence number from which nothing is
    missing: every event published with a higher one is in the window (events committed
    but never streamed, such as messages into history, take a number and leave no entry).
    A Task snapshot (a task's creation) starts it over: nothing before it is kept.
    """

    __slots__ = ("entries", "floor", "limit")

    def __init__(self, sequence: int, limit: int) -> None:
        self.floor = sequence
        self.limit = limit
        self.entries: list[tuple[int, StreamEvent]] = []
        """Oldest first. A list, not a deque: most windows hold a few events, and a deque
        allocates a block of 64 at once (≈ 0.7 KiB)."""

    def add(self, sequence: int, event: StreamEvent) -> None:
        entries = self.entries
        if isinstance(event, Task):
            self.floor = sequence
            entries.clear()
            return
        if len(entries) >= self.limit:
            self.floor = entries[0][0]  # about to drop out
            del entries[0]
        entries.append((sequence, event))

    def after(self, sequence: int, current: int) -> list[tuple[int, StreamEvent]] | None:
        """The events published after `sequence`, or None when the window cannot vouch
        for all of them: `sequence` is older than the window, or newer than `current`
        (the task's generation), i.e. not a number this task gave out."""
        if not self.floor <= sequence <= current:
            return None
        return [entry for entry in self.entries if entry[0] > sequence]


class StreamPosition:
    """The sequence number of the event a stream yielded last (None: none yet, or an
    event outside any task)."""

    __slots__ = ("sequence",)

    def __init__(self) -> None:
        self.sequence: int | None = None


class EventStream:
    """What a streaming operation of the service returns: an async iterator of events
    that also tells `sequence`, the sequence number of the event it yielded last, so a
    binding can label each frame (the SSE `id:`).

    It passes an async generator through unchanged — its errors (the first `__anext__`
    raises what was wrong with the request), its end, `aclose` — without a frame of its
    own per event; the generator records each event's number in `position`."""

    __slots__ = ("_events", "position")

    def __init__(
        self, events: Callable[[StreamPosition], AsyncGenerator[StreamEvent, None]]
    ) -> None:
        self.position = StreamPosition()
        self._events = events(self.position)

    @property
    def sequence(self) -> int | None:
        return self.position.sequence

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._events  # iterated directly: no frame of ours per event

    def __anext__(self) -> Awaitable[StreamEvent]:
        return self._events.__anext__()

    def aclose(self) -> Awaitable[None]:
        return self._events.aclose()
