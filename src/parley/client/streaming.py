"""`ClientStream`: a stream the caller can rely on. It resubscribes after a dropped stream
and never hands the caller the same event twice; when events may have been lost, it says
so with a `Reconnected` item instead of pretending nothing happened.

Theory of operation: events are read from the transport's `EventStream` one at a time.
The task id is learnt from the first task event (or given, for `subscribe`). A drop — a
connection error, a clean end before the task reached a terminal or interrupted state, or
the idle limit when the policy says so — is followed by SubscribeToTask for that task,
with `Last-Event-ID` set to the last SSE id delivered. Events whose id was delivered
already are skipped (ids are per-task sequence numbers: any id up to the highest one seen
is old). The first new event after a reconnect tells what happened: a continuation with
an id means the server replayed what was missed (nothing is said); a Task snapshot means
it resynchronised (yielded as `Reconnected(task)`); anything else from a server without
ids is preceded by `Reconnected(None)`. If the task finished meanwhile (the subscribe is
refused), GetTask supplies the final snapshot as `Reconnected(task)` and the stream ends.
Where the server numbers its task's updates (generations, A2A 1.1 draft), a jump in them
means events were missed on the way: GetTask's snapshot replaces the event past the jump,
as `Reconnected(task)`, and updates the snapshot already holds are dropped.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from types import TracebackType

from parley.client.errors import (
    ClientConnectionError,
    ClientError,
    ClientTimeoutError,
    StreamIdleError,
)
from parley.client.generations import Generations, Verdict
from parley.client.retry import RetryPolicy
from parley.client.transport import CallOptions, EventStream
from parley.model import Message, StreamEvent, Task, TaskStatusUpdateEvent
from parley.protocol import lifecycle
from parley.protocol.errors import A2AError, TaskNotFoundError


@dataclass(frozen=True, slots=True)
class StreamPolicy:
    """How streams behave.

    `idle_timeout`: seconds a stream may receive nothing (no event, no keep-alive) before
    it is considered dead (None: never; servers that send keep-alives, like Parley and
    the official SDK every 15 s, make a limit of a minute or so safe). `resubscribe`:
    reconnect after a drop. `resubscribe_on_idle`: treat the idle limit as a drop (else
    StreamIdleError is raised). `reconnect`: attempts and backoff of reconnections in a
    row that bring no new event.
    """

    idle_timeout: float | None = None
    resubscribe: bool = True
    resubscribe_on_idle: bool = False
    reconnect: RetryPolicy = field(default_factory=lambda: RetryPolicy(attempts=5, backoff=0.25))


@dataclass(frozen=True, slots=True)
class Reconnected:
    """The stream was re-established and events may have been missed.

    `task` is the task as the server has it now (the snapshot it sent on resubscribe, or
    GetTask's answer if the task finished meanwhile); None when the server sent none.
    `reason` is why the stream dropped.
    """

    task: Task | None
    reason: str


StreamItem = StreamEvent | Reconnected
"""What a ClientStream yields."""

Opener = Callable[[CallOptions], EventStream]
Resubscriber = Callable[[str, CallOptions], EventStream]
TaskGetter = Callable[[str], Awaitable[Task]]


def _sequence(event_id: str) -> int | None:
    return int(event_id) if event_id.isdecimal() else None


class ClientStream:
    """An async iterator of `StreamEvent | Reconnected`; also an async context manager
    (leaving it closes the stream). `task_id` is known once a task event arrived;
    `reconnects` counts the reconnections made."""

    def __init__(
        self,
        open: Opener,
        *,
        options: CallOptions,
        policy: StreamPolicy,
        resubscribe: Resubscriber,
        get_task: TaskGetter,
        task_id: str = "",
    ) -> None:
        self._open = open
        self._options = replace(options, idle_timeout=policy.idle_timeout)
        self._policy = policy
        self._resubscribe = resubscribe
        self._get_task = get_task
        self.task_id = task_id
        self.reconnects = 0
        self._current: EventStream | None = None
        self._pending: deque[StreamItem] = deque()
        self._done = False
        self._final = False
        self._delivered = False
        self._failures = 0
        self._resync: str | None = None
        self._resumed_from = ""
        self._previous_id = ""
        self._received = 0
        self._high: int | None = None
        self._seen: set[str] = set()
        self._last_id = ""
        self._generations = Generations()
        self._gap = False

    @property
    def last_event_id(self) -> str:
        """The SSE id of the last event delivered ("" if none had one)."""
        return self._last_id

    def __aiter__(self) -> ClientStream:
        return self

    async def __anext__(self) -> StreamItem:
        while not self._pending:
            if self._done:
                raise StopAsyncIteration
            await self._step()
        return self._pending.popleft()

    async def __aenter__(self) -> ClientStream:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._done = True
        current, self._current = self._current, None
        if current is not None:
            await current.aclose()

    # ------------------------------------------------------------------ reading

    def _connect(self) -> EventStream:
        self._previous_id, self._received = "", 0
        if not self.reconnects:
            return self._open(self._options)
        self._resumed_from = self._last_id
        options = replace(self._options, last_event_id=self._last_id)
        return self._resubscribe(self.task_id, options)

    async def _step(self) -> None:
        """Read one event, opening the stream first; handle its end or failure."""
        current = self._current or self._connect()
        self._current = current
        try:
            event = await anext(current)
        except BaseException as exc:
            self._current = None
            await current.aclose()
            await self._ended(exc)
        else:
            self._accept(event, current.last_event_id)
            if self._gap:
                await self._reconcile()

    async def _ended(self, error: BaseException) -> None:
        if isinstance(error, StopAsyncIteration):
            await self._dropped(None)
        elif isinstance(error, ClientConnectionError | ClientTimeoutError):
            await self._dropped(error)
        elif isinstance(error, A2AError):
            await self._refused(error)
        else:
            self._done = True
            raise error

    def _accept(self, event: StreamEvent, event_id: str) -> None:
        own = event_id if event_id and event_id != self._previous_id else ""
        self._previous_id = event_id
        self._received += 1
        if not isinstance(event, Task):
            self._failures = 0  # this connection brought more than a snapshot
        if own and self._already_delivered(own):
            return
        verdict = self._generations.see(event)
        if verdict is Verdict.SKIP:
            return
        self._gap = verdict is Verdict.GAP
        self._track(event)
        if own:
            self._remember(own)
        self._delivered = True
        if self._resync is not None:
            reason, self._resync = self._resync, None
            if isinstance(event, Task):
                self._pending.append(Reconnected(event, reason))
                return
            if not (own and self._resumed_from):
                self._pending.append(Reconnected(None, reason))
        self._pending.append(event)

    def _already_delivered(self, event_id: str) -> bool:
        number = _sequence(event_id)
        if number is not None and self._high is not None:
            return number <= self._high
        return event_id in self._seen

    def _remember(self, event_id: str) -> None:
        self._last_id = event_id
        number = _sequence(event_id)
        if number is not None:
            self._high = number if self._high is None else max(self._high, number)
        else:
            self._seen.add(event_id)

    def _track(self, event: StreamEvent) -> None:
        """Learn the task id and whether the task reached a state that ends a stream."""
        if isinstance(event, Message):
            self._final = self._final or not self.task_id  # a direct reply ends its stream
            return
        if isinstance(event, Task):
            self.task_id = self.task_id or event.id
            self._final = lifecycle.ends_stream(event.status.state)
        elif isinstance(event, TaskStatusUpdateEvent):
            self.task_id = self.task_id or event.task_id
            self._final = lifecycle.ends_stream(event.status.state)
        else:
            self.task_id = self.task_id or event.task_id

    # ------------------------------------------------------------------ recovering

    async def _dropped(self, error: ClientError | None) -> None:
        """The stream ended (`error` None) or broke: finish, give up, or reconnect."""
        if self._final or (error is None and not self.task_id):
            self._done = True
            return
        idle_raises = isinstance(error, StreamIdleError) and not self._policy.resubscribe_on_idle
        if idle_raises or not (self._policy.resubscribe and self.task_id):
            self._done = True
            if error is not None:
                raise error
            return
        reason = error.message if error is not None else "The stream ended before the task did"
        if self._received == 0 and await self._finished_meanwhile(reason):
            return  # a server that cuts instead of refusing a finished task's stream
        self._failures += 1
        if self._failures > self._policy.reconnect.attempts:
            self._done = True
            raise error or ClientConnectionError(reason)
        await asyncio.sleep(self._policy.reconnect.delay(self._failures))
        self.reconnects += 1
        if self._delivered:
            self._resync = reason

    async def _refused(self, error: A2AError) -> None:
        """A server error. Refusing a resubscribe to a task that finished meanwhile is not
        a failure: GetTask gives its final state, as the stream's last item."""
        self._done = True
        reconnecting = self.reconnects > 0 and self._received == 0
        if not reconnecting or isinstance(error, TaskNotFoundError):
            raise error
        if not await self._finished_meanwhile(self._resync or "The task finished meanwhile"):
            raise error

    async def _reconcile(self) -> None:
        """Events were missed (a jump in the task's generations, A2A 1.1 draft): the task
        as GetTask gives it now stands for them and for the event past the jump."""
        self._gap = False
        try:
            task = await self._get_task(self.task_id)
        except (A2AError, ClientError):
            return  # the event as it came
        self._pending.pop()
        self._generations.reconciled(task)
        self._track(task)
        self._pending.append(Reconnected(task, "Events were missed (a gap in generations)"))

    async def _finished_meanwhile(self, reason: str) -> bool:
        """Whether GetTask says the task is terminal; if so it is the last item."""
        try:
            task = await self._get_task(self.task_id)
        except (A2AError, ClientError):
            return False
        if not lifecycle.is_terminal(task.status.state):
            return False
        self._track(task)
        self._pending.append(Reconnected(task, reason))
        self._done = True
        return True
