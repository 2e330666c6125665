"""Helpers of the delivery tests: fast push settings, an `AgentService` over the stores of
a URL with its delivery worker running, an agent whose task waits for the test, and
reading a service's outbox."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from msgspec.structs import replace

from parley.model import (
    AuthenticationInfo,
    GetTaskRequest,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from parley.protocol import lifecycle
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.push.delivery import DeliveryWorker, PushSettings, RetrySchedule
from parley.server.push.outbox import BEHIND, DEAD, PENDING, Delivery, Outbox
from parley.server.push.ssrf import Allow
from parley.server.service import AgentService
from parley.server.stores import open_store
from parley.server.task_context import TaskContext
from tests.push.receiver import Condition, eventually
from tests.server.support import send

T = TypeVar("T")

CTX = CallContext()
"""Every call of these tests: anonymous, A2A 1.0."""

FAST = PushSettings(
    allow=Allow(["127.0.0.1"]),
    schedule=RetrySchedule(base=0.01, cap=0.05, retries=5),
    poll=0.05,
    timeout=0.5,
)


def fast(*, retries: int = 5, client_errors: int = 3, **changes: Any) -> PushSettings:
    """`FAST` with another schedule or other settings."""
    schedule = RetrySchedule(base=0.01, cap=0.05, retries=retries, client_errors=client_errors)
    return replace(FAST, schedule=schedule, **changes)


def run(coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
    """Run `coro` in a fresh event loop, failing with TimeoutError after `timeout` s."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


class Gated:
    """An agent whose task, once created, waits for `go`, then says it is working, emits an
    artifact and completes: four notifications (task, statusUpdate WORKING, artifactUpdate,
    statusUpdate COMPLETED), the last three after `go`."""

    KINDS = ("task", "statusUpdate", "artifactUpdate", "statusUpdate")

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.agent = Agent("Pusher", push_notifications=True)

        @self.agent.skill()
        async def work(task: TaskContext) -> None:
            await self.go.wait()
            await task.update("working")
            await task.artifact(f"result of {task.text}")
            await task.complete()


def service_for(url: str, agent: Agent, push: PushSettings | bool = FAST) -> AgentService:
    """An `AgentService` for `agent` over the stores of `url` (not started)."""
    tasks, push_store = open_store(url)
    card = agent.card("http://test")
    return AgentService(agent.executor(), card, store=tasks, push_store=push_store, push=push)


@asynccontextmanager
async def serving(
    url: str, agent: Agent, push: PushSettings | bool = FAST, *, shutdown: float = 10.0
) -> AsyncIterator[AgentService]:
    """A started `AgentService` (`service_for`); shut down after (a shutdown that hangs
    fails after `shutdown` s)."""
    service = service_for(url, agent, push)
    await service.startup()
    try:
        yield service
    finally:
        await asyncio.wait_for(service.shutdown(), shutdown)


def worker(service: AgentService) -> DeliveryWorker:
    assert service.push_worker is not None
    return service.push_worker


def outbox(service: AgentService) -> Outbox:
    return worker(service).outbox


def config(
    url: str,
    *,
    id: str = "",
    task_id: str = "",
    token: str = "",
    auth: tuple[str, str] | None = None,
) -> TaskPushNotificationConfig:
    authentication = (
        None if auth is None else AuthenticationInfo(scheme=auth[0], credentials=auth[1])
    )
    return TaskPushNotificationConfig(
        url=url, id=id, task_id=task_id, token=token, authentication=authentication
    )


async def start_task(
    service: AgentService,
    push: TaskPushNotificationConfig,
    text: str = "hi",
    ctx: CallContext = CTX,
) -> Task:
    """Send a message carrying `push`, not waiting for the task to finish."""
    request: SendMessageRequest = send(text, return_immediately=True, push=push)
    result = await service.send_message(ctx, request)
    assert isinstance(result, Task)
    return result


async def state(service: AgentService, task_id: str) -> TaskState:
    task = await service.get_task(CTX, GetTaskRequest(id=task_id))
    return task.status.state


async def finished(service: AgentService, task_id: str) -> bool:
    return lifecycle.is_terminal(await state(service, task_id))


async def pending(service: AgentService, config_id: str | None = None) -> list[Delivery]:
    found = await outbox(service).inspect(state=PENDING, limit=1000)
    return [each for each in found if config_id is None or each.config_id == config_id]


async def dead(service: AgentService, config_id: str | None = None) -> list[Delivery]:
    found = await outbox(service).inspect(state=DEAD, limit=1000)
    return [each for each in found if config_id is None or each.config_id == config_id]


async def until(
    service: AgentService, condition: Condition, *, timeout: float = 5.0, what: str = ""
) -> float:
    """`eventually`, failing with what the service's outbox holds."""
    try:
        return await eventually(condition, timeout, what)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; pending: {await described(service)}") from None


async def described(service: AgentService) -> str:
    now = time.time_ns() // 1000
    return (
        "; ".join(
            f"{each.notification_id} to {each.config_id} after {each.attempts} attempts ("
            + (
                "BEHIND its head"
                if each.due_at == BEHIND
                else f"due in {(each.due_at - now) / 1e6:.2f} s"
            )
            + f", last error {each.last_error})"
            for each in await pending(service)
        )
        or "nothing"
    )


def order(notification_id: str) -> tuple[int, int]:
    """(version, index) of a `TASK.VERSION.INDEX` notification id."""
    _, version, index = notification_id.rsplit(".", 2)
    return int(version), int(index)


def in_order(ids: list[str]) -> bool:
    keys = [order(each) for each in ids]
    return keys == sorted(keys) and len(set(keys)) == len(keys)
