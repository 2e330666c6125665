"""`ClientStream` (`parley.client.streaming`) on a scripted in-memory server, for any pattern
of drops: a server that replays after `Last-Event-ID` (REFERENCE §7.3) has every event
delivered exactly once, in order, with nothing said; one that resynchronises with a Task
snapshot has it delivered as `Reconnected(task)`; one without ids has the caller told; a
task that finished meanwhile ends the stream with GetTask's snapshot; reconnections give up
after their attempts. No network, no real waiting (backoff 0)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parley.client import (
    CallOptions,
    ClientConnectionError,
    ClientStream,
    Reconnected,
    RetryPolicy,
    StreamIdleError,
    StreamItem,
    StreamPolicy,
)
from parley.model import (
    Message,
    Role,
    StreamEvent,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.errors import (
    InvalidParamsError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

TASK = "t-1"
NO_WAIT = RetryPolicy(attempts=3, backoff=0.0)


def snapshot(state: TaskState = TaskState.WORKING) -> Task:
    return Task(id=TASK, context_id="c", status=TaskStatus(state=state))


def update(state: TaskState, note: str = "") -> TaskStatusUpdateEvent:
    said = Message(message_id=note, role=Role.AGENT, parts=(TextPart(text=note),)) if note else None
    return TaskStatusUpdateEvent(
        task_id=TASK, context_id="c", status=TaskStatus(state=state, message=said)
    )


def history(length: int) -> list[StreamEvent]:
    """The task's events: its snapshot, `length - 2` progress updates, its completion."""
    events: list[StreamEvent] = [snapshot()]
    events += [update(TaskState.WORKING, f"step {n}") for n in range(1, length - 1)]
    events.append(update(TaskState.COMPLETED, "done"))
    return events


@dataclass
class Segment:
    """What one connection carries: events `start..stop` (ids `start+1..stop`), then a
    drop (a clean end or a broken connection) unless it reached the last event."""

    start: int
    stop: int
    broken: bool
    ids: bool = True


@dataclass
class Scripted:
    """An EventStream over one segment of the task's events."""

    events: Sequence[StreamEvent]
    segment: Segment
    closed: bool = False
    _next: int = 0
    _id: str = ""

    @property
    def last_event_id(self) -> str:
        return self._id

    def __aiter__(self) -> Scripted:
        return self

    async def __anext__(self) -> StreamEvent:
        index = self.segment.start + self._next
        if index >= self.segment.stop:
            if self.segment.broken:
                raise ClientConnectionError("connection reset")
            raise StopAsyncIteration
        self._next += 1
        self._id = str(index + 1) if self.segment.ids else ""
        return self.events[index]

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class Refusing(Scripted):
    """A subscription the server refuses: its error comes with the first read, as a
    transport raises it."""

    refusal: Exception | None = None

    async def __anext__(self) -> StreamEvent:
        assert self.refusal is not None
        raise self.refusal


@dataclass
class Server:
    """Serves the segments in turn: the first to SendStreamingMessage, the others to
    SubscribeToTask; records each resubscription's Last-Event-ID."""

    events: Sequence[StreamEvent]
    segments: list[Segment]
    final: Task = field(default_factory=lambda: snapshot(TaskState.COMPLETED))
    refusal: Exception | None = None
    opened: list[Scripted] = field(default_factory=list)
    resumed_after: list[str] = field(default_factory=list)
    fetched: int = 0

    def open(self, options: CallOptions) -> Scripted:
        assert options.last_event_id == ""
        return self._next()

    def resubscribe(self, task_id: str, options: CallOptions) -> Scripted:
        assert task_id == TASK
        self.resumed_after.append(options.last_event_id)
        if self.refusal is not None and len(self.opened) >= len(self.segments):
            return Refusing(self.events, Segment(0, 0, broken=False), refusal=self.refusal)
        return self._next()

    def _next(self) -> Scripted:
        segment = self.segments[min(len(self.opened), len(self.segments) - 1)]
        stream = Scripted(self.events, segment)
        self.opened.append(stream)
        return stream

    async def get_task(self, task_id: str) -> Task:
        self.fetched += 1
        return self.final

    def stream(self, policy: StreamPolicy | None = None) -> ClientStream:
        return ClientStream(
            self.open,
            options=CallOptions(),
            policy=policy or StreamPolicy(reconnect=NO_WAIT),
            resubscribe=self.resubscribe,
            get_task=self.get_task,
        )


