"""`TaskRunner`, driven through `AgentService` by low-level executors (the
`AgentExecutor` protocol): lazy task creation, fold → store → publish, stamping, run
ownership and failure handling, cancel, `live_count()` (DESIGN 4; REFERENCE §7, §8)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import pytest

from parley.model import (
    Artifact,
    CancelTaskRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageConfiguration,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.errors import (
    InvalidAgentResponseError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.server.broker import EventBroker
from parley.server.execution import EventSink, RequestContext
from parley.server.service import AgentService
from parley.server.stores.base import InlineConfigs, Scope, StoredTask, TaskKey
from parley.server.stores.memory import InMemoryTaskStore
from tests.server.support import (
    ALICE,
    T0,
    ScriptedExecutor,
    as_message,
    as_task,
    collect,
    get,
    kinds,
    make_card,
    run,
    send,
    serve_executor,
    settle,
    text_of,
    ticking_clock,
    wait_for_state,
)


def status(state: TaskState, text: str | None = None) -> TaskStatusUpdateEvent:
    """A status update with the ids left for the runner to fill in."""
    note = None
    if text is not None:
        note = Message(message_id=f"note-{text}", role=Role.AGENT, parts=(TextPart(text=text),))
    return TaskStatusUpdateEvent(
        task_id="", context_id="", status=TaskStatus(state=state, message=note)
    )


def artifact(text: str, artifact_id: str = "a1") -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="",
        context_id="",
        artifact=Artifact(artifact_id=artifact_id, parts=(TextPart(text=text),)),
    )


def agent_reply(text: str) -> Message:
    return Message(message_id=f"reply-{text}", role=Role.AGENT, parts=(TextPart(text=text),))


async def complete(context: RequestContext, events: EventSink) -> None:
    await events.emit(status(TaskState.WORKING))
    await events.emit(artifact(context.message.parts[0].text))
    await events.emit(status(TaskState.COMPLETED))


# ----------------------------------------------------------------------------- creation


def test_the_task_is_created_at_the_agents_first_event() -> None:
    """Lazy creation: until the agent emits, no task exists (it may still answer with a
    Message); the first event creates it, stored before it is published."""
    gate = asyncio.Event()
    began = asyncio.Event()

    async def script(context: RequestContext, events: EventSink) -> None:
        began.set()
        await gate.wait()
        await complete(context, events)

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        pending = asyncio.ensure_future(service.send_message(ALICE, send("hi")))
        await asyncio.wait_for(began.wait(), 1)
        assert isinstance(service.store, InMemoryTaskStore)
        assert len(service.store) == 0
        assert (await service.list_tasks(ALICE, ListTasksRequest())).tasks == ()
        assert service.runner.live_count() == 1
        gate.set()
        task = as_task(await pending)
        assert task.status.state is TaskState.COMPLETED
        assert len(service.store) == 1
        await settle()
        assert service.runner.live_count() == 0

    run(main())


def test_the_request_context_of_a_first_run_and_of_a_follow_up() -> None:
    """The executor sees the message with its ids filled in, the call, the configuration
    and metadata; `task` is None on a first run and the prior task on a follow-up."""
    round_trips: list[int] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        round_trips.append(1)
        if len(round_trips) == 1:
            await events.emit(status(TaskState.INPUT_REQUIRED, "more?"))
        else:
            await events.emit(status(TaskState.COMPLETED))

    executor = ScriptedExecutor(script)
    service = serve_executor(executor)

    async def main() -> None:
        request = send("hi", history_length=5, metadata={"k": "v"})
        asked = as_task(await service.send_message(ALICE, request))
        first = executor.contexts[0]
        assert first.task is None
        assert (first.task_id, first.context_id) == (asked.id, asked.context_id)
        assert (first.message.task_id, first.message.context_id) == (asked.id, asked.context_id)
        assert first.call is ALICE
        assert first.configuration == SendMessageConfiguration(history_length=5)
        assert first.metadata == {"k": "v"}
        done = as_task(await service.send_message(ALICE, send("yes", task_id=asked.id)))
        assert done.status.state is TaskState.COMPLETED
        second = executor.contexts[1]
        assert second.task is not None
        assert second.task.status.state is TaskState.INPUT_REQUIRED
        assert text_of(second.task.history[-1]) == "yes"
        assert second.message.context_id == asked.context_id

    run(main())


def test_events_are_stamped_with_the_task_ids_and_the_time() -> None:
    """Ids an agent leaves empty are filled in; status updates get the runner's clock."""
    service = serve_executor(ScriptedExecutor(complete))
    service.runner.clock = ticking_clock()

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        task = as_task(events[0])
        assert task.status.timestamp == T0
        updates = events[1:]
        for event in updates:
            assert isinstance(event, TaskStatusUpdateEvent | TaskArtifactUpdateEvent)
            assert (event.task_id, event.context_id) == (task.id, task.context_id)
        stamps = [e.status.timestamp for e in updates if isinstance(e, TaskStatusUpdateEvent)]
        assert None not in stamps
        assert stamps == sorted(s for s in stamps if s is not None)
        assert min(s for s in stamps if s is not None) > T0

    run(main())


