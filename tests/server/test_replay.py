"""Per-task sequence numbers and resumed subscriptions (DESIGN 5): every streamed task
event carries the store version it was committed at; SubscribeToTask with a resume point
(`CallContext.resume_after`, from `Last-Event-ID`) replays exactly the events missed when
the task's replay window holds them all, and otherwise starts with the Task snapshot, as
the spec says (R-STREAM-3); the numbers keep increasing across restarts on the durable
stores."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from parley.model import (
    Artifact,
    Message,
    Role,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import folding
from parley.protocol.errors import TaskNotFoundError, UnsupportedOperationError
from parley.protocol.negotiation import Version
from parley.server.agent import Agent
from parley.server.broker import EventBroker, EventStream, ReplayWindow
from parley.server.context import CallContext
from parley.server.execution import EventSink, RequestContext
from parley.server.service import AgentService
from parley.server.stores import open_store
from parley.server.stores.base import Scope, TaskKey, TaskStore
from parley.server.stores.memory import InMemoryPushConfigStore
from parley.server.task_context import TaskContext
from tests.contracts import support as contracts
from tests.contracts.conftest import DURABLE, _url
from tests.server.support import (
    ALICE,
    BOB,
    as_task,
    make_card,
    run,
    send,
    settle,
    text_of,
    wait_for_state,
)

Numbered = tuple[int | None, StreamEvent]


def status(state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id="", context_id="", status=TaskStatus(state=state))


def chunk(text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="",
        context_id="",
        artifact=Artifact(artifact_id="a", parts=(TextPart(text=text),)),
        append=True,
    )


def note(text: str) -> Message:
    """An agent message inside a task: committed (it takes a number), never streamed."""
    return Message(message_id=f"note-{text}", role=Role.AGENT, parts=(TextPart(text=text),))


class Remote:
    """A low-level executor the test drives: each run emits what the test queues, until
    `None`."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        while (event := await self.queue.get()) is not None:
            await events.emit(event)

    async def cancel(self, context: RequestContext) -> None:
        return None

    async def emit(self, *events: StreamEvent | None) -> None:
        """Queue events and let the agent commit them."""
        for event in events:
            self.queue.put_nowait(event)
        await settle()


def remote_service(store: TaskStore | None = None) -> tuple[AgentService, Remote]:
    remote = Remote()
    return AgentService(remote, make_card(), store=store), remote


async def take(stream: EventStream, count: int) -> list[Numbered]:
    """The next `count` events with their sequence numbers."""
    out: list[Numbered] = []
    for _ in range(count):
        event = await anext(stream)
        out.append((stream.sequence, event))
    return out


async def drain(stream: EventStream) -> list[Numbered]:
    out: list[Numbered] = []
    async for event in stream:
        out.append((stream.sequence, event))
    return out


def numbers(events: list[Numbered]) -> list[int | None]:
    return [sequence for sequence, _ in events]


def picture(events: list[Numbered]) -> list[str]:
    """`n:task:STATE`, `n:status:STATE`, `n:artifact:TEXT`, `n:message`."""
    out: list[str] = []
    for sequence, event in events:
        if isinstance(event, Task):
            out.append(f"{sequence}:task:{event.status.state.name}")
        elif isinstance(event, TaskStatusUpdateEvent):
            out.append(f"{sequence}:status:{event.status.state.name}")
        elif isinstance(event, TaskArtifactUpdateEvent):
            part = event.artifact.parts[0]
            assert isinstance(part, TextPart)
            out.append(f"{sequence}:artifact:{part.text}")
        else:
            out.append(f"{sequence}:message")
    return out


def resuming(after: int | None, ctx: CallContext = ALICE) -> CallContext:
    return msgspec.structs.replace(ctx, resume_after=after)


def subscribe(service: AgentService, task_id: str, ctx: CallContext = ALICE) -> EventStream:
    stream = service.subscribe_to_task(ctx, SubscribeToTaskRequest(id=task_id))
    assert isinstance(stream, EventStream)
    return stream


async def version(service: AgentService, task_id: str) -> int:
    stored = await service.store.get(service.store_scope(ALICE), task_id)
    assert stored is not None
    return stored.version


# ----------------------------------------------------------------------------- numbering


