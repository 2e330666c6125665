"""Agents sharing one store, over every backend (one memory store, one SQLite file, one
PostgreSQL database): a weather agent and a travel agent, different names and skills,
serve the same caller, and neither lists, reads, cancels, subscribes to, configures push
for, or continues the other's tasks — to each, the other's task does not exist. One agent
starting up (restart recovery) fails its own tasks left running, never the other's.
Tasks stored before agents had namespaces are found with `namespace=""`, and only there."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from parley.model import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from parley.protocol.errors import TaskNotFoundError
from parley.server.agent import Agent
from parley.server.context import CallContext, Caller
from parley.server.service import AgentService
from parley.server.stores import RESTART_MESSAGE, Stores, open_store
from parley.server.task_context import TaskContext
from tests.contracts.support import make_task, opened, run
from tests.server.support import artifact_text, as_task, get, send, text_of, wait_for_state

CALLER = CallContext(caller=Caller(id="alice"), tenant="acme")
"""One caller of both agents (with a tenant: it must come back as it was sent)."""
HOOK = "https://client.example.com/hook"


def weather_agent() -> Agent:
    agent = Agent("Weather", push_notifications=True)

    @agent.skill()
    async def forecast(task: TaskContext) -> str:
        if task.text == "hang":
            await task.update("looking at the sky")
            await asyncio.Event().wait()
        await task.ask("Which city?")
        return f"Sunny in {task.text}"

    return agent


def travel_agent() -> Agent:
    agent = Agent("Travel", push_notifications=True)

    @agent.skill()
    async def book(task: TaskContext) -> str:
        if task.text == "hang":
            await task.update("calling the airline")
            await asyncio.Event().wait()
        return f"Booked {task.text}"

    return agent


def service_of(agent: Agent, stores: Stores, namespace: str | None = None) -> AgentService:
    tasks, push_configs = stores
    return AgentService(
        agent.executor(),
        agent.card("http://test"),
        store=tasks,
        push_store=push_configs,
        namespace=namespace,
    )


@asynccontextmanager
async def two_agents(url: str) -> AsyncIterator[tuple[AgentService, AgentService]]:
    """The weather and the travel agent, started on `url`: on a durable store each opens
    its own stores, as two processes would; in memory they share one pair."""
    shared = open_store(url) if url == "memory" else None
    weather = service_of(weather_agent(), shared or open_store(url))
    travel = service_of(travel_agent(), shared or open_store(url))
    await weather.startup()
    try:
        await travel.startup()
        try:
            yield weather, travel
        finally:
            await travel.shutdown()
    finally:
        await weather.shutdown()


async def waiting(weather: AgentService) -> Task:
    """A weather task waiting for the city (INPUT_REQUIRED)."""
    task = as_task(await weather.send_message(CALLER, send("forecast")))
    assert task.status.state is TaskState.INPUT_REQUIRED
    return task


async def running(service: AgentService) -> Task:
    """A task its agent is working on (WORKING until canceled)."""
    task = as_task(await service.send_message(CALLER, send("hang", return_immediately=True)))
    return await wait_for_state(service, task.id, TaskState.WORKING, ctx=CALLER)


def test_neither_lists_the_others_tasks(store_url: str) -> None:
    async def main() -> None:
        async with two_agents(store_url) as (weather, travel):
            asked = await waiting(weather)
            booked = as_task(await travel.send_message(CALLER, send("Lisbon")))
            weather_list = await weather.list_tasks(CALLER, ListTasksRequest())
            travel_list = await travel.list_tasks(CALLER, ListTasksRequest())
            assert [task.id for task in weather_list.tasks] == [asked.id]
            assert [task.id for task in travel_list.tasks] == [booked.id]
            assert weather_list.total_size == travel_list.total_size == 1

    run(main())


def test_neither_gets_the_others_task(store_url: str) -> None:
    async def main() -> None:
        async with two_agents(store_url) as (weather, travel):
            asked = await waiting(weather)
            booked = as_task(await travel.send_message(CALLER, send("Lisbon")))
            with pytest.raises(TaskNotFoundError):
                await get(travel, asked.id, CALLER)
            with pytest.raises(TaskNotFoundError):
                await get(weather, booked.id, CALLER)
            assert (await get(weather, asked.id, CALLER)).id == asked.id

    run(main())


def test_a_follow_up_with_the_others_task_id_is_not_found(store_url: str) -> None:
    """The reported bug: the travel agent took the weather agent's waiting task."""

    async def main() -> None:
        async with two_agents(store_url) as (weather, travel):
            asked = await waiting(weather)
            with pytest.raises(TaskNotFoundError):
                await travel.send_message(CALLER, send("Paris", task_id=asked.id))
            untouched = await get(weather, asked.id, CALLER)
            assert untouched.status.state is TaskState.INPUT_REQUIRED
            assert len(untouched.history) == len(asked.history)
            done = as_task(await weather.send_message(CALLER, send("Paris", task_id=asked.id)))
            assert done.status.state is TaskState.COMPLETED
            assert artifact_text(done) == "Sunny in Paris"

    run(main())


