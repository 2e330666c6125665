"""The agent's handle on one task (`parley.server.task_context.TaskContext`), driven
directly over a recording sink: the exact events each move emits, the hook the streaming
driver uses before a status, the `acted`/`finished` flags the executor reads, and how a
suspended `ask` is resumed (and not resumed twice)."""

from __future__ import annotations

import asyncio

import pytest

from parley.model import (
    Artifact,
    DataPart,
    Message,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.server.context import CallContext
from parley.server.execution import RequestContext
from parley.server.task_context import Failed, Rejected, TaskContext, agent_message
from tests.server.support import run, settle, user


class Sink:
    def __init__(self) -> None:
        self.events: list[StreamEvent] = []

    async def emit(self, event: StreamEvent) -> None:
        self.events.append(event)

    def states(self) -> list[TaskState]:
        return [e.status.state for e in self.events if isinstance(e, TaskStatusUpdateEvent)]


def request(message: Message | None = None, task: Task | None = None) -> RequestContext:
    return RequestContext(message or user("hello"), "t-1", "c-1", CallContext(), task)


def handle(sink: Sink, **kwargs: object) -> TaskContext:
    return TaskContext(request(), sink, **kwargs)  # type: ignore[arg-type]


def test_update_keeps_the_task_working_with_a_note_of_the_task() -> None:
    sink = Sink()
    task = handle(sink)
    run(task.update("halfway"))
    [event] = sink.events
    assert isinstance(event, TaskStatusUpdateEvent)
    assert (event.task_id, event.context_id, event.status.state) == (
        "t-1",
        "c-1",
        TaskState.WORKING,
    )
    note = event.status.message
    assert note is not None
    assert note.role is Role.AGENT
    assert (note.task_id, note.context_id, note.text) == ("t-1", "c-1", "halfway")
    assert (task.acted, task.finished) == (True, False)


def test_complete_without_content_has_no_status_message_and_finishes() -> None:
    sink = Sink()
    task = handle(sink)
    run(task.complete())
    [event] = sink.events
    assert isinstance(event, TaskStatusUpdateEvent)
    assert event.status.state is TaskState.COMPLETED
    assert event.status.message is None
    assert (task.acted, task.finished) == (True, True)


def test_artifact_returns_a_fresh_id_unless_given_and_marks_chunks() -> None:
    sink = Sink()
    task = handle(sink)

    async def main() -> None:
        first = await task.artifact("a", name="out")
        second = await task.artifact("b", artifact_id=first, append=True, last_chunk=True)
        other = await task.artifact({"k": 1})
        assert second == first != other

    run(main())
    one, two, three = sink.events
    assert isinstance(one, TaskArtifactUpdateEvent)
    assert (one.artifact.name, one.append, one.last_chunk) == ("out", False, False)
    assert isinstance(two, TaskArtifactUpdateEvent)
    assert (two.append, two.last_chunk) == (True, True)
    assert isinstance(three, TaskArtifactUpdateEvent)
    assert three.artifact.parts == (DataPart(data={"k": 1}, media_type="application/json"),)
    assert task.acted
    assert not task.finished


def test_an_artifact_given_whole_keeps_its_own_id_and_name() -> None:
    sink = Sink()
    whole = Artifact(artifact_id="report", name="Report", parts=(TextPart(text="r"),))
    returned = run(handle(sink).artifact(whole, artifact_id="ignored", name="ignored"))
    assert returned == "report"
    [event] = sink.events
    assert isinstance(event, TaskArtifactUpdateEvent)
    assert event.artifact == whole


def test_before_status_is_told_whether_the_status_ends_the_task() -> None:
    sink = Sink()
    task = handle(sink)
    told: list[tuple[bool, int]] = []

    async def hook(final: bool) -> None:
        told.append((final, len(sink.events)))  # called before the status is emitted

    task.before_status = hook

    async def main() -> None:
        await task.update("x")
        await task.artifact("chunk")  # artifacts do not call it
        await task.complete("done")

    run(main())
    assert told == [(False, 0), (True, 2)]


def test_reject_and_fail_are_signals_carrying_the_reason() -> None:
    task = handle(Sink())
    with pytest.raises(Rejected, match="not mine"):
        task.reject("not mine")
    with pytest.raises(Failed, match="broke"):
        task.fail("broke")
    with pytest.raises(Rejected, match="declined"):
        task.reject()
    assert not task.acted  # a signal emits nothing by itself


def test_reply_is_an_agent_message_of_the_context_without_a_task() -> None:
    message = handle(Sink()).reply(["a", 2])
    assert message.role is Role.AGENT
    assert (message.context_id, message.task_id) == ("c-1", "")
    assert message.parts == (DataPart(data=["a", 2], media_type="application/json"),)


def test_an_agent_message_of_nothing_has_one_empty_text_part() -> None:
    """A Message needs at least one part (R-DATA-8)."""
    assert agent_message(None).parts == (TextPart(text=""),)
    assert agent_message(None).message_id != agent_message(None).message_id


@pytest.mark.parametrize(
    ("move", "state"),
    [("ask", TaskState.INPUT_REQUIRED), ("auth_required", TaskState.AUTH_REQUIRED)],
)
def test_an_interrupt_pauses_then_resumes_working_with_the_reply(
    move: str, state: TaskState
) -> None:
    """R-SEC-8/R-SEC-12: AUTH_REQUIRED, like INPUT_REQUIRED, takes the next message."""
    sink, later = Sink(), Sink()
    paused: list[int] = []
    task = TaskContext(request(), sink, on_pause=lambda: paused.append(len(sink.events)))
    reply = user("here you go")

    async def main() -> None:
        asking = asyncio.ensure_future(getattr(task, move)("need more"))
        await settle()
        assert paused == [1]  # told after the interrupt was emitted
        assert task._waiting
        assert task._resume(request(reply), later)
        assert await asking == reply

    run(main())
    assert sink.states() == [state]
    assert later.states() == [TaskState.WORKING]  # the resumed status goes to the new sink
    assert task.message == reply
    assert task.text == "here you go"
    assert not task._waiting


def test_resume_without_a_waiting_ask_is_refused() -> None:
    task = handle(Sink())
    assert not task._resume(request(), Sink())


def test_a_reply_is_delivered_once() -> None:
    sink = Sink()
    task = handle(sink)

    async def main() -> None:
        asking = asyncio.ensure_future(task.ask("?"))
        await settle()
        assert task._resume(request(user("first")), sink)
        assert not task._resume(request(user("second")), sink)
        assert (await asking).text == "first"

    run(main())


def test_history_is_the_stored_tasks_or_just_the_message() -> None:
    message = user("again")
    stored = Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(state=TaskState.INPUT_REQUIRED),
        history=(user("first"), message),
    )
    assert TaskContext(request(message, stored), Sink()).history == stored.history
    assert TaskContext(request(message), Sink()).history == (message,)
    assert TaskContext(request(message, stored), Sink()).task is stored
