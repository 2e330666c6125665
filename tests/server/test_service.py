"""`AgentService`, the binding-agnostic request handler, driven end to end through an
authoring-API agent: sending (blocking, non-blocking, direct replies, historyLength),
streaming, multi-turn follow-ups, cancel, subscribe, capability gating, scoping,
ListTasks and push-config CRUD (REFERENCE §7, §8, §9.1, §13)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable

import pytest
from msgspec.structs import replace

from parley.model import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.errors import (
    A2AError,
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.server.agent import Agent, FunctionExecutor
from parley.server.broker import EventStream
from parley.server.context import CallContext
from parley.server.service import AgentService
from parley.server.stores.base import Scope, StoredTask, TaskKey
from parley.server.stores.memory import InMemoryTaskStore
from parley.server.task_context import TaskContext
from tests.server.support import (
    ALICE,
    ALICE_OTHER_TENANT,
    BOB,
    as_message,
    as_task,
    collect,
    get,
    kinds,
    run,
    send,
    serve,
    settle,
    text_of,
    ticking_clock,
    wait_for_state,
)

HOOK = "https://client.example.com/hook"


def echo_agent(*, streaming: bool = True, push_notifications: bool = False) -> Agent:
    agent = Agent("Echo", streaming=streaming, push_notifications=push_notifications)

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    return agent


def asking_agent(*, push_notifications: bool = False) -> tuple[Agent, list[str]]:
    """An agent that asks for a name, then greets it; records each invocation."""
    agent = Agent("Greeter", push_notifications=push_notifications)
    calls: list[str] = []

    @agent.skill()
    async def greet(task: TaskContext) -> str:
        calls.append(task.text)
        reply = await task.ask("What is your name?")
        return f"Hello, {text_of(reply)}!"

    return agent, calls


async def aclose(stream: AsyncIterator[StreamEvent]) -> None:
    assert isinstance(stream, EventStream)
    await stream.aclose()


def subscribe(
    service: AgentService, task_id: str, ctx: CallContext = ALICE
) -> AsyncIterator[StreamEvent]:
    return service.subscribe_to_task(ctx, SubscribeToTaskRequest(id=task_id))


# ----------------------------------------------------------------------------- sending


def test_blocking_send_returns_the_completed_task() -> None:
    """R-SEND-2/3, R-CTX-1/8/9: the blocking answer is the final task, with its artifacts,
    a fresh task id and the generated context id."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hello")))
        assert task.status.state is TaskState.COMPLETED
        assert task.id
        assert task.context_id
        assert task.id != task.context_id
        assert [text_of(m) for m in task.history] == ["hello"]
        assert task.history[0].task_id == task.id
        assert task.history[0].context_id == task.context_id
        assert task.artifacts[0].parts == (TextPart(text="hello"),)
        assert await get(service, task.id) == task
        other = as_task(await service.send_message(ALICE, send("again")))
        assert other.id != task.id
        assert other.context_id != task.context_id
        await settle()
        assert service.runner.live_count() == 0

    run(main())


def test_client_context_id_is_kept() -> None:
    """R-CTX-3: a client-chosen contextId is used, not replaced."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x", context_id="ctx-1")))
        assert task.context_id == "ctx-1"

    run(main())


@pytest.mark.parametrize(
    ("move", "state"),
    [("ask", TaskState.INPUT_REQUIRED), ("auth", TaskState.AUTH_REQUIRED)],
)
def test_blocking_send_returns_at_an_interrupted_state(move: str, state: TaskState) -> None:
    """R-SEND-2: a blocking send returns once the task is interrupted, not only terminal."""
    agent = Agent("Interrupting")

    @agent.skill()
    async def interrupt(task: TaskContext) -> str:
        if move == "ask":
            await task.ask("Which one?")
        else:
            await task.auth_required("Please sign in")
        return "done"

    service, executor = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go")))
        assert task.status.state is state
        assert text_of(task.status.message) in ("Which one?", "Please sign in")
        assert executor.session_count() == 1
        await service.shutdown()
        await executor.aclose()
        assert executor.session_count() == 0

    run(main())


def test_blocking_send_waits_for_the_agent() -> None:
    """R-SEND-2: no answer while the agent is still working."""
    agent = Agent("Gated")
    gate_holder: list[asyncio.Event] = []

    @agent.skill()
    async def gated(task: TaskContext) -> str:
        await task.update("working")
        await gate_holder[0].wait()
        return "done"

    service, _ = serve(agent)

    async def main() -> None:
        gate_holder.append(asyncio.Event())
        pending = asyncio.ensure_future(service.send_message(ALICE, send("go")))
        await settle()
        assert not pending.done()
        listed = await service.list_tasks(ALICE, ListTasksRequest())
        assert [t.status.state for t in listed.tasks] == [TaskState.WORKING]
        gate_holder[0].set()
        task = as_task(await pending)
        assert task.status.state is TaskState.COMPLETED

    run(main())


def test_non_blocking_send_returns_the_created_task_at_once() -> None:
    """R-SEND-4: with returnImmediately the created task comes back at once (SUBMITTED)
    and the agent keeps working after the response."""
    agent = Agent("Gated")
    started = asyncio.Event()
    gate = asyncio.Event()

    @agent.skill()
    async def gated(task: TaskContext) -> str:
        started.set()
        await gate.wait()
        return "late result"

    service, _ = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        assert task.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
        assert not started.is_set()  # answered before the agent even ran
        assert (await get(service, task.id)).status.state is TaskState.SUBMITTED
        await asyncio.wait_for(started.wait(), 1)
        gate.set()
        done = await wait_for_state(service, task.id, TaskState.COMPLETED)
        assert done.artifacts[0].parts == (TextPart(text="late result"),)
        await settle()
        assert service.runner.live_count() == 0

    run(main())


def test_direct_message_reply_leaves_no_task() -> None:
    """R-SEND-1, R-CTX-17: a direct reply is a Message with the context id and no task id;
    no task is stored."""
    agent = Agent("Replier")

    @agent.skill()
    async def reply(task: TaskContext) -> Message:
        return task.reply(f"you said {task.text}")

    service, executor = serve(agent)

    async def main() -> None:
        message = as_message(await service.send_message(ALICE, send("hi", context_id="c-7")))
        assert text_of(message) == "you said hi"
        assert message.context_id == "c-7"
        assert message.task_id == ""
        listed = await service.list_tasks(ALICE, ListTasksRequest())
        assert listed.tasks == ()
        assert isinstance(service.store, InMemoryTaskStore)
        assert len(service.store) == 0
        await settle()
        assert service.runner.live_count() == 0
        assert executor.session_count() == 0

    run(main())


def history_agent() -> Agent:
    """Three history messages at the end: the user's, then two progress notes."""
    agent = Agent("Chatty")

    @agent.skill()
    async def chatty(task: TaskContext) -> str:
        await task.update("one")
        await task.update("two")
        return "done"

    return agent