def test_every_streamed_event_carries_the_generation_it_produced() -> None:
    """The Task is generation 1, each update one more; an agent message into history
    takes a store version but no generation, and is not streamed (R-STREAM-6)."""
    service, remote = remote_service()

    async def main() -> None:
        await remote.emit(
            status(TaskState.WORKING),
            chunk("a"),
            note("aside"),
            chunk("b"),
            status(TaskState.COMPLETED),
            None,
        )
        stream = service.send_streaming_message(ALICE, send("x"))
        assert isinstance(stream, EventStream)
        assert stream.sequence is None
        events = await drain(stream)
        assert picture(events) == [
            "1:task:SUBMITTED",
            "2:status:WORKING",
            "3:artifact:a",
            "4:artifact:b",
            "5:status:COMPLETED",
        ]
        assert await version(service, as_task(events[0][1]).id) == 6
        stored = await service.store.get(service.store_scope(ALICE), as_task(events[0][1]).id)
        assert stored is not None
        assert stored.task.generation == 5

    run(main())


def test_a_direct_message_has_no_sequence_number() -> None:
    service, remote = remote_service()

    async def main() -> None:
        await remote.emit(note("hello"), None)
        events = await drain(service.send_streaming_message(ALICE, send("x")))
        assert picture(events) == ["None:message"]

    run(main())


def test_a_follow_up_stream_starts_with_the_task_at_its_users_message() -> None:
    """The follow-up's snapshot carries the generation the user's message left it at (a
    message into history takes none); the agent's events follow without overlap."""
    service, remote = remote_service()

    async def main() -> None:
        await remote.emit(status(TaskState.INPUT_REQUIRED), None)
        first = await drain(service.send_streaming_message(ALICE, send("x")))
        assert picture(first) == ["1:task:SUBMITTED", "2:status:INPUT_REQUIRED"]
        task_id = as_task(first[0][1]).id
        await remote.emit(status(TaskState.WORKING), status(TaskState.COMPLETED), None)
        second = await drain(service.send_streaming_message(ALICE, send("y", task_id=task_id)))
        assert picture(second) == [
            "2:task:INPUT_REQUIRED",
            "3:status:WORKING",
            "4:status:COMPLETED",
        ]
        snapshot = as_task(second[0][1])
        assert [text_of(m) for m in snapshot.history] == ["x", "y"]

    run(main())


class BrokenPushStore(InMemoryPushConfigStore):
    """A push-config store whose database has gone away."""

    async def put(
        self, scope: Scope, config: TaskPushNotificationConfig, *, protocol: Version = Version.V1_0
    ) -> None:
        raise OSError("the database is unreachable")


def test_a_follow_up_stream_that_fails_after_its_snapshot_leaves_no_subscription() -> None:
    remote = Remote()
    service = AgentService(remote, make_card(push=True), push_store=BrokenPushStore())

    async def main() -> None:
        await remote.emit(status(TaskState.INPUT_REQUIRED), None)
        first = await drain(service.send_streaming_message(ALICE, send("x")))
        task_id = as_task(first[0][1]).id
        hook = TaskPushNotificationConfig(url="https://hooks.example/1")
        follow_up = service.send_streaming_message(ALICE, send("y", task_id=task_id, push=hook))
        with pytest.raises(OSError, match="unreachable"):
            await anext(follow_up)
        assert service.broker.subscriber_count() == 0
        await remote.emit(None)  # the first run waits for input: let it end
        assert service.runner.live_count() == 0

    run(main())


def test_a_subscription_starts_with_the_snapshot_at_the_tasks_version() -> None:
    service, remote = remote_service()

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x", return_immediately=True)))
        await remote.emit(status(TaskState.WORKING), chunk("a"))
        stream = subscribe(service, task.id)
        assert picture(await take(stream, 1)) == ["3:task:WORKING"]
        await remote.emit(chunk("b"), status(TaskState.COMPLETED), None)
        assert picture(await drain(stream)) == ["4:artifact:b", "5:status:COMPLETED"]

    run(main())


# ----------------------------------------------------------------------------- resuming


async def dropped_stream(service: AgentService, remote: Remote) -> tuple[str, list[Numbered]]:
    """A stream read up to its first chunk (version 3), then closed by the client."""
    await remote.emit(status(TaskState.WORKING), chunk("a"))
    stream = service.send_streaming_message(ALICE, send("x"))
    assert isinstance(stream, EventStream)
    seen = await take(stream, 3)
    await stream.aclose()
    assert service.broker.subscriber_count() == 0
    return as_task(seen[0][1]).id, seen


