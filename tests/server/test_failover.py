"""What a replica does with a task whose replica died (`parley.server.failover.recover`,
the broker's `recover` of a service): an active task is failed through the runner (stored,
then published: its streams end), or, for a resumable agent, run again on its last user
message; a finished, unknown or still-running task is left as it is."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from parley.model import (
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.server.agent import Agent
from parley.server.context import ANONYMOUS
from parley.server.failover import REPLICA_LOST
from parley.server.service import AgentService
from parley.server.stores.base import TaskKey
from parley.server.task_context import TaskContext
from tests.server.support import ALICE, collect, run, send, serve, settle, text_of, user

T0 = datetime(2025, 3, 15, 18, 30, tzinfo=UTC)


def stored_task(state: TaskState, *history: Message) -> Task:
    return Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(state=state, timestamp=T0),
        history=history,
        generation=1,
    )


def key(service: AgentService) -> TaskKey:
    return TaskKey(*service.store_scope(ALICE), "t-1")


async def seed(service: AgentService, task: Task) -> None:
    await service.store.create(service.store_scope(ALICE), task)


async def state_of(service: AgentService) -> Task:
    stored = await service.store.get(service.store_scope(ALICE), "t-1")
    assert stored is not None
    return stored.task


def echo_agent(*, resumable: bool, seen: list[str] | None = None) -> Agent:
    agent = Agent("Echo", resumable=resumable)

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        if seen is not None:
            seen.append(f"{task.caller.id}:{task.text}")
        return f"again: {task.text}"

    return agent


def test_an_active_task_of_a_lost_replica_fails_with_the_reason() -> None:
    service, _ = serve(echo_agent(resumable=False))

    async def main() -> Task:
        await seed(service, stored_task(TaskState.WORKING, user("go", task_id="t-1")))
        await service.broker.recover(key(service))
        return await state_of(service)

    task = run(main())
    assert task.status.state is TaskState.FAILED
    assert text_of(task.status.message) == REPLICA_LOST


def test_a_submitted_task_is_failed_too() -> None:
    service, _ = serve(echo_agent(resumable=False))

    async def main() -> Task:
        await seed(service, stored_task(TaskState.SUBMITTED))
        await service.broker.recover(key(service))
        return await state_of(service)

    assert run(main()).status.state is TaskState.FAILED


def test_the_failure_is_published_to_the_tasks_streams() -> None:
    """Streams of the task (on this replica too) end with the failure."""
    service, _ = serve(echo_agent(resumable=False))

    async def main() -> list[object]:
        await seed(service, stored_task(TaskState.WORKING))
        subscription = service.broker.subscribe(key(service))
        await service.broker.recover(key(service))
        return list(await asyncio.wait_for(collect(subscription), 1))

    events = run(main())
    [update] = events
    assert isinstance(update, TaskStatusUpdateEvent)
    assert update.status.state is TaskState.FAILED
    assert service.broker.subscriber_count() == 0


def test_finished_interrupted_and_unknown_tasks_are_left_alone() -> None:
    """Only SUBMITTED and WORKING tasks were being run: a task waiting for its client, or
    one that ended, lost nothing with the replica."""
    for state in (TaskState.COMPLETED, TaskState.INPUT_REQUIRED, TaskState.CANCELED):
        service, _ = serve(echo_agent(resumable=False))

        async def main(state: TaskState = state, service: AgentService = service) -> Task:
            await seed(service, stored_task(state))
            await service.broker.recover(key(service))
            await service.broker.recover(TaskKey(*service.store_scope(ALICE), "unknown"))
            return await state_of(service)

        task = run(main())
        assert task.status.state is state
        assert task.generation == 1


def test_a_resumable_agent_runs_again_on_the_last_user_message() -> None:
    seen: list[str] = []
    service, _ = serve(echo_agent(resumable=True, seen=seen))
    history = (
        user("first", task_id="t-1"),
        Message(message_id="a", role=Role.AGENT, parts=(TextPart(text="which?"),)),
        user("second", task_id="t-1"),
    )

    async def main() -> Task:
        await seed(service, stored_task(TaskState.WORKING, *history))
        await service.broker.recover(key(service))
        while (await state_of(service)).status.state is TaskState.WORKING:
            await settle()
        return await state_of(service)

    task = run(main())
    assert task.status.state is TaskState.COMPLETED
    assert task.text == "again: second"
    # who sent the message is not stored with the task: the rerun has no caller
    assert seen == [f"{ANONYMOUS}:second"]


def test_a_resumable_rerun_of_a_task_without_user_message_gets_an_empty_one() -> None:
    seen: list[str] = []
    service, _ = serve(echo_agent(resumable=True, seen=seen))

    async def main() -> Task:
        await seed(service, stored_task(TaskState.SUBMITTED))
        await service.broker.recover(key(service))
        while (await state_of(service)).status.state is not TaskState.COMPLETED:
            await settle()
        return await state_of(service)

    assert run(main()).text == "again: "
    assert seen == [f"{ANONYMOUS}:"]


def test_a_run_still_going_here_is_not_failed() -> None:
    """This replica's own run, whose lease was renewed late: it goes on."""
    release = asyncio.Event()
    agent = Agent("Slow")

    @agent.skill()
    async def slow(task: TaskContext) -> str:
        await task.update("working")
        await release.wait()
        return "done"

    service, _ = serve(agent)

    async def main() -> Task:
        created = await service.send_message(ALICE, send("go", return_immediately=True))
        assert isinstance(created, Task)
        await settle()
        await service.broker.recover(TaskKey(*service.store_scope(ALICE), created.id))
        during = await service.store.get(service.store_scope(ALICE), created.id)
        assert during is not None
        assert during.task.status.state is TaskState.WORKING
        release.set()
        while True:
            after = await service.store.get(service.store_scope(ALICE), created.id)
            assert after is not None
            if after.task.status.state is TaskState.COMPLETED:
                return after.task
            await settle()

    assert run(main()).text == "done"