async def _drain(stream: ClientStream) -> list[StreamItem]:
    async with stream:
        return [item async for item in stream]


def drain(stream: ClientStream) -> list[StreamItem]:
    return asyncio.run(_drain(stream))


@st.composite
def replaying(draw: st.DrawFn) -> tuple[int, list[Segment]]:
    """A task of 2 to 8 events and how a replaying server cuts it: each connection resumes
    at most a few events before where the last one was cut (a server may repeat), and
    carries at least one new event (else the client would count a failed attempt)."""
    length = draw(st.integers(min_value=2, max_value=8))
    segments: list[Segment] = []
    delivered = 0
    while delivered < length:
        start = draw(st.integers(min_value=max(0, delivered - 2), max_value=delivered))
        stop = draw(st.integers(min_value=delivered + 1, max_value=length))
        if stop == length:
            segments.append(Segment(start, stop, broken=False))
            break
        segments.append(Segment(start, stop, broken=draw(st.booleans())))
        delivered = stop
    return length, segments


@settings(max_examples=60, deadline=None)
@given(replaying())
def test_a_replaying_server_has_every_event_delivered_once_in_order(
    plan: tuple[int, list[Segment]],
) -> None:
    length, segments = plan
    events = history(length)
    server = Server(events, segments)
    stream = server.stream()
    assert drain(stream) == events
    assert stream.reconnects == len(segments) - 1
    assert stream.last_event_id == str(length)
    assert server.resumed_after == [str(segment.stop) for segment in segments[:-1]]
    assert all(opened.closed for opened in server.opened)
    assert server.fetched == 0


def test_a_snapshot_after_a_drop_is_told_as_reconnected() -> None:
    """A server that cannot replay answers the resubscribe with the task as it is now
    (R-SUB-2: a subscription's first event is the Task)."""
    now = Task(id=TASK, context_id="c", status=TaskStatus(state=TaskState.WORKING), artifacts=())
    events: list[StreamEvent] = [snapshot(), update(TaskState.WORKING, "a"), now]
    events.append(update(TaskState.COMPLETED, "done"))
    server = Server(
        events,
        [Segment(0, 2, broken=True), Segment(2, 4, broken=False, ids=False)],
    )
    items = drain(server.stream())
    assert items == [
        events[0],
        events[1],
        Reconnected(now, "connection reset"),
        events[3],
    ]


def test_without_ids_the_caller_is_told_events_may_be_missing() -> None:
    events = history(4)
    server = Server(
        events,
        [Segment(0, 2, broken=False, ids=False), Segment(2, 4, broken=False, ids=False)],
    )
    items = drain(server.stream())
    assert items == [
        events[0],
        events[1],
        Reconnected(None, "The stream ended before the task did"),
        events[2],
        events[3],
    ]


@pytest.mark.parametrize(
    "refusal",
    [UnsupportedOperationError("task is terminal"), InvalidParamsError("terminal")],
    ids=lambda error: type(error).__name__,
)
def test_a_task_that_finished_meanwhile_ends_with_its_final_snapshot(refusal: Exception) -> None:
    events = history(5)
    server = Server(events, [Segment(0, 2, broken=True)], refusal=refusal)
    items = drain(server.stream())
    assert items == [events[0], events[1], Reconnected(server.final, "connection reset")]
    assert server.fetched == 1


def test_a_refusal_for_a_task_still_running_is_raised() -> None:
    server = Server(history(5), [Segment(0, 2, broken=True)], final=snapshot())
    server.refusal = UnsupportedOperationError("no")
    with pytest.raises(UnsupportedOperationError):
        drain(server.stream())


def test_a_vanished_task_is_raised_without_asking_for_it() -> None:
    server = Server(history(5), [Segment(0, 2, broken=True)], refusal=TaskNotFoundError())
    with pytest.raises(TaskNotFoundError):
        drain(server.stream())
    assert server.fetched == 0


