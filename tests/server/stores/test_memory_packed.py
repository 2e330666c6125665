"""The memory store's packed finished tasks: every terminal task reads back equal to what
was written (Hypothesis over the model); active tasks, and what msgpack cannot hold, stay
as they are; a message's ids, when the task's own, read back as the task's strings."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from parley.model import (
    Artifact,
    DataPart,
    Message,
    RawPart,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
    UrlPart,
)
from parley.protocol import lifecycle
from parley.server.stores.base import StoredTask
from parley.server.stores.memory_packed import PackedTask, kept
from tests.strategies import Flavor, states, tasks

terminal = st.sampled_from(sorted(lifecycle.TERMINAL))


def _echo(state: TaskState = TaskState.COMPLETED) -> Task:
    message = Message(
        message_id="m1", role=Role.USER, parts=(TextPart(text="hi"),), context_id="c1", task_id="t1"
    )
    return Task(
        id="t1",
        context_id="c1",
        status=TaskStatus(state=state, timestamp=datetime(2026, 1, 2, tzinfo=UTC)),
        artifacts=(Artifact(artifact_id="a1", parts=(TextPart(text="hi"),)),),
        history=(message,),
        generation=3,
    )


@given(tasks(Flavor.V1_0), terminal)
def test_a_terminal_task_reads_back_equal(task: Task, state: TaskState) -> None:
    task = replace(task, status=replace(task.status, state=state))
    stored = StoredTask(task=task, version=7)
    found = kept(stored)
    if task.artifacts or task.history:
        assert isinstance(found, PackedTask)
        assert found.task.artifacts == ()
        assert found.task.history == ()
        assert found.task.status == task.status
        assert found.version == 7
        assert found.unpacked() == stored
    else:
        assert found is stored


@given(tasks(Flavor.V1_0), states(Flavor.V1_0))
def test_only_terminal_tasks_are_packed(task: Task, state: TaskState) -> None:
    task = replace(task, status=replace(task.status, state=state), history=_echo().history)
    stored = StoredTask(task=task, version=1)
    assert isinstance(kept(stored), PackedTask) == lifecycle.is_terminal(state)


def test_an_active_task_is_kept_as_it_is() -> None:
    stored = StoredTask(task=_echo(TaskState.WORKING), version=2)
    assert kept(stored) is stored


def test_a_message_in_its_task_shares_the_task_ids() -> None:
    packed = kept(StoredTask(task=_echo(), version=3))
    assert isinstance(packed, PackedTask)
    task = packed.unpacked().task
    assert task == _echo()
    assert task.history[0].context_id is task.context_id
    assert task.history[0].task_id is task.id


def test_foreign_and_empty_ids_of_a_message_are_kept() -> None:
    echo = _echo()
    history = (
        replace(echo.history[0], context_id="", task_id=""),
        replace(echo.history[0], context_id="other", task_id="t0", role=Role.AGENT),
    )
    task = replace(echo, history=history)
    packed = kept(StoredTask(task=task, version=3))
    assert isinstance(packed, PackedTask)
    assert packed.unpacked().task == task


def test_every_part_field_is_kept() -> None:
    parts = (
        TextPart(text="", media_type="text/markdown", filename="a.md", metadata={"k": [1]}),
        RawPart(raw=b"\x00\xff", media_type="image/png", filename="p.png"),
        UrlPart(url="https://example.com/f", metadata={"n": None}),
        DataPart(data=None),
        DataPart(data={"x": [1.5, True, "y"]}, filename="d.json"),
    )
    artifact = Artifact(
        artifact_id="a2",
        parts=parts,
        name="n",
        description="d",
        metadata={"m": 1},
        extensions=("urn:x",),
    )
    message = Message(
        message_id="m2",
        role=Role.AGENT,
        parts=parts,
        metadata={"q": "r"},
        extensions=("urn:y",),
        reference_task_ids=("t0",),
    )
    task = replace(_echo(TaskState.FAILED), artifacts=(artifact,), history=(message,))
    packed = kept(StoredTask(task=task, version=4))
    assert isinstance(packed, PackedTask)
    assert packed.unpacked().task == task


def test_what_msgpack_cannot_hold_stays_as_it_is() -> None:
    task = replace(_echo(), artifacts=(Artifact(artifact_id="a", parts=(DataPart(data=2**70),)),))
    stored = StoredTask(task=task, version=3)
    assert kept(stored) is stored