@pytest.mark.parametrize(
    ("history_length", "expected"),
    [
        (None, ["go", "one", "two"]),
        (0, []),
        (1, ["two"]),
        (2, ["one", "two"]),
        (9, ["go", "one", "two"]),
    ],
)
def test_history_length_of_the_send_result(history_length: int | None, expected: list[str]) -> None:
    """R-TASK-1/2, R-SEND-5: historyLength 0 omits history, n keeps the n most recent,
    unset keeps everything."""
    service, _ = serve(history_agent())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", history_length=history_length)))
        assert [text_of(m) for m in task.history] == expected
        stored = await get(service, task.id)
        assert len(stored.history) == 3  # trimming shapes the answer, not the task
        got = await service.get_task(
            ALICE, GetTaskRequest(id=task.id, history_length=history_length)
        )
        assert [text_of(m) for m in got.history] == expected

    run(main())


def test_negative_history_length_is_invalid() -> None:
    """REFERENCE §8.4: a negative historyLength is InvalidParams; no task is created."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        with pytest.raises(InvalidParamsError):
            await service.send_message(ALICE, send("x", history_length=-1))
        with pytest.raises(InvalidParamsError):
            await service.get_task(ALICE, GetTaskRequest(id="t", history_length=-1))
        assert (await service.list_tasks(ALICE, ListTasksRequest())).tasks == ()

    run(main())


# ----------------------------------------------------------------------------- streaming


def counting_agent(chunks: int = 3) -> Agent:
    agent = Agent("Counter")

    @agent.skill()
    async def count(task: TaskContext) -> AsyncIterator[str]:
        for number in range(1, chunks + 1):
            yield f"{number} "

    return agent


def test_stream_starts_with_the_task_and_ends_at_completion() -> None:
    """R-STREAM-3/4/6: Task first, then status and artifact updates in order, closed at
    the terminal state; chunks of one artifact carry append/lastChunk correctly."""
    service, _ = serve(counting_agent(3))

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("3")))
        assert kinds(events) == [
            "task:SUBMITTED",
            "status:WORKING",
            "artifact",
            "artifact",
            "artifact",
            "status:COMPLETED",
        ]
        task = as_task(events[0])
        chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert len({c.artifact.artifact_id for c in chunks}) == 1
        assert [(c.append, c.last_chunk) for c in chunks] == [
            (False, False),
            (True, False),
            (True, True),
        ]
        for event in events[1:]:
            assert isinstance(event, TaskStatusUpdateEvent | TaskArtifactUpdateEvent)
            assert (event.task_id, event.context_id) == (task.id, task.context_id)
        stored = await get(service, task.id)
        assert len(stored.artifacts) == 1
        assert [p.text for p in stored.artifacts[0].parts if isinstance(p, TextPart)] == [
            "1 ",
            "2 ",
            "3 ",
        ]
        await settle()
        assert service.broker.subscriber_count() == 0
        assert service.runner.live_count() == 0

    run(main())


def test_stream_of_a_single_chunk_is_first_and_last() -> None:
    service, _ = serve(counting_agent(1))

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("1")))
        chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert [(c.append, c.last_chunk) for c in chunks] == [(False, True)]

    run(main())


def test_stream_of_a_direct_reply_is_one_message() -> None:
    """R-STREAM-2: a Message-only stream holds exactly one Message, then closes."""
    agent = Agent("Replier")

    @agent.skill()
    async def reply(task: TaskContext) -> Message:
        return task.reply("just this")

    service, _ = serve(agent)

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("hi")))
        assert kinds(events) == ["message"]
        assert text_of(as_message(events[0])) == "just this"
        await settle()
        assert service.broker.subscriber_count() == 0
        assert service.runner.live_count() == 0

    run(main())


def test_stream_gives_progress_as_it_happens() -> None:
    """R-STREAM-5: events reach the client while the agent is still working."""
    agent = Agent("Gated")
    gate = asyncio.Event()

    @agent.skill()
    async def gated(task: TaskContext) -> str:
        await task.update("halfway")
        await gate.wait()
        return "done"

    service, _ = serve(agent)

    async def main() -> None:
        stream = service.send_streaming_message(ALICE, send("go"))
        first = as_task(await anext(stream))
        assert first.status.state is TaskState.SUBMITTED
        progress = await anext(stream)
        assert isinstance(progress, TaskStatusUpdateEvent)
        assert text_of(progress.status.message) == "halfway"
        gate.set()
        rest = await collect(stream)
        assert kinds(rest) == ["artifact", "status:COMPLETED"]

    run(main())


def test_stream_ends_at_input_required_and_the_follow_up_stream_resumes() -> None:
    """R-STREAM-11 / REFERENCE §7.2: the stream closes at INPUT_REQUIRED; a follow-up
    stream starts with the task snapshot and runs to completion."""
    agent, calls = asking_agent()
    service, executor = serve(agent)

    async def main() -> None:
        first = await collect(service.send_streaming_message(ALICE, send("hi")))
        assert kinds(first) == ["task:SUBMITTED", "status:INPUT_REQUIRED"]
        task = as_task(first[0])
        assert executor.session_count() == 1
        second = await collect(service.send_streaming_message(ALICE, send("Ada", task_id=task.id)))
        assert kinds(second) == [
            "task:INPUT_REQUIRED",
            "status:WORKING",
            "artifact",
            "status:COMPLETED",
        ]
        snapshot = as_task(second[0])
        assert text_of(snapshot.history[-1]) == "Ada"
        chunk = second[2]
        assert isinstance(chunk, TaskArtifactUpdateEvent)
        assert chunk.artifact.parts == (TextPart(text="Hello, Ada!"),)
        assert calls == ["hi"]
        await settle()
        assert executor.session_count() == 0

    run(main())


def test_stream_with_an_inline_push_config_starts_with_one_task() -> None:
    """R-STREAM-3: a task stream is one Task, then only update events."""
    service, _ = serve(echo_agent(push_notifications=True))

    async def main() -> None:
        request = send("hi", push=TaskPushNotificationConfig(url=HOOK))
        events = await collect(service.send_streaming_message(ALICE, request))
        assert kinds(events) == ["task:SUBMITTED", "artifact", "status:COMPLETED"]

    run(main())


def test_stream_history_length_applies_to_the_first_task() -> None:
    """R-SEND-5, R-TASK-2: historyLength bounds the history of every Task returned."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("hi", history_length=0)))
        assert as_task(events[0]).history == ()

    run(main())