def test_every_event_is_stored_before_it_is_published() -> None:
    """DESIGN 4 (acknowledged means durable): fold → store → publish, event by event."""
    log: list[str] = []

    class RecordingStore(InMemoryTaskStore):
        async def create(
            self, scope: Scope, task: Task, *, configs: InlineConfigs = ()
        ) -> StoredTask:
            log.append(f"create:{task.status.state.name}")
            return await super().create(scope, task, configs=configs)

        async def save(
            self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
        ) -> StoredTask:
            log.append(f"save:{type(events[0]).__name__}")
            return await super().save(scope, task, events, expected_version)

    class RecordingBroker(EventBroker):
        async def publish(
            self,
            key: TaskKey,
            event: StreamEvent,
            *,
            final: bool = False,
            sequence: int | None = None,
        ) -> None:
            log.append(f"publish:{type(event).__name__}")
            await super().publish(key, event, final=final, sequence=sequence)

    service = AgentService(
        ScriptedExecutor(complete), make_card(), store=RecordingStore(), broker=RecordingBroker()
    )

    async def main() -> None:
        await service.send_message(ALICE, send("x"))
        assert log == [
            "create:SUBMITTED",
            "publish:Task",
            "save:TaskStatusUpdateEvent",
            "publish:TaskStatusUpdateEvent",
            "save:TaskArtifactUpdateEvent",
            "publish:TaskArtifactUpdateEvent",
            "save:TaskStatusUpdateEvent",
            "publish:TaskStatusUpdateEvent",
        ]

    run(main())


def test_a_task_snapshot_may_start_the_task() -> None:
    """A Task as the first event creates the task with its status, artifacts and metadata
    (history stays the user's message)."""

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(
            Task(
                id="",
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.WORKING),
                metadata={"origin": "snapshot"},
            )
        )
        await events.emit(status(TaskState.COMPLETED))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        assert kinds(events) == ["task:WORKING", "status:COMPLETED"]
        task = await get(service, as_task(events[0]).id)
        assert task.metadata == {"origin": "snapshot"}
        assert [text_of(m) for m in task.history] == ["x"]

    run(main())


@pytest.mark.parametrize(
    "snapshot",
    [
        Task(id="", context_id="", status=TaskStatus(state=TaskState.WORKING)),
        Task(id="someone-else", context_id="", status=TaskStatus(state=TaskState.WORKING)),
    ],
    ids=["after-creation", "other-id"],
)
def test_a_misplaced_task_snapshot_is_refused(snapshot: Task) -> None:
    """A snapshot only starts a task, and keeps its ids: else the emit raises."""
    refused: list[Exception] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        if snapshot.id == "":
            await events.emit(status(TaskState.WORKING))
        try:
            await events.emit(snapshot)
        except InvalidAgentResponseError as exc:
            refused.append(exc)
        await events.emit(status(TaskState.COMPLETED))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert len(refused) == 1
        assert task.status.state is TaskState.COMPLETED

    run(main())


def test_a_stream_ends_at_a_terminal_task_snapshot() -> None:
    """R-STREAM-4: the stream closes when the task is terminal, however it got there."""

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(Task(id="", context_id="", status=TaskStatus(state=TaskState.COMPLETED)))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        stream = service.send_streaming_message(ALICE, send("x"))
        events = await asyncio.wait_for(collect(stream), 0.3)
        assert kinds(events) == ["task:COMPLETED"]

    run(main())