def test_neither_cancels_the_others_task(store_url: str) -> None:
    async def main() -> None:
        async with two_agents(store_url) as (weather, travel):
            task = await running(weather)
            with pytest.raises(TaskNotFoundError):
                await travel.cancel_task(CALLER, CancelTaskRequest(id=task.id))
            assert (await get(weather, task.id, CALLER)).status.state is TaskState.WORKING
            canceled = await weather.cancel_task(CALLER, CancelTaskRequest(id=task.id))
            assert canceled.status.state is TaskState.CANCELED

    run(main())


def test_neither_subscribes_to_the_others_task(store_url: str) -> None:
    async def main() -> None:
        async with two_agents(store_url) as (weather, travel):
            task = await running(weather)
            request = SubscribeToTaskRequest(id=task.id)
            stream = travel.subscribe_to_task(CALLER, request)
            try:
                with pytest.raises(TaskNotFoundError):
                    await anext(stream)
            finally:
                await stream.aclose()
            own = weather.subscribe_to_task(CALLER, request)
            try:
                assert as_task(await anext(own)).id == task.id
            finally:
                await own.aclose()

    run(main())


def test_neither_configures_push_for_the_others_task(store_url: str) -> None:
    async def main() -> None:
        async with two_agents(store_url) as (weather, travel):
            asked = await waiting(weather)
            hook = TaskPushNotificationConfig(url=HOOK, task_id=asked.id, id="hook")
            with pytest.raises(TaskNotFoundError):
                await travel.create_task_push_notification_config(CALLER, hook)
            await weather.create_task_push_notification_config(CALLER, hook)
            get_request = GetTaskPushNotificationConfigRequest(task_id=asked.id, id="hook")
            list_request = ListTaskPushNotificationConfigsRequest(task_id=asked.id)
            delete = DeleteTaskPushNotificationConfigRequest(task_id=asked.id, id="hook")
            with pytest.raises(TaskNotFoundError):
                await travel.get_task_push_notification_config(CALLER, get_request)
            with pytest.raises(TaskNotFoundError):
                await travel.list_task_push_notification_configs(CALLER, list_request)
            with pytest.raises(TaskNotFoundError):
                await travel.delete_task_push_notification_config(CALLER, delete)
            own = await weather.get_task_push_notification_config(CALLER, get_request)
            assert (own.url, own.tenant) == (HOOK, "acme")  # the caller's tenant, as sent
            listed = await weather.list_task_push_notification_configs(CALLER, list_request)
            assert [(c.id, c.tenant) for c in listed.configs] == [("hook", "acme")]

    run(main())


def test_an_agent_starting_fails_its_own_running_tasks_not_the_others(durable_url: str) -> None:
    async def main() -> None:
        before = service_of(weather_agent(), open_store(durable_url))
        await before.startup()
        try:
            left = await running(before)
        finally:
            await before.shutdown()  # its task stays WORKING, as after a crash
        travel = service_of(travel_agent(), open_store(durable_url))
        await travel.startup()
        try:
            busy = await running(travel)
            stored = await travel.store.get(before.store_scope(CALLER), left.id)
            assert stored is not None
            assert stored.task.status.state is TaskState.WORKING
            weather = service_of(weather_agent(), open_store(durable_url))
            await weather.startup()
            try:
                failed = await get(weather, left.id, CALLER)
                assert failed.status.state is TaskState.FAILED
                assert text_of(failed.status.message) == RESTART_MESSAGE
                assert (await get(travel, busy.id, CALLER)).status.state is TaskState.WORKING
                canceled = await travel.cancel_task(CALLER, CancelTaskRequest(id=busy.id))
                assert canceled.status.state is TaskState.CANCELED
            finally:
                await weather.shutdown()
        finally:
            await travel.shutdown()

    run(main())


def test_tasks_stored_before_namespaces_are_in_the_empty_one(durable_url: str) -> None:
    """A task stored under the plain (tenant, caller), as every task was before: a named
    agent does not see it or recover it; `namespace=""` does both."""

    async def main() -> None:
        async with opened(durable_url) as stores:
            old = await stores.tasks.create(CALLER.scope, make_task("old"))
            assert old.task.status.state is TaskState.WORKING
        weather = service_of(weather_agent(), open_store(durable_url))
        await weather.startup()
        try:
            with pytest.raises(TaskNotFoundError):
                await get(weather, "old", CALLER)
            assert (await weather.list_tasks(CALLER, ListTasksRequest())).tasks == ()
        finally:
            await weather.shutdown()
        unscoped = service_of(weather_agent(), open_store(durable_url), namespace="")
        await unscoped.startup()
        try:
            recovered = await get(unscoped, "old", CALLER)
            assert recovered.status.state is TaskState.FAILED
            assert text_of(recovered.status.message) == RESTART_MESSAGE
            listed = await unscoped.list_tasks(CALLER, ListTasksRequest())
            assert [task.id for task in listed.tasks] == ["old"]
        finally:
            await unscoped.shutdown()

    run(main())
