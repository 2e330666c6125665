"""Many writers updating one task at once lose no event (issue acceptance 3): each writer
loads the task, folds its next event and saves with the version it loaded; a stale write
raises, and the writer reloads and folds again. At the end every event is in the task
exactly once, each writer's events in the order it emitted them."""

from __future__ import annotations

import asyncio
import random

from msgspec.structs import replace

from parley.model import Artifact, Task, TaskArtifactUpdateEvent, TaskEvent, TextPart
from parley.protocol import folding
from parley.server.stores import Scope, StaleWriteError, TaskStore
from tests.contracts.support import ALICE, make_task, opened, run, text_message, texts

WRITERS = 8
EVENTS = 20
BACKOFF = 0.002
"""Seconds: a writer whose save was stale waits up to this * 2**attempts (capped at
MAX_BACKOFF) before retrying: exponential backoff with full jitter, so contention eases
quickly however slow the machine (a linear backoff kept writers colliding for minutes
under coverage; retrying at once, each lost write costs every other writer a reload)."""
MAX_BACKOFF = 0.05


def event_of(writer: int, number: int, task: Task) -> TaskEvent:
    """A writer's events alternate between agent messages and chunks of its artifact."""
    label = f"w{writer}-{number}"
    if number % 2 == 0:
        return replace(text_message(label), task_id=task.id)
    return TaskArtifactUpdateEvent(
        task_id=task.id,
        context_id=task.context_id,
        artifact=Artifact(artifact_id=f"w{writer}", parts=(TextPart(text=label),)),
        append=number > 1,
    )


async def writer(store: TaskStore, scope: Scope, number: int, stale: list[int]) -> None:
    jitter = random.Random(number)
    for event_number in range(EVENTS):
        attempt = 0
        while True:
            stored = await store.get(scope, "t1")
            assert stored is not None
            event = event_of(number, event_number, stored.task)
            task = folding.apply_event(stored.task, event)
            await asyncio.sleep(0)  # let the others load the same version (memory too)
            try:
                await store.save(scope, task, (event,), stored.version)
            except StaleWriteError:
                stale[0] += 1
                attempt += 1
                await asyncio.sleep(jitter.random() * min(MAX_BACKOFF, BACKOFF * 2**attempt))
                continue
            break


def test_concurrent_writers_lose_no_event(store_url: str) -> None:
    async def main() -> int:
        async with opened(store_url) as (store, _):
            await store.create(ALICE, make_task("t1"))
            stale = [0]
            await asyncio.gather(*(writer(store, ALICE, w, stale) for w in range(WRITERS)))
            stored = await store.get(ALICE, "t1")
            assert stored is not None
            task = stored.task
            assert stored.version == 1 + WRITERS * EVENTS
            ids = [m.message_id for m in task.history[1:]]
            assert len(ids) == len(set(ids)) == WRITERS * EVENTS // 2
            for w in range(WRITERS):
                mine = [i for i in ids if i.startswith(f"w{w}-")]
                assert mine == [f"w{w}-{n}" for n in range(0, EVENTS, 2)]
            artifact_ids = [a.artifact_id for a in task.artifacts]
            assert sorted(artifact_ids) == sorted(f"w{w}" for w in range(WRITERS))
            for artifact in task.artifacts:
                assert texts(artifact) == [
                    f"{artifact.artifact_id}-{n}" for n in range(1, EVENTS, 2)
                ]
            return stale[0]

    assert run(main(), timeout=120) >= 1  # the writers did collide
