"""Folding status updates, artifact chunks and messages into a task (REFERENCE §4.5, §8)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.model import (
    Artifact,
    DataPart,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import folding
from parley.protocol.errors import (
    InvalidAgentResponseError,
    InvalidParamsError,
    UnsupportedOperationError,
)

T0 = datetime(2025, 3, 15, 18, 30, tzinfo=UTC)


def msg(
    message_id: str,
    role: Role = Role.USER,
    text: str = "hi",
    *,
    task_id: str = "",
    context_id: str = "",
) -> Message:
    return Message(
        message_id=message_id,
        role=role,
        parts=(TextPart(text=text),),
        task_id=task_id,
        context_id=context_id,
    )


def status(
    state: TaskState, message: Message | None = None, minutes: int = 1, task_id: str = "t1"
) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=task_id,
        context_id="c1",
        status=TaskStatus(state=state, message=message, timestamp=T0 + timedelta(minutes=minutes)),
    )


def chunk(
    artifact_id: str,
    *texts: str,
    append: bool = False,
    last: bool = False,
    name: str = "",
    description: str = "",
) -> TaskArtifactUpdateEvent:
    parts: tuple[Part, ...] = tuple(TextPart(text=t) for t in texts)
    return TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(artifact_id=artifact_id, parts=parts, name=name, description=description),
        append=append,
        last_chunk=last,
    )


def fold(task: Task, *events: TaskStatusUpdateEvent | TaskArtifactUpdateEvent | Message) -> Task:
    for event in events:
        task = folding.apply_event(task, event)
    return task


@pytest.fixture
def task() -> Task:
    return folding.new_task(msg("m1"), task_id="t1", context_id="c1", timestamp=T0)


def texts(artifact: Artifact) -> list[str]:
    return [p.text for p in artifact.parts if isinstance(p, TextPart)]


def test_new_task_is_submitted_with_the_message_in_history(task: Task) -> None:
    """R-CTX-8/9: the new task carries its id; the message gets the task and context ids."""
    assert task.status == TaskStatus(state=TaskState.SUBMITTED, timestamp=T0)
    assert task.history == (msg("m1", task_id="t1", context_id="c1"),)
    assert task.artifacts == ()


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (msg("m1", task_id="other"), "message.taskId"),
        (msg("m1", context_id="other"), "message.contextId"),
    ],
)
def test_new_task_rejects_a_message_of_another_task(message: Message, field: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        folding.new_task(message, task_id="t1", context_id="c1")
    assert caught.value.field_violations[0].field == field


def test_new_task_needs_ids() -> None:
    with pytest.raises(InvalidParamsError):
        folding.new_task(msg("m1"), task_id="", context_id="c1")
    with pytest.raises(InvalidParamsError):
        folding.new_task(msg("m1"), task_id="t1", context_id="")


def test_status_update_replaces_the_status(task: Task) -> None:
    working = status(TaskState.WORKING)
    after = folding.apply_event(task, working)
    assert after.status == working.status
    assert after.history == task.history


def test_previous_status_message_moves_to_history(task: Task) -> None:
    """What the official SDK does: the replaced status message joins the history."""
    progress = msg("a1", Role.AGENT, "thinking")
    done = msg("a2", Role.AGENT, "done")
    after = fold(task, status(TaskState.WORKING, progress), status(TaskState.COMPLETED, done, 2))
    assert [m.message_id for m in after.history] == ["m1", "a1"]
    assert after.status.message == done


def test_status_message_already_in_history_is_not_duplicated(task: Task) -> None:
    progress = msg("a1", Role.AGENT)
    after = fold(
        task,
        status(TaskState.WORKING, progress),
        status(TaskState.WORKING, progress, 2),
        status(TaskState.COMPLETED, None, 3),
    )
    assert [m.message_id for m in after.history] == ["m1", "a1"]


def test_status_metadata_is_merged_into_the_task(task: Task) -> None:
    first = TaskStatusUpdateEvent(
        task_id="t1",
        context_id="c1",
        status=TaskStatus(state=TaskState.WORKING),
        metadata={"a": 1, "b": 1},
    )
    second = TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=TaskStatus(state=TaskState.WORKING), metadata={"b": 2}
    )
    assert fold(task, first, second).metadata == {"a": 1, "b": 2}


def test_illegal_transition_is_an_invalid_agent_response(task: Task) -> None:
    """§8.1: terminal tasks cannot restart."""
    done = fold(task, status(TaskState.COMPLETED))
    with pytest.raises(InvalidAgentResponseError):
        folding.apply_event(done, status(TaskState.WORKING, minutes=2))
    with pytest.raises(InvalidAgentResponseError):
        folding.apply_event(task, status(TaskState.UNSPECIFIED))


def test_events_of_another_task_are_invalid_params(task: Task) -> None:
    for event in (
        status(TaskState.WORKING, task_id="t2"),
        TaskArtifactUpdateEvent(
            task_id="t2", context_id="c1", artifact=Artifact(artifact_id="a", parts=())
        ),
        msg("m2", task_id="t2"),
    ):
        with pytest.raises(InvalidParamsError) as caught:
            folding.apply_event(task, event)
        assert caught.value.field_violations[0].field.endswith("taskId")


def test_events_of_another_context_are_invalid_params(task: Task) -> None:
    """R-CTX-13 / R-DATA-13: task and context ids must match."""
    event = TaskStatusUpdateEvent(
        task_id="t1", context_id="c2", status=TaskStatus(state=TaskState.WORKING)
    )
    with pytest.raises(InvalidParamsError):
        folding.apply_event(task, event)
    with pytest.raises(InvalidParamsError):
        folding.apply_event(task, msg("m2", context_id="c2"))


def test_artifact_chunks_append_in_order_until_last_chunk(task: Task) -> None:
    """REFERENCE §4.5: `append` extends the artifact with the same id; lastChunk ends it."""
    after = fold(
        task,
        status(TaskState.WORKING),
        chunk("a", "one", name="report"),
        chunk("b", "other"),
        chunk("a", "two", append=True),
        chunk("a", "three", append=True, last=True),
    )
    assert [a.artifact_id for a in after.artifacts] == ["a", "b"]
    assert texts(after.artifacts[0]) == ["one", "two", "three"]
    assert after.artifacts[0].name == "report"
    assert texts(after.artifacts[1]) == ["other"]


def test_appended_chunk_overrides_non_empty_fields(task: Task) -> None:
    first = chunk("a", "x", name="n", description="d")
    later = TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(
            artifact_id="a",
            parts=(DataPart(data={"k": 1}),),
            description="d2",
            metadata={"m": True},
            extensions=("urn:x",),
        ),
        append=True,
    )
    art = fold(task, first, later).artifacts[0]
    assert art.name == "n"
    assert art.description == "d2"
    assert art.metadata == {"m": True}
    assert art.extensions == ("urn:x",)
    assert art.parts == (TextPart(text="x"), DataPart(data={"k": 1}))


def test_artifact_without_append_replaces_the_same_id(task: Task) -> None:
    """R-DATA-12: artifact ids stay unique within the task."""
    after = fold(task, chunk("a", "old"), chunk("b", "keep"), chunk("a", "new"))
    assert [a.artifact_id for a in after.artifacts] == ["a", "b"]
    assert texts(after.artifacts[0]) == ["new"]


def test_append_to_an_unknown_artifact_adds_it(task: Task) -> None:
    after = folding.apply_event(task, chunk("z", "first", append=True))
    assert [a.artifact_id for a in after.artifacts] == ["z"]


def test_message_is_appended_to_history_with_ids(task: Task) -> None:
    """R-CTX-12: a follow-up without ids belongs to the task it was folded into."""
    question = msg("q", Role.AGENT, "which file?")
    waiting = fold(task, status(TaskState.WORKING), status(TaskState.INPUT_REQUIRED, question, 2))
    after = folding.apply_event(waiting, msg("m2"))
    assert [m.message_id for m in after.history] == ["m1", "q", "m2"]
    assert after.history[-1] == msg("m2", task_id="t1", context_id="c1")
    assert after.status.message is None
    assert after.status.state is TaskState.INPUT_REQUIRED
    # The moved status message is not appended again by the next status update.
    resumed = folding.apply_event(after, status(TaskState.WORKING, minutes=3))
    assert [m.message_id for m in resumed.history] == ["m1", "q", "m2"]


def test_refolding_the_same_message_is_idempotent(task: Task) -> None:
    once = folding.apply_event(task, msg("m2"))
    assert folding.apply_event(once, msg("m2")) == once


def test_terminal_task_refuses_messages_and_artifacts(task: Task) -> None:
    """R-SEND-8: a terminal task accepts no further messages; it is immutable (§8.1)."""
    done = fold(task, status(TaskState.COMPLETED))
    with pytest.raises(UnsupportedOperationError):
        folding.apply_event(done, msg("m2"))
    with pytest.raises(InvalidAgentResponseError):
        folding.apply_event(done, msg("a9", Role.AGENT))
    with pytest.raises(InvalidAgentResponseError):
        folding.apply_event(done, chunk("a", "late"))


@given(st.lists(st.tuples(st.sampled_from("abc"), st.booleans(), st.text(max_size=3))))
def test_artifact_parts_are_the_concatenation_since_the_last_reset(
    steps: list[tuple[str, bool, str]],
) -> None:
    """Model check: per id, parts = parts of the last non-append chunk plus later appends."""
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.WORKING))
    expected: dict[str, list[str]] = {}
    for artifact_id, append, text in steps:
        task = folding.apply_event(task, chunk(artifact_id, text, append=append))
        if append and artifact_id in expected:
            expected[artifact_id].append(text)
        else:
            expected.setdefault(artifact_id, [])[:] = [text]
    assert {a.artifact_id: texts(a) for a in task.artifacts} == expected


def test_stamp_fills_only_what_the_agent_left_empty() -> None:
    """An agent may leave an update's ids empty (they are its task's) and its status time."""
    now = T0 + timedelta(hours=1)
    bare = TaskStatusUpdateEvent(
        task_id="", context_id="", status=TaskStatus(state=TaskState.WORKING)
    )
    stamped = folding.stamp(bare, "t1", "c1", lambda: now)
    assert (stamped.task_id, stamped.context_id) == ("t1", "c1")
    assert isinstance(stamped, TaskStatusUpdateEvent)
    assert stamped.status.timestamp == now
    timed = status(TaskState.WORKING)
    assert folding.stamp(timed, "t1", "c1", lambda: now) == timed  # its own time is kept
    loose = TaskArtifactUpdateEvent(
        task_id="", context_id="c9", artifact=Artifact(artifact_id="a", parts=())
    )
    assert folding.stamp(loose, "t1", "c1", lambda: now) == TaskArtifactUpdateEvent(
        task_id="t1", context_id="c9", artifact=Artifact(artifact_id="a", parts=())
    )
    whole = chunk("a", "x")
    assert folding.stamp(whole, "t2", "c2", lambda: now) is whole
    message = msg("m1")
    assert folding.stamp(message, "t1", "c1", lambda: now) is message
