"""The memory store's packed finished tasks: every terminal task reads back equal to what
was written (Hypothesis over the model), with the time it was packed; what msgpack cannot
hold is kept whole; a message's ids, when the task's own, read back as the task's
strings. The store packs exactly the terminal tasks, and reads its clock only for them."""

from __future__ import annotations

import asyncio
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
from parley.server.stores.memory import InMemoryTaskStore
from parley.server.stores.memory_packed import PackedTask, packed
from tests.strategies import Flavor, states, tasks

terminal = st.sampled_from(sorted(lifecycle.TERMINAL))
FINISHED = datetime(2026, 1, 3, tzinfo=UTC)
SCOPE = ("tenant", "caller")


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
    found = packed(task, 7, FINISHED)
    assert found.version == 7
    assert found.finished == FINISHED
    assert found.unpacked() == StoredTask(task=task, version=7)
    if task.artifacts or task.history:
        assert found.body is not None
        assert found.task == replace(task, artifacts=(), history=())
    else:
        assert found.body is None
        assert found.task is task


@given(states(Flavor.V1_0))
def test_the_store_packs_the_terminal_tasks_and_times_only_them(state: TaskState) -> None:
    async def main() -> None:
        times: list[datetime] = []

        def clock() -> datetime:
            times.append(FINISHED)
            return FINISHED

        store = InMemoryTaskStore(clock=clock)
        working = _echo(TaskState.WORKING)
        await store.create(SCOPE, working)
        await store.save(SCOPE, working, (), 1)
        assert times == []  # an active task's writes read no clock
        task = replace(working, status=replace(working.status, state=state))
        saved = await store.save(SCOPE, task, (), 2)
        assert saved == StoredTask(task=task, version=3)
        kept = store._tasks[SCOPE]["t1"]
        assert isinstance(kept, PackedTask) == lifecycle.is_terminal(state)
        assert len(times) == int(lifecycle.is_terminal(state))
        assert await store.get(SCOPE, "t1") == saved
        created = replace(task, id="t2")
        assert await store.create(SCOPE, created) == StoredTask(task=created, version=1)
        assert isinstance(store._tasks[SCOPE]["t2"], PackedTask) == lifecycle.is_terminal(state)
        assert await store.get(SCOPE, "t2") == StoredTask(task=created, version=1)

    asyncio.run(main())


def test_a_message_in_its_task_shares_the_task_ids() -> None:
    task = packed(_echo(), 3, FINISHED).unpacked().task
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
    assert packed(task, 3, FINISHED).unpacked().task == task


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
    found = packed(task, 4, FINISHED)
    assert found.body is not None
    assert found.unpacked().task == task


def test_what_msgpack_cannot_hold_is_kept_whole() -> None:
    task = replace(_echo(), artifacts=(Artifact(artifact_id="a", parts=(DataPart(data=2**70),)),))
    found = packed(task, 3, FINISHED)
    assert (found.task, found.body) == (task, None)
    assert found.unpacked() == StoredTask(task=task, version=3)