# ----------------------------------------------------------------------------- multi-turn


def test_follow_up_inherits_the_context_and_resumes_the_same_coroutine() -> None:
    """R-CTX-12: a follow-up naming only the task gets the task's context; the suspended
    function resumes (it was called once) and completes."""
    agent, calls = asking_agent()
    service, executor = serve(agent)

    async def main() -> None:
        asked = as_task(await service.send_message(ALICE, send("hi")))
        assert asked.status.state is TaskState.INPUT_REQUIRED
        assert executor.session_count() == 1
        done = as_task(await service.send_message(ALICE, send("Ada", task_id=asked.id)))
        assert done.status.state is TaskState.COMPLETED
        assert done.id == asked.id
        assert done.context_id == asked.context_id
        assert done.artifacts[0].parts == (TextPart(text="Hello, Ada!"),)
        assert calls == ["hi"]
        assert [text_of(m) for m in done.history] == ["hi", "What is your name?", "Ada"]
        assert {m.context_id for m in done.history} == {asked.context_id}
        await settle()
        assert executor.session_count() == 0
        assert service.runner.live_count() == 0

    run(main())


def test_follow_up_with_the_same_context_is_accepted() -> None:
    agent, _ = asking_agent()
    service, _ = serve(agent)

    async def main() -> None:
        asked = as_task(await service.send_message(ALICE, send("hi")))
        request = send("Bo", task_id=asked.id, context_id=asked.context_id)
        done = as_task(await service.send_message(ALICE, request))
        assert done.status.state is TaskState.COMPLETED

    run(main())


def test_follow_up_with_another_context_is_rejected() -> None:
    """R-CTX-13: a contextId other than the task's is InvalidParams; the task waits on."""
    agent, _ = asking_agent()
    service, executor = serve(agent)

    async def main() -> None:
        asked = as_task(await service.send_message(ALICE, send("hi")))
        with pytest.raises(InvalidParamsError) as caught:
            await service.send_message(ALICE, send("Ada", task_id=asked.id, context_id="other"))
        assert caught.value.field_violations[0].field == "message.contextId"
        assert await get(service, asked.id) == asked
        assert executor.session_count() == 1
        assert service.runner.live_count() == 0
        done = as_task(await service.send_message(ALICE, send("Ada", task_id=asked.id)))
        assert done.status.state is TaskState.COMPLETED

    run(main())


def test_message_to_a_terminal_task_is_unsupported() -> None:
    """R-SEND-8: a terminal task takes no more messages, blocking or streaming."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        with pytest.raises(UnsupportedOperationError):
            await service.send_message(ALICE, send("more", task_id=task.id))
        with pytest.raises(UnsupportedOperationError):
            await collect(service.send_streaming_message(ALICE, send("more", task_id=task.id)))
        assert await get(service, task.id) == task
        assert service.runner.live_count() == 0
        assert service.broker.subscriber_count() == 0

    run(main())


def test_message_to_an_unknown_task_is_not_found() -> None:
    """R-CTX-11, REFERENCE §8.2: an unknown (or client-invented) taskId is TaskNotFound."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        with pytest.raises(TaskNotFoundError):
            await service.send_message(ALICE, send("hi", task_id="no-such-task"))
        with pytest.raises(TaskNotFoundError):
            await collect(service.send_streaming_message(ALICE, send("hi", task_id="nope")))
        assert (await service.list_tasks(ALICE, ListTasksRequest())).tasks == ()
        assert service.runner.live_count() == 0

    run(main())


