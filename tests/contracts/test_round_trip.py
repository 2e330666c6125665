"""Property: whatever a task holds and whatever events are folded into it, every backend
reads back exactly the folded task after each save (drawn from the model strategies:
every kind of part, metadata, unicode, repeated artifact ids, appends and replacements)."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from parley.model import Task, TaskArtifactUpdateEvent, TaskEvent, TaskState, TaskStatusUpdateEvent
from parley.protocol import folding
from tests import strategies as s
from tests.contracts.support import ALICE, opened, run

V1 = s.Flavor.V1_0
_ids = itertools.count()

working_tasks = s.tasks(V1).map(
    lambda task: replace(task, status=replace(task.status, state=TaskState.WORKING))
)
events: st.SearchStrategy[TaskEvent] = st.one_of(
    s.messages(V1).map(lambda m: replace(m, task_id="", context_id="")),
    s.artifact_events(V1).flatmap(
        lambda event: st.sampled_from(["a", "b", event.artifact.artifact_id]).map(
            lambda artifact_id: replace(
                event,
                task_id="",
                context_id="",
                artifact=replace(event.artifact, artifact_id=artifact_id),
            )
        )
    ),
    s.status_events(V1).map(
        lambda event: replace(
            event,
            task_id="",
            context_id="",
            status=replace(event.status, state=TaskState.WORKING),
        )
    ),
)


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=working_tasks, script=st.lists(events, min_size=1, max_size=8))
def test_any_task_and_events_read_back_exactly(
    store_url: str, task: Task, script: list[TaskEvent]
) -> None:
    task = replace(task, id=f"{task.id}-{next(_ids)}")

    async def main() -> None:
        async with opened(store_url) as (store, _):
            stored = await store.create(ALICE, task)
            assert await store.get(ALICE, task.id) == stored
            for event in script:
                folded = folding.apply_event(stored.task, event)
                stored = await store.save(ALICE, folded, (event,), stored.version)
                assert await store.get(ALICE, task.id) == stored

    run(main())


def _kinds(script: list[Any]) -> set[type]:
    return {type(event) for event in script}


def test_the_strategy_draws_every_kind_of_event() -> None:
    kinds: set[type] = set()

    @settings(max_examples=30)
    @given(script=st.lists(events, min_size=3, max_size=8))
    def draw(script: list[TaskEvent]) -> None:
        kinds.update(_kinds(script))

    draw()
    assert {TaskArtifactUpdateEvent, TaskStatusUpdateEvent} <= kinds