def test_a_task_snapshot_status_is_stamped() -> None:
    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(Task(id="", context_id="", status=TaskStatus(state=TaskState.WORKING)))
        await events.emit(status(TaskState.COMPLETED))

    service = serve_executor(ScriptedExecutor(script))
    service.runner.clock = ticking_clock()

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        assert as_task(events[0]).status.timestamp is not None

    run(main())


# ----------------------------------------------------------------------------- direct replies


def test_a_direct_message_after_which_the_agent_emits_task_events_is_refused() -> None:
    """One direct Message answers the request; no task may follow it, nor a second one."""
    errors: list[str] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(agent_reply("only this"))
        for extra in (status(TaskState.WORKING), agent_reply("and this")):
            try:
                await events.emit(extra)
            except InvalidAgentResponseError as exc:
                errors.append(exc.message)

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        message = as_message(await service.send_message(ALICE, send("x", context_id="c")))
        assert text_of(message) == "only this"
        assert message.context_id == "c"
        await settle()
        assert len(errors) == 2
        assert (await service.list_tasks(ALICE, ListTasksRequest())).tasks == ()
        assert service.runner.live_count() == 0

    run(main())


def test_an_agent_message_inside_a_task_goes_to_history_not_to_streams() -> None:
    """R-STREAM-3: after the Task only update events are streamed; a Message the agent
    emits inside a task is kept in its history."""

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        await events.emit(agent_reply("by the way"))
        await events.emit(status(TaskState.COMPLETED))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        assert kinds(events) == ["task:SUBMITTED", "status:WORKING", "status:COMPLETED"]
        task = await get(service, as_task(events[0]).id)
        assert [text_of(m) for m in task.history] == ["x", "by the way"]

    run(main())


# ----------------------------------------------------------------------------- failures


def test_a_run_that_returns_while_working_fails_the_task() -> None:
    """A run ending with its task still active fails it, so nothing waits forever."""

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        assert kinds(events) == ["task:SUBMITTED", "status:WORKING", "status:FAILED"]
        task = await get(service, as_task(events[0]).id)
        assert task.status.state is TaskState.FAILED
        assert text_of(task.status.message) == "The agent stopped without finishing the task"

    run(main())


def test_a_run_that_returns_without_any_event_fails_a_created_task() -> None:
    async def script(context: RequestContext, events: EventSink) -> None:
        return None

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is TaskState.FAILED
        assert text_of(task.status.message) == "The agent stopped without answering"
        assert [text_of(m) for m in task.history] == ["x"]

    run(main())


@pytest.mark.parametrize("emit_first", [True, False], ids=["working", "before-any-event"])
def test_an_agent_that_raises_fails_the_task_with_a_generic_message(
    emit_first: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The client sees FAILED and a generic note: no exception text, no traceback; the
    exception is logged on the server."""

    async def script(context: RequestContext, events: EventSink) -> None:
        if emit_first:
            await events.emit(status(TaskState.WORKING))
        raise RuntimeError("password=hunter2 at /srv/secret.py")

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is TaskState.FAILED
        note = text_of(task.status.message)
        assert note == "The agent failed while working on this task"
        rendered = repr(task)
        for leak in ("hunter2", "Traceback", "RuntimeError", "secret.py"):
            assert leak not in rendered

    with caplog.at_level(logging.ERROR, logger="parley.server"):
        run(main())
    assert any(r.exc_info and "hunter2" in str(r.exc_info[1]) for r in caplog.records)


def test_an_a2a_error_from_the_agent_fails_the_task_with_its_message() -> None:
    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        raise InvalidParamsError("the input makes no sense")

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is TaskState.FAILED
        assert text_of(task.status.message) == "the input makes no sense"

    run(main())


def test_the_runners_failure_note_carries_the_task_ids() -> None:
    """R-CTX-17: server-sent messages carry the contextId (and the taskId of their task)."""

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        note = task.status.message
        assert note is not None
        assert (note.task_id, note.context_id) == (task.id, task.context_id)

    run(main())


def test_events_after_the_end_are_refused_and_the_task_stays_terminal() -> None:
    """An illegal event raises from the agent's emit; the stored task does not change."""
    refused: list[str] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.COMPLETED))
        for late in (status(TaskState.WORKING), artifact("late"), status(TaskState.FAILED)):
            try:
                await events.emit(late)
            except InvalidAgentResponseError as exc:
                refused.append(exc.message)

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        await settle()
        assert len(refused) == 3
        stored = await service.store.get(service.store_scope(ALICE), task.id)
        assert stored is not None
        assert stored.version == 2  # created, then completed: nothing else committed
        assert stored.task.status.state is TaskState.COMPLETED
        assert stored.task.artifacts == ()

    run(main())


