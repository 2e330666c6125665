"""The runner's answer to a store that holds a newer version than it last saw, and to a
cancel racing the agent's writes: the cancel stops the run between two writes; a stale
write is re-read and re-applied, so the cancel wins or the task was terminal first; a run
never ends with an unhandled exception and leaves no task active behind it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import pytest

from parley.model import CancelTaskRequest, SubscribeToTaskRequest, Task, TaskEvent, TaskState
from parley.protocol import folding
from parley.protocol.errors import InvalidAgentResponseError, TaskNotCancelableError
from parley.server.execution import EventSink, RequestContext
from parley.server.service import AgentService
from parley.server.stamps import utc_now
from parley.server.stores.base import Scope, StaleWriteError, StoredTask, TaskKey
from parley.server.stores.memory import InMemoryTaskStore
from tests.server.support import (
    ALICE,
    ScriptedExecutor,
    as_task,
    get,
    make_card,
    run,
    send,
    text_of,
    wait_for_state,
)
from tests.server.test_runner import agent_reply, artifact, status


class LingeringStore(InMemoryTaskStore):
    """Its writes take a moment and complete even when their caller is cancelled, as a
    database thread or a database server does. Counts the stale writes it refused."""

    def __init__(self) -> None:
        super().__init__()
        self.stale = 0
        self.in_flight = 0

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask:
        return await asyncio.shield(self._later(scope, task, events, expected_version))

    async def _later(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask:
        self.in_flight += 1
        try:
            await asyncio.sleep(0.0005)
            return await InMemoryTaskStore.save(self, scope, task, events, expected_version)
        except StaleWriteError:
            self.stale += 1
            raise
        finally:
            self.in_flight -= 1


async def _write_behind(service: AgentService, task_id: str, event: TaskEvent) -> Task:
    """What another process would do: fold `event` onto the stored task and save it."""
    stored = await service.store.get(service.store_scope(ALICE), task_id)
    assert stored is not None
    task = folding.apply_event(
        stored.task, folding.stamp(event, task_id, stored.task.context_id, utc_now)
    )
    saved = await service.store.save(service.store_scope(ALICE), task, (event,), stored.version)
    return saved.task


def test_a_cancel_never_stops_a_run_half_way_through_a_write() -> None:
    """The agent writes without pause; each cancel lands while a write is in flight. Old
    behaviour: the run was cancelled inside the write, which the store completed anyway,
    and the CANCELED write was refused as stale (an internal error, the task left WORKING)."""
    store = LingeringStore()

    async def busy(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        number = 0
        while True:
            number += 1
            await events.emit(artifact(f"chunk {number}", artifact_id=f"a{number}"))

    service = AgentService(ScriptedExecutor(busy), make_card(), store=store)

    async def main() -> None:
        for _ in range(20):
            task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
            while store.in_flight == 0:
                await asyncio.sleep(0)
            canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
            assert canceled.status.state is TaskState.CANCELED
            stored = await service.store.get(service.store_scope(ALICE), task.id)
            assert stored is not None
            assert stored.task.status.state is TaskState.CANCELED
            assert stored.task == canceled
        assert store.stale == 0
        assert service.runner.live_count() == 0

    run(main(), timeout=10)


def test_an_agent_event_is_folded_onto_a_task_written_elsewhere() -> None:
    gate = asyncio.Event()

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        await gate.wait()
        await events.emit(artifact("after"))
        await events.emit(status(TaskState.COMPLETED))

    service = AgentService(ScriptedExecutor(script), make_card())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        stream = service.subscribe_to_task(ALICE, SubscribeToTaskRequest(id=task.id))
        first = await anext(stream)  # the snapshot, before the write from elsewhere
        assert [text_of(m) for m in as_task(first).history] == ["go"]
        await _write_behind(service, task.id, agent_reply("from elsewhere"))
        gate.set()
        rest = [event async for event in stream]
        assert len(rest) == 2  # the artifact, then COMPLETED
        done = await get(service, task.id)
        assert done.status.state is TaskState.COMPLETED
        assert [text_of(m) for m in done.history] == ["go", "from elsewhere"]
        assert [a.artifact_id for a in done.artifacts] == ["a1"]
        stored = await service.store.get(service.store_scope(ALICE), task.id)
        assert stored is not None
        assert stored.version == 5  # created, WORKING, the message, the artifact, COMPLETED

    run(main())


def test_a_cancel_after_another_process_wrote_wins() -> None:
    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        await asyncio.Event().wait()

    executor = ScriptedExecutor(script)
    service = AgentService(executor, make_card())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        await _write_behind(service, task.id, artifact("elsewhere"))
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        assert canceled.status.state is TaskState.CANCELED
        assert [a.artifact_id for a in canceled.artifacts] == ["a1"]
        assert executor.canceled == [task.id]
        assert service.runner.live_count() == 0

    run(main())


def test_a_cancel_of_a_task_that_ended_elsewhere_is_not_cancelable() -> None:
    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        await asyncio.Event().wait()

    service = AgentService(ScriptedExecutor(script), make_card())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        live = service.runner.acquire(TaskKey(*service.store_scope(ALICE), task.id))
        try:
            await _write_behind(service, task.id, status(TaskState.COMPLETED))
            with pytest.raises(TaskNotCancelableError):
                await service.runner.cancel(live)
        finally:
            service.runner.release(live)
        assert (await get(service, task.id)).status.state is TaskState.COMPLETED
        assert service.runner.live_count() == 0

    run(main())


def test_an_agent_event_after_a_cancel_elsewhere_is_refused_and_the_run_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = asyncio.Event()
    refused: list[Exception] = []

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        await gate.wait()
        try:
            await events.emit(artifact("too late"))
        except InvalidAgentResponseError as exc:
            refused.append(exc)
        await events.emit(status(TaskState.COMPLETED))  # uncaught: ends the run

    service = AgentService(ScriptedExecutor(script), make_card())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        await _write_behind(service, task.id, status(TaskState.CANCELED))
        live = service.runner.acquire(TaskKey(*service.store_scope(ALICE), task.id))
        agent_run = live.run
        service.runner.release(live)
        assert agent_run is not None
        gate.set()
        await asyncio.wait((agent_run,))
        assert agent_run.exception() is None
        assert len(refused) == 1
        assert (await get(service, task.id)).status.state is TaskState.CANCELED
        assert service.runner.live_count() == 0

    with caplog.at_level(logging.ERROR):
        run(main())
    assert not caplog.records  # the refused COMPLETED fails nothing: the task is terminal


class BreakingStore(InMemoryTaskStore):
    """Refuses every write once `broken` is set, as a database that went away."""

    broken = False

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask:
        if self.broken:
            raise ConnectionError("the database went away")
        return await super().save(scope, task, events, expected_version)


def test_a_run_whose_failure_cannot_be_stored_ends_without_an_unhandled_exception(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = BreakingStore()
    gate = asyncio.Event()

    async def script(context: RequestContext, events: EventSink) -> None:
        await events.emit(status(TaskState.WORKING))
        await gate.wait()
        await events.emit(artifact("lost"))

    service = AgentService(ScriptedExecutor(script), make_card(), store=store)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await wait_for_state(service, task.id, TaskState.WORKING)
        live = service.runner.acquire(TaskKey(*service.store_scope(ALICE), task.id))
        agent_run = live.run
        service.runner.release(live)
        assert agent_run is not None
        store.broken = True
        gate.set()
        await asyncio.wait((agent_run,))
        assert agent_run.exception() is None
        assert service.runner.live_count() == 0

    with caplog.at_level(logging.ERROR):
        run(main())
    messages = [r.getMessage() for r in caplog.records]
    assert any("could not be failed" in m for m in messages)