def test_a_resumed_subscription_replays_exactly_what_was_missed() -> None:
    """No snapshot, no duplicate, no gap: the missed events, then the live ones."""
    service, remote = remote_service()

    async def main() -> None:
        task_id, seen = await dropped_stream(service, remote)
        assert picture(seen) == ["1:task:SUBMITTED", "2:status:WORKING", "3:artifact:a"]
        await remote.emit(chunk("b"), note("aside"), chunk("c"))
        stream = subscribe(service, task_id, resuming(3))
        assert picture(await take(stream, 2)) == ["4:artifact:b", "5:artifact:c"]
        await remote.emit(status(TaskState.COMPLETED), None)
        assert picture(await drain(stream)) == ["6:status:COMPLETED"]
        await settle()
        assert service.runner.live_count() == 0

    run(main())


def test_a_resume_point_anywhere_in_the_window_replays_from_there() -> None:
    service, remote = remote_service()

    async def main() -> None:
        task_id, _ = await dropped_stream(service, remote)
        await remote.emit(chunk("b"))
        streams = [subscribe(service, task_id, resuming(n)) for n in (1, 2)]
        assert picture(await take(streams[0], 3)) == [
            "2:status:WORKING",
            "3:artifact:a",
            "4:artifact:b",
        ]
        assert picture(await take(streams[1], 2)) == ["3:artifact:a", "4:artifact:b"]
        await remote.emit(status(TaskState.COMPLETED), None)
        for stream in streams:
            assert picture(await drain(stream)) == ["5:status:COMPLETED"]

    run(main())


def test_nothing_missed_gives_the_snapshot_numbered_as_the_last_event_seen() -> None:
    """The response still starts at once; a client skipping numbers it has seen drops it."""
    service, remote = remote_service()

    async def main() -> None:
        task_id, _ = await dropped_stream(service, remote)
        stream = subscribe(service, task_id, resuming(3))
        assert picture(await take(stream, 1)) == ["3:task:WORKING"]
        await remote.emit(status(TaskState.COMPLETED), None)
        assert picture(await drain(stream)) == ["4:status:COMPLETED"]

    run(main())


@pytest.mark.parametrize("after", [99, 4])
def test_a_number_the_task_never_gave_gives_the_snapshot(after: int) -> None:
    service, remote = remote_service()

    async def main() -> None:
        task_id, _ = await dropped_stream(service, remote)
        stream = subscribe(service, task_id, resuming(after))
        assert picture(await take(stream, 1)) == ["3:task:WORKING"]
        await remote.emit(status(TaskState.COMPLETED), None)
        assert picture(await drain(stream)) == ["4:status:COMPLETED"]

    run(main())


def test_a_resume_point_older_than_the_window_gives_the_snapshot() -> None:
    """The window keeps `replay_limit` events: a point before them cannot be replayed."""
    service, remote = remote_service()
    service.runner.replay_limit = 2

    async def main() -> None:
        task_id, _ = await dropped_stream(service, remote)
        await remote.emit(chunk("b"), chunk("c"))  # the window: 4, 5 (everything after 3)
        older = subscribe(service, task_id, resuming(2))
        assert picture(await take(older, 1)) == ["5:task:WORKING"]
        covered = subscribe(service, task_id, resuming(3))
        assert picture(await take(covered, 2)) == ["4:artifact:b", "5:artifact:c"]
        await remote.emit(status(TaskState.COMPLETED), None)
        assert picture(await drain(older)) == ["6:status:COMPLETED"]
        assert picture(await drain(covered)) == ["6:status:COMPLETED"]

    run(main())


def test_replay_is_off_with_a_limit_of_zero() -> None:
    service, remote = remote_service()
    service.runner.replay_limit = 0

    async def main() -> None:
        task_id, _ = await dropped_stream(service, remote)
        await remote.emit(chunk("b"))
        stream = subscribe(service, task_id, resuming(3))
        assert picture(await take(stream, 1)) == ["4:task:WORKING"]
        await remote.emit(status(TaskState.COMPLETED), None)
        await drain(stream)

    run(main())


def test_a_task_no_longer_live_gives_the_snapshot() -> None:
    """Its run ended (INPUT_REQUIRED) and its streams closed: its window went with them."""
    service, remote = remote_service()

    async def main() -> None:
        await remote.emit(status(TaskState.WORKING), status(TaskState.INPUT_REQUIRED), None)
        events = await drain(service.send_streaming_message(ALICE, send("x")))
        task_id = as_task(events[0][1]).id
        await settle()
        assert service.runner.live_count() == 0
        stream = subscribe(service, task_id, resuming(2))
        assert picture(await take(stream, 1)) == ["3:task:INPUT_REQUIRED"]
        await stream.aclose()

    run(main())