def test_an_uncaught_illegal_event_leaves_the_task_terminal() -> None:
    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.REJECTED, "no"))
        await events.emit(status(TaskState.WORKING))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        await settle()
        stored = await get(service, task.id)
        assert stored.status.state is TaskState.REJECTED
        assert text_of(stored.status.message) == "no"
        assert service.runner.live_count() == 0

    run(main())


# ----------------------------------------------------------------------------- cancel


def test_cancel_stops_a_low_level_run_and_calls_the_executors_cancel() -> None:
    """R-TASK-10: the run is canceled (the executor sees CancelledError), then
    `executor.cancel` is called and the task moves to CANCELED."""
    saw_cancel = asyncio.Event()

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            saw_cancel.set()
            raise

    executor = ScriptedExecutor(script)
    service = serve_executor(executor)

    async def main() -> None:
        stream = service.send_streaming_message(ALICE, send("x"))
        task = as_task(await anext(stream))
        assert kinds([await anext(stream)]) == ["status:WORKING"]
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        assert canceled.status.state is TaskState.CANCELED
        assert saw_cancel.is_set()
        assert executor.canceled == [task.id]
        assert kinds(await collect(stream)) == ["status:CANCELED"]
        with pytest.raises(TaskNotCancelableError):
            await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        await settle()
        assert service.runner.live_count() == 0

    run(main())


def test_cancel_before_the_task_exists_is_not_found() -> None:
    """A task not yet created (the agent has not emitted) cannot be named, so cancel of
    its id is TaskNotFound; the run goes on."""
    gate = asyncio.Event()
    ids: list[str] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        ids.append(context.task_id)
        await gate.wait()
        await events.emit(status(TaskState.COMPLETED))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        pending = asyncio.ensure_future(service.send_message(ALICE, send("x")))
        while not ids:
            await asyncio.sleep(0.001)
        with pytest.raises(TaskNotFoundError):
            await service.cancel_task(ALICE, CancelTaskRequest(id=ids[0]))
        gate.set()
        assert as_task(await pending).status.state is TaskState.COMPLETED

    run(main())


def test_cancel_of_a_non_blocking_task_whose_agent_has_not_started() -> None:
    """The eagerly created task can be canceled before the agent ran at all."""
    ran: list[bool] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        ran.append(True)
        await events.emit(status(TaskState.COMPLETED))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x", return_immediately=True)))
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        assert canceled.status.state is TaskState.CANCELED
        assert ran == []
        await settle()
        assert (await get(service, task.id)).status.state is TaskState.CANCELED

    run(main())


def test_cancel_before_the_agent_started_leaves_no_live_task() -> None:
    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.COMPLETED))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x", return_immediately=True)))
        await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        await settle()
        assert service.runner.live_count() == 0

    run(main())


# ----------------------------------------------------------------------------- ownership


def test_a_follow_up_waits_for_the_running_run() -> None:
    """One run at a time per task: a follow-up sent while the agent still works on the
    previous message waits for that run, then is checked against the new state."""
    gate = asyncio.Event()

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        await gate.wait()
        await events.emit(status(TaskState.COMPLETED))

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        follow_up = asyncio.ensure_future(service.send_message(ALICE, send("y", task_id=task.id)))
        await settle()
        assert not follow_up.done()
        gate.set()
        with pytest.raises(UnsupportedOperationError):
            await follow_up

    run(main())


def test_shutdown_cancels_every_run() -> None:
    canceled: list[str] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            canceled.append(context.task_id)
            raise

    service = serve_executor(ScriptedExecutor(script))

    async def main() -> None:
        first = as_task(await service.send_message(ALICE, send("a", return_immediately=True)))
        second = as_task(await service.send_message(ALICE, send("b", return_immediately=True)))
        await wait_for_state(service, first.id, TaskState.WORKING)
        await wait_for_state(service, second.id, TaskState.WORKING)
        assert service.runner.live_count() == 2
        await service.shutdown()
        assert sorted(canceled) == sorted([first.id, second.id])
        assert service.runner.live_count() == 0

    run(main())
