"""End to end over the SQLite store: an AgentService is stopped and a new one opened on
the same file finds every task (and push config) where it was; a task left WORKING by
the stopped service is FAILED by the new one's startup (the restart policy)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from parley.model import (
    GetTaskPushNotificationConfigRequest,
    ListTasksRequest,
    TaskPushNotificationConfig,
    TaskState,
    TextPart,
)
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.stores import RESTART_MESSAGE, open_store
from parley.server.task_context import TaskContext
from tests.contracts.support import run
from tests.server.support import ALICE, BOB, as_task, get, send, text_of, wait_for_state


def make_agent() -> Agent:
    agent = Agent("Durable", push_notifications=True)

    @agent.skill()
    async def answer(task: TaskContext) -> str:
        if task.text == "hang":
            await task.update("on it")
            await asyncio.Event().wait()
        return f"you said {task.text}"

    return agent


def service_on(path: Path) -> AgentService:
    agent = make_agent()
    tasks, push = open_store(f"sqlite:///{path}")
    return AgentService(agent.executor(), agent.card("http://test"), store=tasks, push_store=push)


def test_tasks_survive_a_restart_and_running_ones_fail(tmp_path: Path) -> None:
    database = tmp_path / "state" / "parley.db"

    async def first_life() -> tuple[str, str]:
        service = service_on(database)
        await service.startup()
        try:
            done = as_task(await service.send_message(ALICE, send("hello")))
            assert done.status.state is TaskState.COMPLETED
            hook = TaskPushNotificationConfig(url="https://hooks.example/1", task_id=done.id)
            await service.create_task_push_notification_config(ALICE, hook)
            hanging = as_task(
                await service.send_message(ALICE, send("hang", return_immediately=True))
            )
            await wait_for_state(service, hanging.id, TaskState.WORKING)
        finally:
            await service.shutdown()
        return done.id, hanging.id

    async def second_life(done_id: str, hanging_id: str) -> None:
        service = service_on(database)
        await service.startup()
        try:
            done = await get(service, done_id)
            assert done.status.state is TaskState.COMPLETED
            assert [text_of(m) for m in done.history] == ["hello"]
            assert done.artifacts[0].parts == (TextPart(text="you said hello"),)
            config = await service.get_task_push_notification_config(
                ALICE, GetTaskPushNotificationConfigRequest(task_id=done_id, id=done_id)
            )
            assert config.url == "https://hooks.example/1"
            failed = await get(service, hanging_id)
            assert failed.status.state is TaskState.FAILED
            assert text_of(failed.status.message) == RESTART_MESSAGE
            assert [text_of(m) for m in failed.history] == ["hang", "on it"]
            listed = await service.list_tasks(ALICE, ListTasksRequest())
            assert [t.id for t in listed.tasks] == [hanging_id, done_id]
            assert (await service.list_tasks(BOB, ListTasksRequest())).tasks == ()
            # the restored task takes no more messages; a new one works as before
            again = as_task(await service.send_message(ALICE, send("again")))
            assert again.status.state is TaskState.COMPLETED
        finally:
            await service.shutdown()

    done_id, hanging_id = run(first_life())
    run(second_life(done_id, hanging_id))


def test_recovery_can_be_turned_off(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'parley.db'}"

    async def main() -> None:
        agent = make_agent()
        tasks, push = open_store(url)
        service = AgentService(
            agent.executor(), agent.card("http://t"), store=tasks, push_store=push
        )
        await service.startup()
        hanging = as_task(await service.send_message(ALICE, send("hang", return_immediately=True)))
        await wait_for_state(service, hanging.id, TaskState.WORKING)
        await service.shutdown()
        tasks, push = open_store(url + "?recover=false")
        service = AgentService(
            agent.executor(), agent.card("http://t"), store=tasks, push_store=push
        )
        await service.startup()
        try:
            assert (await get(service, hanging.id)).status.state is TaskState.WORKING
        finally:
            await service.shutdown()

    run(main())