class YieldingTaskStore(InMemoryTaskStore):
    """An in-memory store that yields to the loop on every call, as any I/O store does."""

    async def get(
        self, scope: Scope, task_id: str, *, history_length: int | None = None
    ) -> StoredTask | None:
        await asyncio.sleep(0)
        return await super().get(scope, task_id, history_length=history_length)


def test_concurrent_follow_ups_do_not_run_the_agent_twice() -> None:
    """One run at a time per task (service._follow_up): the second follow-up waits for the
    first run, then finds the task completed (R-SEND-8)."""
    agent, calls = asking_agent()
    executor = agent.executor()
    service = AgentService(executor, agent.card("http://test"), store=YieldingTaskStore())

    async def main() -> None:
        asked = as_task(await service.send_message(ALICE, send("hi")))
        results = await asyncio.gather(
            service.send_message(ALICE, send("Ada", task_id=asked.id)),
            service.send_message(ALICE, send("Bo", task_id=asked.id)),
            return_exceptions=True,
        )
        assert calls == ["hi"]
        first = results[0]
        assert isinstance(first, Task)
        assert first.status.state is TaskState.COMPLETED
        assert isinstance(results[1], UnsupportedOperationError)

    run(main())


# ----------------------------------------------------------------------------- cancel


def cancelable_agent() -> tuple[Agent, asyncio.Event, asyncio.Event]:
    """An agent that blocks on a gate; `saw_cancel` is set if it is canceled there."""
    agent = Agent("Blocking")
    started = asyncio.Event()
    saw_cancel = asyncio.Event()

    @agent.skill()
    async def block(task: TaskContext) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            saw_cancel.set()
            raise
        return "never"

    return agent, started, saw_cancel


def test_cancel_really_stops_the_agent() -> None:
    """R-TASK-10: cancel stops the running agent (it sees CancelledError), the task is
    CANCELED, and a second cancel is TaskNotCancelable."""
    agent, started, saw_cancel = cancelable_agent()
    service, executor = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await asyncio.wait_for(started.wait(), 1)
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        assert canceled.status.state is TaskState.CANCELED
        assert saw_cancel.is_set()
        assert (await get(service, task.id)).status.state is TaskState.CANCELED
        assert executor.session_count() == 0
        assert service.runner.live_count() == 0
        with pytest.raises(TaskNotCancelableError):
            await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))

    run(main())


def test_cancel_answers_a_waiting_blocking_send() -> None:
    """R-SEND-2, §8.6: a blocking send waiting on the agent returns the CANCELED task."""
    agent = Agent("Working")

    @agent.skill()
    async def work(task: TaskContext) -> str:
        await task.update("on it")
        await asyncio.Event().wait()
        return "never"

    service, _ = serve(agent)

    async def main() -> None:
        pending = asyncio.ensure_future(service.send_message(ALICE, send("go")))
        listed = await asyncio.wait_for(_first_task(service), 1)
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=listed.id))
        answer = as_task(await asyncio.wait_for(pending, 1))
        assert answer.status.state is TaskState.CANCELED
        assert canceled.status.state is TaskState.CANCELED

    run(main())


async def _first_task(service: AgentService, ctx: CallContext = ALICE) -> Task:
    while True:
        listed = await service.list_tasks(ctx, ListTasksRequest())
        if listed.tasks:
            return listed.tasks[0]
        await asyncio.sleep(0.001)


def test_cancel_of_a_suspended_task_closes_its_session() -> None:
    """A task waiting in INPUT_REQUIRED has no run, only a suspended function: cancel
    closes it (session_count drops, the coroutine sees CancelledError)."""
    agent = Agent("Asker")
    saw_cancel: list[bool] = []

    @agent.skill()
    async def ask(task: TaskContext) -> str:
        try:
            await task.ask("Really?")
        except asyncio.CancelledError:
            saw_cancel.append(True)
            raise
        return "yes"

    service, executor = serve(agent)

    async def main() -> None:
        asked = as_task(await service.send_message(ALICE, send("hi")))
        await settle()  # the run is over: only the suspended session is left
        assert service.runner.live_count() == 0
        assert executor.session_count() == 1
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=asked.id))
        assert canceled.status.state is TaskState.CANCELED
        assert executor.session_count() == 0
        assert saw_cancel == [True]
        with pytest.raises(UnsupportedOperationError):
            await service.send_message(ALICE, send("yes", task_id=asked.id))

    run(main())


def test_cancel_of_a_completed_or_unknown_task() -> None:
    """R-TASK-10: terminal ⇒ TaskNotCancelable, unknown ⇒ TaskNotFound."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        with pytest.raises(TaskNotCancelableError):
            await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        with pytest.raises(TaskNotFoundError):
            await service.cancel_task(ALICE, CancelTaskRequest(id="nope"))
        await settle()
        assert service.runner.live_count() == 0

    run(main())


def test_cancel_ends_open_streams() -> None:
    """R-SUB-1, §8.6: the CANCELED transition reaches open streams, which then close."""
    agent, started, _ = cancelable_agent()
    service, _ = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        stream = subscribe(service, task.id)
        assert as_task(await anext(stream)).id == task.id
        await asyncio.wait_for(started.wait(), 1)
        await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        assert kinds(await collect(stream)) == ["status:CANCELED"]
        assert service.broker.subscriber_count() == 0

    run(main())


# ----------------------------------------------------------------------------- subscribe


def stepping_agent(gate: asyncio.Event) -> Agent:
    """WORKING at once, then (after the gate) a note, an artifact and completion."""
    agent = Agent("Stepper")

    @agent.skill()
    async def step(task: TaskContext) -> str:
        await task.update("started")
        await gate.wait()
        await task.update("almost")
        return "finished"

    return agent


def test_subscribe_starts_with_the_current_task_then_live_events() -> None:
    """R-SUB-2: the first event is the current Task; R-SUB-1: the stream ends at the
    terminal state."""
    gate = asyncio.Event()
    service, _ = serve(stepping_agent(gate))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        stream = subscribe(service, task.id)
        current = as_task(await anext(stream))
        assert current.status.state is TaskState.WORKING
        assert text_of(current.status.message) == "started"
        assert current == await get(service, task.id)
        gate.set()
        assert kinds(await collect(stream)) == ["status:WORKING", "artifact", "status:COMPLETED"]
        await settle()
        assert service.broker.subscriber_count() == 0
        assert service.runner.live_count() == 0

    run(main())


def test_subscribe_to_a_terminal_task_is_unsupported() -> None:
    """R-SUB-3."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        with pytest.raises(UnsupportedOperationError):
            await anext(subscribe(service, task.id))
        await settle()
        assert service.runner.live_count() == 0
        assert service.broker.subscriber_count() == 0

    run(main())


