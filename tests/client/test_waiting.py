"""Following a task to the end of its turn (`parley.client.waiting`): a blocking send
answered with a task still running (as fasta2a answers) is followed, by SubscribeToTask
or by polling GetTask; a follow-up whose request outlives its timeout is not lost; a hard
deadline raises ClientTimeoutError carrying the task id.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from msgspec.structs import replace

from parley.client import Client, ClientTimeoutError
from parley.model import (
    AgentCard,
    GetTaskRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResult,
    Task,
    TaskState,
)
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from parley.testing import InMemoryTransport

pytestmark = pytest.mark.anyio

QUICK = 0.05
"""Timeouts, deadlines and `visible_after` of these tests, in seconds."""


class Setting:
    """An agent whose skills wait for `gate`, served in process."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        agent = Agent("Waiter")

        @agent.skill()
        async def slow(task: TaskContext) -> str:
            await self.gate.wait()
            return "done"

        @agent.skill()
        async def ask(task: TaskContext) -> str:
            name = (await task.ask("Who?")).text
            await self.gate.wait()
            return f"hi {name}"

        self.service = AgentService(
            agent.executor(), agent.card("http://test"), visible_after=QUICK
        )


class Hasty:
    """A server that answers a blocking send at once, with the task as it stands (as
    fasta2a does); counts GetTask calls."""

    def __init__(self, service: AgentService) -> None:
        self.service = service
        self.gets = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    async def send_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> SendMessageResult:
        configuration = request.configuration or SendMessageConfiguration()
        configuration = replace(configuration, return_immediately=True)
        return await self.service.send_message(ctx, replace(request, configuration=configuration))

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        self.gets += 1
        return await self.service.get_task(ctx, request)


@pytest.fixture
async def setting() -> AsyncIterator[Setting]:
    setting = Setting()
    try:
        yield setting
    finally:
        setting.gate.set()
        await setting.service.shutdown()


def client_of(handler: Any, card: AgentCard, *, streaming: bool = True) -> Client:
    capabilities = replace(card.capabilities, streaming=streaming)
    return Client(InMemoryTransport(handler), card=replace(card, capabilities=capabilities))


async def until(check: Callable[[], bool]) -> None:
    while not check():
        await asyncio.sleep(0.005)


@pytest.mark.parametrize("streaming", [True, False], ids=["subscribed", "polled"])
async def test_a_non_terminal_answer_to_a_blocking_send_is_followed(
    setting: Setting, streaming: bool
) -> None:
    """R-SEND-2 as the client sees it: the answer of a blocking send is the task at the end
    of its turn, even from a server that answered before it."""
    hasty = Hasty(setting.service)
    broker = setting.service.broker

    async def open_the_gate() -> None:
        if streaming:
            await until(lambda: broker.subscriber_count() == 1)
        else:
            await until(lambda: hasty.gets == 1)
        setting.gate.set()

    async with client_of(hasty, setting.service.card, streaming=streaming) as client:
        opener = asyncio.ensure_future(open_the_gate())
        result = await client.send("work", skill="slow")
        await opener
    assert isinstance(result, Task)
    assert result.status.state is TaskState.COMPLETED
    assert result.text == "done"


async def test_follow_false_returns_the_servers_answer_as_it_is(setting: Setting) -> None:
    async with client_of(Hasty(setting.service), setting.service.card) as client:
        result = await client.send("work", skill="slow", follow=False)
    assert isinstance(result, Task)
    assert result.status.state is TaskState.SUBMITTED


async def test_a_follow_up_past_its_timeout_is_followed_to_the_end(setting: Setting) -> None:
    """The request of a follow-up times out while the agent works: the client knows the
    task's id, so it subscribes and returns the task once it ended."""
    broker = setting.service.broker
    async with client_of(setting.service, setting.service.card) as client:
        asked = await client.send("hello", skill="ask")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.INPUT_REQUIRED

        async def open_the_gate() -> None:
            await until(lambda: broker.subscriber_count() == 1)  # the client follows
            setting.gate.set()

        opener = asyncio.ensure_future(open_the_gate())
        result = await client.send("Ada", task_id=asked.id, timeout=QUICK)
        await opener
    assert isinstance(result, Task)
    assert result.id == asked.id
    assert result.status.state is TaskState.COMPLETED
    assert result.text == "hi Ada"


async def test_a_hard_deadline_raises_with_the_task_id(setting: Setting) -> None:
    hasty = Hasty(setting.service)
    async with client_of(hasty, setting.service.card) as client:
        with pytest.raises(ClientTimeoutError) as raised:
            await client.send("work", skill="slow", deadline=QUICK * 2)
        running = await client.list_tasks()
    (task,) = running.tasks
    assert raised.value.task_id == task.id
    assert task.id in raised.value.message
    assert task.status.state is TaskState.SUBMITTED  # still running: not lost


async def test_a_deadline_on_a_new_blocking_send_cannot_know_the_task(setting: Setting) -> None:
    """A blocking send tells a new task's id only with its answer."""
    async with client_of(setting.service, setting.service.card) as client:
        with pytest.raises(ClientTimeoutError) as raised:
            await client.send("work", skill="slow", deadline=QUICK)
    assert raised.value.task_id == ""


async def test_a_follow_ups_timeout_carries_its_task_id_when_not_followed(
    setting: Setting,
) -> None:
    async with client_of(setting.service, setting.service.card) as client:
        asked = await client.send("hello", skill="ask")
        assert isinstance(asked, Task)
        with pytest.raises(ClientTimeoutError) as raised:
            await client.send("Ada", task_id=asked.id, timeout=QUICK, follow=False)
    assert raised.value.task_id == asked.id


@pytest.mark.parametrize("streaming", [True, False], ids=["subscribed", "polled"])
async def test_wait_follows_a_task_sent_without_waiting(setting: Setting, streaming: bool) -> None:
    async with client_of(setting.service, setting.service.card, streaming=streaming) as client:
        started = await client.send("work", skill="slow", return_immediately=True)
        assert isinstance(started, Task)
        with pytest.raises(ClientTimeoutError) as raised:
            await client.wait(started, deadline=QUICK)
        assert raised.value.task_id == started.id
        setting.gate.set()
        finished = await client.wait(started.id)
    assert finished.status.state is TaskState.COMPLETED
    assert finished.text == "done"


async def test_wait_on_a_finished_task_returns_it(setting: Setting) -> None:
    setting.gate.set()
    async with client_of(setting.service, setting.service.card) as client:
        done = await client.send("work", skill="slow")
        assert isinstance(done, Task)
        again = await client.wait(done.id)
    assert again.status.state is TaskState.COMPLETED