def test_a_task_written_by_another_process_gives_the_snapshot() -> None:
    """The store moved past the window (another replica wrote): the window restarts there."""
    service, remote = remote_service()

    async def main() -> None:
        task_id, _ = await dropped_stream(service, remote)
        stored = await service.store.get(service.store_scope(ALICE), task_id)
        assert stored is not None
        elsewhere = TaskStatusUpdateEvent(
            task_id=task_id,
            context_id=stored.task.context_id,
            status=TaskStatus(state=TaskState.WORKING, message=note("elsewhere")),
        )
        await service.store.save(
            service.store_scope(ALICE), folding.apply_event(stored.task, elsewhere), (elsewhere,), 3
        )
        stream = subscribe(service, task_id, resuming(3))
        first = await take(stream, 1)
        assert picture(first) == ["4:task:WORKING"]
        assert text_of(as_task(first[0][1]).status.message) == "elsewhere"
        await remote.emit(status(TaskState.COMPLETED), None)
        assert picture(await drain(stream)) == ["5:status:COMPLETED"]

    run(main())


def test_resuming_keeps_the_spec_errors() -> None:
    """A resume point changes nothing for a task that is unknown, another caller's, or
    finished (R-STREAM-3: there is nothing to subscribe to)."""
    service, remote = remote_service()

    async def main() -> None:
        await remote.emit(status(TaskState.COMPLETED), None)
        events = await drain(service.send_streaming_message(ALICE, send("x")))
        task_id = as_task(events[0][1]).id
        with pytest.raises(UnsupportedOperationError):
            await anext(subscribe(service, task_id, resuming(1)))
        with pytest.raises(TaskNotFoundError):
            await anext(subscribe(service, task_id, resuming(1, BOB)))
        with pytest.raises(TaskNotFoundError):
            await anext(subscribe(service, "nope", resuming(1)))
        await settle()
        assert service.runner.live_count() == 0

    run(main())


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_drops_and_resumes_racing_a_busy_agent_lose_and_repeat_nothing(
    backend: str, tmp_path: Path
) -> None:
    """A client that keeps dropping its stream at random points and resuming from the
    last number it saw, while the agent emits without pause, sees every event once, in
    order: reading the window and registering the subscription happen atomically."""
    store, _ = open_store("memory" if backend == "memory" else f"sqlite:///{tmp_path}/p.db")
    service, remote = remote_service(store)
    chunks = 150
    rng = random.Random(5)

    async def agent() -> None:
        for i in range(chunks):
            await remote.emit(chunk(str(i)))
            for _ in range(rng.randrange(3)):
                await asyncio.sleep(0)
        await remote.emit(status(TaskState.COMPLETED), None)

    refused: list[str] = []

    async def read(stream: EventStream, budget: int) -> tuple[list[Numbered], bool]:
        """Up to `budget` events of one connection, and whether the stream is over."""
        got: list[Numbered] = []
        try:
            for _ in range(budget):
                event = await anext(stream, None)
                if event is None:
                    return got, True
                got.append((stream.sequence, event))
        except UnsupportedOperationError as exc:  # the task ended while the client was away
            refused.append(exc.message)
            return got, True
        finally:
            await stream.aclose()
        return got, False

    async def main() -> None:
        await service.startup()
        try:
            await remote.emit(status(TaskState.WORKING))
            stream = service.send_streaming_message(ALICE, send("x"))
            assert isinstance(stream, EventStream)
            delivered, ended = await read(stream, 2)
            last, task_id = 2, as_task(delivered[0][1]).id
            producer = asyncio.ensure_future(agent())
            connections, replayed = 0, 0
            while not ended:
                for _ in range(rng.choice((0, 1, 3, 30, 60))):  # away a while, or not
                    await asyncio.sleep(0)
                resumed = subscribe(service, task_id, resuming(last))
                got, ended = await read(resumed, rng.randrange(1, 6))
                connections += 1
                if got:
                    # Resumed: the next event, or (nothing missed) the snapshot at `last`.
                    first, event = got[0]
                    assert first == last + 1 or (first == last and isinstance(event, Task))
                    replayed += first == last + 1
                for sequence, event in got:
                    assert sequence is not None
                    if sequence > last:  # what a client does: skip the numbers it has seen
                        delivered.append((sequence, event))
                        last = sequence
            await producer
            assert connections > 30
            assert replayed > 10  # resumed connections that replayed missed events
            assert numbers(delivered) == list(range(1, len(delivered) + 1))
            assert await version(service, task_id) == chunks + 3
            assert last == chunks + 3 or refused  # the end was streamed, or fell in a gap
        finally:
            await service.shutdown()

    run(main(), timeout=30)