def test_subscribe_to_an_unknown_task_is_not_found() -> None:
    """R-SUB-4."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        with pytest.raises(TaskNotFoundError):
            await anext(subscribe(service, "nope"))
        assert service.runner.live_count() == 0

    run(main())


def test_two_subscribers_receive_identical_ordered_events() -> None:
    """R-STREAM-8/9: every event goes to every stream of the task, in the same order."""
    gate = asyncio.Event()
    service, _ = serve(stepping_agent(gate))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        first, second = subscribe(service, task.id), subscribe(service, task.id)
        heads = [await anext(first), await anext(second)]
        assert heads[0] == heads[1]
        assert service.broker.subscriber_count() == 2
        gate.set()
        one, two = await asyncio.gather(collect(first), collect(second))
        assert one == two
        assert kinds(one) == ["status:WORKING", "artifact", "status:COMPLETED"]

    run(main())


def test_a_closed_subscriber_leaves_nothing_behind_and_spares_the_other() -> None:
    """R-STREAM-10: closing one stream mid-way does not affect the other; once the task
    ends there is no subscriber, live task or session left."""
    gate = asyncio.Event()
    service, executor = serve(stepping_agent(gate))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        leaving, staying = subscribe(service, task.id), subscribe(service, task.id)
        await anext(leaving)
        await anext(staying)
        key = TaskKey(*service.store_scope(ALICE), task.id)
        assert service.broker.subscriber_count(key) == 2
        await aclose(leaving)
        assert service.broker.subscriber_count(key) == 1
        gate.set()
        assert kinds(await collect(staying)) == ["status:WORKING", "artifact", "status:COMPLETED"]
        await settle()
        assert service.broker.subscriber_count() == 0
        assert service.runner.live_count() == 0
        assert executor.session_count() == 0
        assert (await get(service, task.id)).status.state is TaskState.COMPLETED

    run(main())


def test_a_closed_send_stream_does_not_stop_the_task() -> None:
    """§7.4: the task's life is independent of its streams (disconnect ≠ cancel)."""
    gate = asyncio.Event()
    service, executor = serve(stepping_agent(gate))

    async def main() -> None:
        stream = service.send_streaming_message(ALICE, send("go"))
        task = as_task(await anext(stream))
        await aclose(stream)
        gate.set()
        done = await wait_for_state(service, task.id, TaskState.COMPLETED)
        assert done.artifacts
        await settle()
        assert service.broker.subscriber_count() == 0
        assert service.runner.live_count() == 0
        assert executor.session_count() == 0

    run(main())


def test_a_slow_subscriber_is_dropped_while_the_fast_one_and_the_agent_go_on() -> None:
    """A subscriber that falls `buffer_size` events behind ends with InternalError; the
    other subscriber and the agent are not held up."""
    agent = Agent("Paced")
    proceed = asyncio.Event()

    @agent.skill()
    async def paced(task: TaskContext) -> str:
        for step in range(5):
            await proceed.wait()
            proceed.clear()
            await task.update(f"step {step}")
        return "done"

    service, _ = serve(agent, buffer_size=3)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        fast, slow = subscribe(service, task.id), subscribe(service, task.id)
        await anext(fast)
        await anext(slow)
        for step in range(5):
            proceed.set()
            event = await anext(fast)
            assert isinstance(event, TaskStatusUpdateEvent)
            assert text_of(event.status.message) == f"step {step}"
            # The slow one holds steps 0-2 (its whole buffer) and is dropped at step 3.
            if step < 4:
                expected = [2, 2, 2, 1][step]
                assert (
                    service.broker.subscriber_count(TaskKey(*service.store_scope(ALICE), task.id))
                    == expected
                )
        assert kinds(await collect(fast)) == ["artifact", "status:COMPLETED"]
        with pytest.raises(InternalError) as caught:
            await anext(slow)
        assert caught.value.metadata == {"taskId": task.id}
        assert (await get(service, task.id)).status.state is TaskState.COMPLETED
        await settle()
        assert service.broker.subscriber_count() == 0
        assert service.runner.live_count() == 0

    run(main())


# ----------------------------------------------------------------------------- capabilities