@pytest.mark.parametrize("attempts", [1, 2, 4])
def test_reconnections_that_bring_nothing_give_up_after_their_attempts(attempts: int) -> None:
    events = history(5)
    server = Server(
        events,
        [Segment(0, 2, broken=True), Segment(2, 2, broken=True)],
        final=snapshot(),  # still running: the empty reconnections are failures
    )
    policy = StreamPolicy(reconnect=RetryPolicy(attempts=attempts, backoff=0.0))
    with pytest.raises(ClientConnectionError, match="connection reset"):
        drain(server.stream(policy))
    assert len(server.opened) == attempts + 1


def test_a_drop_after_the_final_event_is_the_end() -> None:
    events = history(3)
    server = Server(events, [Segment(0, 3, broken=True)])
    assert drain(server.stream()) == events
    assert server.resumed_after == []


def test_turned_off_a_drop_is_raised_and_a_clean_end_is_the_end() -> None:
    policy = StreamPolicy(resubscribe=False, reconnect=NO_WAIT)
    broken = Server(history(4), [Segment(0, 2, broken=True)])
    with pytest.raises(ClientConnectionError):
        drain(broken.stream(policy))
    ended = Server(history(4), [Segment(0, 2, broken=False)])
    assert drain(ended.stream(policy)) == history(4)[:2]
    assert ended.resumed_after == []


def test_a_direct_message_reply_ends_the_stream() -> None:
    reply = Message(message_id="m", role=Role.AGENT, parts=(TextPart(text="hi"),))
    server = Server([reply], [Segment(0, 1, broken=True)])
    stream = server.stream()
    assert drain(stream) == [reply]
    assert (stream.task_id, stream.reconnects) == ("", 0)


class Idle(Scripted):
    async def __anext__(self) -> StreamEvent:
        if self._next == self.segment.stop - self.segment.start:
            raise StreamIdleError("nothing for 1 s")
        return await super().__anext__()


def test_the_idle_limit_raises_unless_told_to_resubscribe() -> None:
    events = history(4)

    def idle_server() -> Server:
        server = Server(events, [Segment(0, 2, broken=False), Segment(2, 4, broken=False)])
        server.opened.append(Idle(events, server.segments[0]))
        server.open = lambda options: server.opened[0]  # type: ignore[method-assign]
        return server

    raising = idle_server()
    with pytest.raises(StreamIdleError):
        drain(raising.stream())
    assert raising.resumed_after == []
    resubscribing = idle_server()
    policy = StreamPolicy(resubscribe_on_idle=True, reconnect=NO_WAIT)
    assert drain(resubscribing.stream(policy)) == events
    assert resubscribing.resumed_after == ["2"]


def test_a_bug_in_the_transport_is_raised_and_ends_the_stream() -> None:
    class Buggy(Scripted):
        async def __anext__(self) -> StreamEvent:
            raise KeyError("a bug")

    server = Server(history(3), [Segment(0, 3, broken=False)])
    server.open = lambda options: Buggy(server.events, server.segments[0])  # type: ignore[method-assign]

    async def scenario() -> None:
        stream = server.stream()
        with pytest.raises(KeyError):
            await anext(stream)
        with pytest.raises(StopAsyncIteration):
            await anext(stream)

    asyncio.run(scenario())


def test_closing_early_closes_the_connection_and_ends_iteration() -> None:
    events = history(5)
    server = Server(events, [Segment(0, 5, broken=False)])

    async def scenario() -> None:
        stream = server.stream()
        assert await anext(stream) == events[0]
        await stream.aclose()
        assert server.opened[0].closed
        with pytest.raises(StopAsyncIteration):
            await anext(stream)

    asyncio.run(scenario())


def test_the_task_id_is_learnt_from_the_first_task_event() -> None:
    server = Server(history(3), [Segment(0, 3, broken=False)])

    async def scenario() -> None:
        stream = server.stream()
        assert stream.task_id == ""
        await anext(stream)
        assert stream.task_id == TASK

    asyncio.run(scenario())