# ----------------------------------------------------------------------------- window


def test_the_window_vouches_only_for_what_it_holds() -> None:
    window = ReplayWindow(10, 3)
    assert window.after(10, 10) == []
    assert window.after(9, 10) is None  # before the window opened
    assert window.after(11, 10) is None  # never given out
    events = {n: chunk(str(n)) for n in (11, 13, 14, 15)}
    for n, event in events.items():  # 12 was committed but not streamed
        window.add(n, event)
    assert window.floor == 11  # 11 was evicted: after 10, it would be missing
    assert window.after(10, 15) is None
    assert window.after(11, 15) == [(13, events[13]), (14, events[14]), (15, events[15])]
    assert window.after(13, 15) == [(14, events[14]), (15, events[15])]
    assert window.after(15, 15) == []
    window.add(16, Task(id="t", context_id="c", status=TaskStatus(state=TaskState.SUBMITTED)))
    assert (window.floor, list(window.entries)) == (16, [])  # a snapshot starts it over
    assert window.after(15, 16) is None


def test_a_subscription_head_comes_before_live_events() -> None:
    async def main() -> None:
        broker = EventBroker()
        key = TaskKey("", "alice", "t")
        subscription = broker.subscribe(key, [(3, chunk("3"))])
        broker.deliver(key, chunk("4"), sequence=4, final=True)
        seen: list[Numbered] = []
        async for event in subscription:
            seen.append((subscription.sequence, event))
        assert picture(seen) == ["3:artifact:3", "4:artifact:4"]

    run(main())


# ----------------------------------------------------------------------------- durable


@pytest.fixture(params=DURABLE)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from _url(request.param, tmp_path)


def durable_agent() -> Agent:
    agent = Agent("Durable")

    @agent.skill()
    async def answer(task: TaskContext) -> str:
        if task.text == "hang":
            await task.update("on it")
            await asyncio.Event().wait()
        name = await task.ask("Your name?")
        return f"Hello, {text_of(name)}"

    return agent


def durable_service(url: str) -> AgentService:
    agent = durable_agent()
    tasks, push = open_store(url)
    return AgentService(agent.executor(), agent.card("http://test"), store=tasks, push_store=push)


def test_numbers_keep_increasing_across_a_restart(database: str) -> None:
    """The durable stores keep the generation: a new process numbers a task's events after
    those the old one streamed, and its restart policy takes a number too."""

    async def first_life() -> tuple[str, str]:
        service = durable_service(database)
        await service.startup()
        try:
            asked = await drain(service.send_streaming_message(ALICE, send("ann")))
            assert picture(asked) == ["1:task:SUBMITTED", "2:status:INPUT_REQUIRED"]
            stream = service.send_streaming_message(ALICE, send("hang"))
            assert isinstance(stream, EventStream)
            hanging = await take(stream, 2)
            assert picture(hanging) == ["1:task:SUBMITTED", "2:status:WORKING"]
            await stream.aclose()
        finally:
            await service.shutdown()
        return as_task(asked[0][1]).id, as_task(hanging[0][1]).id

    async def second_life(asked_id: str, hanging_id: str) -> None:
        service = durable_service(database)
        await service.startup()
        try:
            assert await version(service, hanging_id) == 3  # failed by the restart policy
            stream = subscribe(service, asked_id, resuming(2))
            assert picture(await take(stream, 1)) == ["2:task:INPUT_REQUIRED"]
            await stream.aclose()
            reply = send("Bob", task_id=asked_id)
            events = await drain(service.send_streaming_message(ALICE, reply))
            # The suspended function did not survive: the skill starts over and asks again.
            assert picture(events) == ["2:task:INPUT_REQUIRED", "3:status:INPUT_REQUIRED"]
            await wait_for_state(service, asked_id, TaskState.INPUT_REQUIRED)
        finally:
            await service.shutdown()

    asked_id, hanging_id = contracts.run(first_life())
    contracts.run(second_life(asked_id, hanging_id))