def test_streaming_operations_need_the_streaming_capability() -> None:
    """R-STREAM-12, R-CAP-1: without capabilities.streaming both streaming operations are
    UnsupportedOperation, and nothing is started."""
    service, _ = serve(echo_agent(streaming=False))

    async def main() -> None:
        with pytest.raises(UnsupportedOperationError):
            await anext(service.send_streaming_message(ALICE, send("hi")))
        task = as_task(await service.send_message(ALICE, send("hi", return_immediately=True)))
        with pytest.raises(UnsupportedOperationError):
            await anext(subscribe(service, task.id))
        with pytest.raises(UnsupportedOperationError):
            await anext(subscribe(service, "unknown"))
        listed = await service.list_tasks(ALICE, ListTasksRequest())
        assert [t.id for t in listed.tasks] == [task.id]

    run(main())


def test_push_operations_need_the_push_capability() -> None:
    """R-PUSH-8: without capabilities.pushNotifications all four operations, and an inline
    config on SendMessage, are PushNotificationNotSupported."""
    service, _ = serve(echo_agent(push_notifications=False))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        config = TaskPushNotificationConfig(url=HOOK, task_id=task.id)
        with pytest.raises(PushNotificationNotSupportedError):
            await service.create_task_push_notification_config(ALICE, config)
        with pytest.raises(PushNotificationNotSupportedError):
            await service.get_task_push_notification_config(
                ALICE, GetTaskPushNotificationConfigRequest(task_id=task.id, id=task.id)
            )
        with pytest.raises(PushNotificationNotSupportedError):
            await service.list_task_push_notification_configs(
                ALICE, ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
        with pytest.raises(PushNotificationNotSupportedError):
            await service.delete_task_push_notification_config(
                ALICE, DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=task.id)
            )
        with pytest.raises(PushNotificationNotSupportedError):
            await service.send_message(ALICE, send("hi", push=TaskPushNotificationConfig(url=HOOK)))
        assert len((await service.list_tasks(ALICE, ListTasksRequest())).tasks) == 1

    run(main())


def with_extended(card: AgentCard, flag: bool | None) -> AgentCard:
    return replace(card, capabilities=replace(card.capabilities, extended_agent_card=flag))


@pytest.mark.parametrize("declared", [None, False])
def test_extended_card_not_declared_is_unsupported(declared: bool | None) -> None:
    """R-XCARD-10: the capability false or absent ⇒ UnsupportedOperation, even when an
    extended card is configured."""
    agent = echo_agent()
    card = with_extended(agent.card("http://test"), declared)
    extended = agent.card("http://test", name="Extended")
    service = AgentService(agent.executor(), card, extended_card=extended)

    async def main() -> None:
        with pytest.raises(UnsupportedOperationError):
            await service.get_extended_agent_card(ALICE, GetExtendedAgentCardRequest())

    run(main())


def test_extended_card_declared_but_not_configured() -> None:
    """R-XCARD-11: declared but no card configured ⇒ ExtendedAgentCardNotConfigured;
    once configured it is returned."""
    agent = echo_agent()
    card = agent.card("http://test")
    extended = agent.card("http://test", name="Echo (extended)")
    service = AgentService(agent.executor(), with_extended(card, True))

    async def main() -> None:
        with pytest.raises(ExtendedAgentCardNotConfiguredError):
            await service.get_extended_agent_card(ALICE, GetExtendedAgentCardRequest())
        service.extended_card = extended
        assert await service.get_extended_agent_card(ALICE, GetExtendedAgentCardRequest()) == (
            extended
        )

    run(main())


# ----------------------------------------------------------------------------- scoping


