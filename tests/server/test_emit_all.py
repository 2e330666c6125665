"""`TaskRunner.emit_all` (a run's `RunSink.emit_all`): task updates committed as one save
carrying them all, then published one by one, each with its own sequence number — what a
function's result (its artifact, then COMPLETED) goes through. Subscribers, the replay
window and the store's events see what one `emit` per event would give them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from parley.model import (
    Artifact,
    Message,
    Role,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import folding
from parley.protocol.errors import InvalidAgentResponseError
from parley.server.agent import Agent
from parley.server.broker import EventStream
from parley.server.execution import AgentExecutor, EventSink, RequestContext
from parley.server.service import AgentService
from parley.server.stamps import utc_now
from parley.server.stores.base import Scope, StoredTask, TaskKey
from parley.server.stores.memory import InMemoryTaskStore
from parley.server.task_context import TaskContext
from tests.server.support import (
    ALICE,
    ScriptedExecutor,
    as_task,
    make_card,
    run,
    send,
    settle,
    wait_for_state,
)

Numbered = tuple[int | None, StreamEvent]


class RecordingStore(InMemoryTaskStore):
    """The memory store, recording the events of each save."""

    def __init__(self) -> None:
        super().__init__()
        self.saves: list[tuple[TaskEvent, ...]] = []

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask:
        stored = await super().save(scope, task, events, expected_version)
        self.saves.append(tuple(events))
        return stored


class Wrapped:
    """An executor between the runner and a `FunctionExecutor`, its sink a plain one
    (no `emit_all`): each event its own `emit`."""

    def __init__(self, executor: AgentExecutor) -> None:
        self.executor = executor

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        await self.executor.execute(context, _Plain(events))

    async def cancel(self, context: RequestContext) -> None:
        await self.executor.cancel(context)


class _Plain:
    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    async def emit(self, event: StreamEvent) -> None:
        await self.sink.emit(event)


def status(state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id="", context_id="", status=TaskStatus(state=state))


def artifact(text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="",
        context_id="",
        artifact=Artifact(artifact_id="a1", parts=(TextPart(text=text),)),
        last_chunk=True,
    )


def shape(event: StreamEvent) -> str:
    if isinstance(event, Task):
        return f"task {event.status.state.name} {len(event.artifacts)}"
    if isinstance(event, TaskStatusUpdateEvent):
        return f"status {event.status.state.name}"
    if isinstance(event, TaskArtifactUpdateEvent):
        return f"artifact {event.artifact.parts}"
    return "message"


async def drain(stream: EventStream) -> list[Numbered]:
    out: list[Numbered] = []
    async for event in stream:
        out.append((stream.sequence, event))
    return out


def echo_agent() -> Agent:
    agent = Agent("Echo")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    return agent


def test_a_functions_result_is_one_save_and_streams_as_before() -> None:
    agent = echo_agent()
    store = RecordingStore()
    service = AgentService(agent.executor(), agent.card("http://test"), store=store)
    plain_store = RecordingStore()
    plain = AgentService(Wrapped(agent.executor()), agent.card("http://test"), store=plain_store)

    async def main() -> None:
        one = await drain(service.send_streaming_message(ALICE, send("hi")))
        each = await drain(plain.send_streaming_message(ALICE, send("hi")))
        assert [(n, shape(e)) for n, e in one] == [(n, shape(e)) for n, e in each]
        assert [n for n, _ in one] == [1, 2, 3]
        assert [shape(e) for _, e in one][1:] == [
            f"artifact {(TextPart(text='hi'),)}",
            "status COMPLETED",
        ]
        assert [[shape(e) for e in saved] for saved in store.saves] == [
            [f"artifact {(TextPart(text='hi'),)}", "status COMPLETED"]
        ]
        assert len(plain_store.saves) == 2  # without `emit_all`: one save per event
        answer = as_task(await service.send_message(ALICE, send("again")))
        assert answer.status.state is TaskState.COMPLETED
        assert answer.generation == 3
        assert [a.parts for a in answer.artifacts] == [(TextPart(text="again"),)]
        stored = await store.get(service.store_scope(ALICE), answer.id)
        assert stored is not None
        assert stored.version == 2  # created, then both updates

    run(main())


def test_the_replay_window_numbers_each_update() -> None:
    """A stream resumed after the snapshot replays both updates, with their numbers."""
    gate = asyncio.Event()

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        await gate.wait()
        emit_all = getattr(events, "emit_all")  # noqa: B009 - the runner's sink has it
        await emit_all((artifact("after"), status(TaskState.COMPLETED)))

    service = AgentService(ScriptedExecutor(script), make_card())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        stream = service.subscribe_to_task(ALICE, SubscribeToTaskRequest(id=task.id))
        assert as_task(await anext(stream)).generation == 2
        gate.set()
        await settle()
        key = TaskKey(*service.store_scope(ALICE), task.id)
        window = service.runner._live[key].window
        assert window is not None
        assert [(n, shape(e)) for n, e in window.after(2, 4) or ()] == [
            (3, f"artifact {(TextPart(text='after'),)}"),
            (4, "status COMPLETED"),
        ]
        assert [shape(event) async for event in stream] == [
            f"artifact {(TextPart(text='after'),)}",
            "status COMPLETED",
        ]

    run(main())


def test_an_update_that_does_not_fit_commits_those_before_it() -> None:
    refused: list[str] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        emit_all = getattr(events, "emit_all")  # noqa: B009 - the runner's sink has it
        try:
            await emit_all((artifact("kept"), status(TaskState.SUBMITTED)))
        except InvalidAgentResponseError as exc:
            refused.append(exc.message)
        await events.emit(status(TaskState.COMPLETED))

    store = RecordingStore()
    service = AgentService(ScriptedExecutor(script), make_card(), store=store)

    async def main() -> None:
        events = await drain(service.send_streaming_message(ALICE, send("go")))
        assert [shape(e) for _, e in events][1:] == [
            "status WORKING",
            f"artifact {(TextPart(text='kept'),)}",
            "status COMPLETED",
        ]
        assert [n for n, _ in events] == [1, 2, 3, 4]
        assert refused == ["Illegal task state transition WORKING -> SUBMITTED"]
        assert [len(saved) for saved in store.saves] == [1, 1, 1]

    run(main())


def test_a_first_update_that_does_not_fit_commits_nothing() -> None:
    refused: list[str] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.COMPLETED))
        emit_all = getattr(events, "emit_all")  # noqa: B009
        try:
            await emit_all((artifact("late"), status(TaskState.FAILED)))
        except InvalidAgentResponseError as exc:
            refused.append(exc.message)

    store = RecordingStore()
    service = AgentService(ScriptedExecutor(script), make_card(), store=store)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go")))
        await settle()
        assert len(refused) == 1
        assert [[shape(e) for e in saved] for saved in store.saves] == [["status COMPLETED"]]
        stored = await store.get(service.store_scope(ALICE), task.id)
        assert stored is not None
        assert stored.version == 2  # created, then COMPLETED: the late updates refused whole

    run(main())


def test_a_message_among_the_events_is_emitted_one_by_one() -> None:
    note = Message(message_id="n1", role=Role.AGENT, parts=(TextPart(text="note"),))

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        emit_all = getattr(events, "emit_all")  # noqa: B009
        await emit_all((note, artifact("a"), status(TaskState.COMPLETED)))
        await emit_all(())

    store = RecordingStore()
    service = AgentService(ScriptedExecutor(script), make_card(), store=store)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go")))
        assert task.status.state is TaskState.COMPLETED
        assert [m.message_id for m in task.history][1:] == ["n1"]
        assert [len(saved) for saved in store.saves] == [1, 1, 1, 1]

    run(main())


def test_updates_are_folded_onto_a_task_written_elsewhere() -> None:
    """A stale save: both updates folded again onto the stored task, saved as one."""
    gate = asyncio.Event()

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        await gate.wait()
        emit_all = getattr(events, "emit_all")  # noqa: B009
        await emit_all((artifact("after"), status(TaskState.COMPLETED)))

    store = RecordingStore()
    service = AgentService(ScriptedExecutor(script), make_card(), store=store)
    scope = service.store_scope(ALICE)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        stream = service.subscribe_to_task(ALICE, SubscribeToTaskRequest(id=task.id))
        first = await anext(stream)
        assert as_task(first).status.state is TaskState.WORKING
        stored = await store.get(scope, task.id)
        assert stored is not None
        note = Message(message_id="x", role=Role.AGENT, parts=(TextPart(text="elsewhere"),))
        behind = folding.apply_event(
            stored.task, folding.stamp(note, task.id, task.context_id, utc_now)
        )
        await store.save(scope, behind, (note,), stored.version)
        gate.set()
        rest = [shape(event) async for event in stream]
        assert rest == [f"artifact {(TextPart(text='after'),)}", "status COMPLETED"]
        done = await store.get(scope, task.id)
        assert done is not None
        assert done.task.status.state is TaskState.COMPLETED
        assert [m.message_id for m in done.task.history][-1] == "x"
        assert done.version == 4  # created, WORKING, the message elsewhere, both updates

    run(main())


def test_a_plain_sink_without_emit_all_still_serves_functions() -> None:
    agent = echo_agent()
    service = AgentService(Wrapped(agent.executor()), agent.card("http://test"))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        assert task.status.state is TaskState.COMPLETED
        assert [a.parts for a in task.artifacts] == [(TextPart(text="hi"),)]
        assert task.generation == 3

    run(main())