@pytest.mark.parametrize("other", [BOB, ALICE_OTHER_TENANT], ids=["other-caller", "other-tenant"])
def test_a_task_is_invisible_outside_its_scope(other: CallContext) -> None:
    """R-SCOPE-1..8, R-TASK-5/8, R-ERR-8/13: another caller (or the same caller in another
    tenant) gets TaskNotFound from every operation on the task, indistinguishable from a
    missing task, and cannot disturb it."""
    agent, _ = asking_agent(push_notifications=True)
    service, executor = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        config = TaskPushNotificationConfig(url=HOOK, task_id=task.id)
        await service.create_task_push_notification_config(ALICE, config)
        missing = TaskNotFoundError(f"Task {task.id} not found", metadata={"taskId": task.id})

        async def refused(call: Awaitable[object]) -> None:
            with pytest.raises(TaskNotFoundError) as caught:
                await call
            assert caught.value == missing

        await refused(service.get_task(other, GetTaskRequest(id=task.id)))
        await refused(service.cancel_task(other, CancelTaskRequest(id=task.id)))
        await refused(service.send_message(other, send("Eve", task_id=task.id)))
        await refused(anext(service.send_streaming_message(other, send("Eve", task_id=task.id))))
        await refused(anext(subscribe(service, task.id, other)))
        await refused(service.create_task_push_notification_config(other, config))
        await refused(
            service.get_task_push_notification_config(
                other, GetTaskPushNotificationConfigRequest(task_id=task.id, id=task.id)
            )
        )
        await refused(
            service.list_task_push_notification_configs(
                other, ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
        )
        await refused(
            service.delete_task_push_notification_config(
                other, DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=task.id)
            )
        )
        listed = await service.list_tasks(other, ListTasksRequest())
        assert listed.tasks == ()
        assert listed.total_size == 0
        assert (
            await service.list_tasks(other, ListTasksRequest(context_id=task.context_id))
        ).tasks == ()
        # Alice's task is untouched: still waiting, with its session and push config.
        assert await get(service, task.id) == task
        await settle()
        assert executor.session_count() == 1
        assert service.runner.live_count() == 0
        configs = await service.list_task_push_notification_configs(
            ALICE, ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert len(configs.configs) == 1
        done = as_task(await service.send_message(ALICE, send("Ada", task_id=task.id)))
        assert done.status.state is TaskState.COMPLETED

    run(main())


# ----------------------------------------------------------------------------- ListTasks


def routing_agent() -> Agent:
    """Completes with the text, except "ask" (INPUT_REQUIRED) and "no" (REJECTED)."""
    agent = Agent("Router")

    @agent.skill()
    async def route(task: TaskContext) -> str:
        if task.text == "ask":
            await task.ask("more?")
        if task.text == "no":
            task.reject("no")
        return task.text

    return agent


async def seed(service: AgentService, texts: list[tuple[str, str]]) -> list[Task]:
    """One task per (text, context id), created in order (so timestamps increase)."""
    return [
        as_task(await service.send_message(ALICE, send(text, context_id=context)))
        for text, context in texts
    ]


def test_list_orders_by_status_timestamp_descending_and_filters() -> None:
    """R-TASK-7: newest status first; §8.5 filters contextId, status and
    statusTimestampAfter (≥); R-TASK-12: every response field is filled."""
    service, _ = serve(routing_agent(), clock=ticking_clock())

    async def main() -> None:
        tasks = await seed(
            service,
            [("a", "c1"), ("ask", "c1"), ("b", "c2"), ("no", "c2"), ("c", "c1")],
        )
        everything = await service.list_tasks(ALICE, ListTasksRequest())
        assert [t.id for t in everything.tasks] == [t.id for t in reversed(tasks)]
        assert everything.next_page_token == ""
        assert everything.page_size == 50
        assert everything.total_size == 5

        in_c1 = await service.list_tasks(ALICE, ListTasksRequest(context_id="c1"))
        assert [t.id for t in in_c1.tasks] == [tasks[4].id, tasks[1].id, tasks[0].id]
        assert in_c1.total_size == 3

        completed = await service.list_tasks(ALICE, ListTasksRequest(status=TaskState.COMPLETED))
        assert [t.id for t in completed.tasks] == [tasks[4].id, tasks[2].id, tasks[0].id]
        waiting = await service.list_tasks(ALICE, ListTasksRequest(status=TaskState.INPUT_REQUIRED))
        assert [t.id for t in waiting.tasks] == [tasks[1].id]
        both = ListTasksRequest(context_id="c2", status=TaskState.REJECTED)
        assert [t.id for t in (await service.list_tasks(ALICE, both)).tasks] == [tasks[3].id]

        since = tasks[2].status.timestamp
        assert since is not None
        recent = await service.list_tasks(ALICE, ListTasksRequest(status_timestamp_after=since))
        assert [t.id for t in recent.tasks] == [tasks[4].id, tasks[3].id, tasks[2].id]

    run(main())


def test_list_pages_with_tokens() -> None:
    """R-TASK-4/6: cursor paging visits every task once; the last token is empty."""
    service, _ = serve(routing_agent(), clock=ticking_clock())

    async def main() -> None:
        tasks = await seed(service, [(f"t{i}", "c") for i in range(5)])
        seen: list[str] = []
        token = ""
        pages = 0
        while True:
            page = await service.list_tasks(ALICE, ListTasksRequest(page_size=2, page_token=token))
            assert page.page_size == 2
            assert page.total_size == 5
            seen += [t.id for t in page.tasks]
            pages += 1
            token = page.next_page_token
            if not token:
                break
        assert pages == 3
        assert seen == [t.id for t in reversed(tasks)]

    run(main())


@pytest.mark.parametrize("size", [0, -1, 101, 1000])
def test_list_page_size_out_of_bounds_is_invalid(size: int) -> None:
    """R-TASK-9: 1 ≤ pageSize ≤ 100, rejected (not clamped) outside."""
    service, _ = serve(echo_agent())

    async def main() -> None:
        with pytest.raises(InvalidParamsError):
            await service.list_tasks(ALICE, ListTasksRequest(page_size=size))

    run(main())


def test_list_page_size_bounds_are_inclusive_and_tokens_are_checked() -> None:
    service, _ = serve(echo_agent())

    async def main() -> None:
        await service.send_message(ALICE, send("x"))
        assert (await service.list_tasks(ALICE, ListTasksRequest(page_size=1))).page_size == 1
        assert (await service.list_tasks(ALICE, ListTasksRequest(page_size=100))).page_size == 100
        with pytest.raises(InvalidParamsError):
            await service.list_tasks(ALICE, ListTasksRequest(page_token="not-a-token"))

    run(main())


def test_list_omits_artifacts_unless_asked_and_trims_history() -> None:
    """R-TASK-3: artifacts only with includeArtifacts; §8.5: historyLength per task."""
    service, _ = serve(history_agent())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go")))
        assert task.artifacts
        for flag in (None, False):
            plain = await service.list_tasks(ALICE, ListTasksRequest(include_artifacts=flag))
            assert plain.tasks[0].artifacts == ()
            assert len(plain.tasks[0].history) == 3
        full = await service.list_tasks(ALICE, ListTasksRequest(include_artifacts=True))
        assert full.tasks[0] == task
        trimmed = await service.list_tasks(ALICE, ListTasksRequest(history_length=1))
        assert [text_of(m) for m in trimmed.tasks[0].history] == ["two"]
        none = await service.list_tasks(ALICE, ListTasksRequest(history_length=0))
        assert none.tasks[0].history == ()
        assert (await get(service, task.id)).artifacts == task.artifacts

    run(main())


# ----------------------------------------------------------------------------- push configs


def test_push_config_crud() -> None:
    """R-PUSH-1/3/5/6/7, §9.1: create assigns the id (default: the task id), get/list
    return what was stored, delete removes and is idempotent."""
    service, _ = serve(echo_agent(push_notifications=True))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        default = await service.create_task_push_notification_config(
            ALICE, TaskPushNotificationConfig(url=HOOK, task_id=task.id, token="tok")
        )
        assert default.id == task.id
        assert default.token == "tok"  # create echoes it; get and list redact it
        named = await service.create_task_push_notification_config(
            ALICE,
            TaskPushNotificationConfig(url=HOOK + "/2", task_id=task.id, id="second"),
        )
        assert named.id == "second"
        got = await service.get_task_push_notification_config(
            ALICE, GetTaskPushNotificationConfigRequest(task_id=task.id, id="second")
        )
        assert got == named
        listed = await service.list_task_push_notification_configs(
            ALICE, ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert sorted(c.id for c in listed.configs) == sorted([task.id, "second"])
        replaced = await service.create_task_push_notification_config(
            ALICE, TaskPushNotificationConfig(url=HOOK + "/3", task_id=task.id, id="second")
        )
        got = await service.get_task_push_notification_config(
            ALICE, GetTaskPushNotificationConfigRequest(task_id=task.id, id="second")
        )
        assert got == replaced
        assert got.url == HOOK + "/3"

        delete = DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="second")
        await service.delete_task_push_notification_config(ALICE, delete)
        await service.delete_task_push_notification_config(ALICE, delete)  # idempotent
        with pytest.raises(TaskNotFoundError):
            await service.get_task_push_notification_config(
                ALICE, GetTaskPushNotificationConfigRequest(task_id=task.id, id="second")
            )
        listed = await service.list_task_push_notification_configs(
            ALICE, ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert [c.id for c in listed.configs] == [task.id]

    run(main())


def test_push_config_tenant_is_the_callers() -> None:
    service, _ = serve(echo_agent(push_notifications=True))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE_OTHER_TENANT, send("hi")))
        created = await service.create_task_push_notification_config(
            ALICE_OTHER_TENANT,
            TaskPushNotificationConfig(url=HOOK, task_id=task.id, tenant="spoofed"),
        )
        assert created.tenant == "other"

    run(main())


def test_push_config_operations_on_an_unknown_task_are_not_found() -> None:
    service, _ = serve(echo_agent(push_notifications=True))

    async def main() -> None:
        calls = [
            service.create_task_push_notification_config(
                ALICE, TaskPushNotificationConfig(url=HOOK, task_id="nope")
            ),
            service.get_task_push_notification_config(
                ALICE, GetTaskPushNotificationConfigRequest(task_id="nope", id="nope")
            ),
            service.list_task_push_notification_configs(
                ALICE, ListTaskPushNotificationConfigsRequest(task_id="nope")
            ),
            service.delete_task_push_notification_config(
                ALICE, DeleteTaskPushNotificationConfigRequest(task_id="nope", id="nope")
            ),
        ]
        for call in calls:
            with pytest.raises(TaskNotFoundError):
                await call

    run(main())


@pytest.mark.parametrize("url", ["", "ftp://example.com/x", "/relative", "https://"])
def test_push_config_with_a_bad_url_is_invalid(url: str) -> None:
    service, _ = serve(echo_agent(push_notifications=True))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        with pytest.raises(InvalidParamsError):
            await service.create_task_push_notification_config(
                ALICE, TaskPushNotificationConfig(url=url, task_id=task.id)
            )
        with pytest.raises(InvalidParamsError):
            await service.send_message(ALICE, send("hi", push=TaskPushNotificationConfig(url=url)))

    run(main())


def test_inline_push_config_is_stored_with_the_task() -> None:
    """R-SEND-7, §9.1: an inline config (no task id) is stored for the created task, under
    the default id."""
    service, _ = serve(echo_agent(push_notifications=True))

    async def main() -> None:
        request = send("hi", push=TaskPushNotificationConfig(url=HOOK, token="t"))
        task = as_task(await service.send_message(ALICE, request))
        assert task.status.state is TaskState.COMPLETED
        config = await service.get_task_push_notification_config(
            ALICE, GetTaskPushNotificationConfigRequest(task_id=task.id, id=task.id)
        )
        assert (config.url, config.task_id, config.token) == (HOOK, task.id, "")  # R-PUSH-21

    run(main())


# ----------------------------------------------------------------------------- lifecycle


def test_shutdown_cancels_running_agents() -> None:
    agent, started, saw_cancel = cancelable_agent()
    service, _ = serve(agent)

    async def main() -> None:
        await service.startup()
        await service.send_message(ALICE, send("go", return_immediately=True))
        await asyncio.wait_for(started.wait(), 1)
        await service.shutdown()
        assert saw_cancel.is_set()

    run(main())


def test_shutdown_closes_suspended_agent_functions() -> None:
    agent, _ = asking_agent()
    service, executor = serve(agent)

    async def main() -> None:
        await service.send_message(ALICE, send("hi"))
        await settle()  # the run is over: the function waits in its session
        assert service.runner.live_count() == 0
        assert executor.session_count() == 1
        await service.shutdown()
        assert executor.session_count() == 0

    run(main())


def test_shutdown_answers_a_pending_blocking_send() -> None:
    agent, started, _ = cancelable_agent()
    service, _ = serve(agent)

    async def main() -> None:
        pending = asyncio.ensure_future(service.send_message(ALICE, send("go")))
        await asyncio.wait_for(started.wait(), 1)
        await service.shutdown()
        try:
            answer = await pending
        except A2AError:
            return
        assert isinstance(answer, Task | Message)

    run(main())


def test_card_property_is_the_served_card() -> None:
    agent = echo_agent()
    service, _ = serve(agent)
    assert service.card.name == "Echo"
    assert isinstance(service.runner.executor, FunctionExecutor)
