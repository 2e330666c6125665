"""Helpers for the server runtime tests: run coroutines without pytest-asyncio, build
requests and cards, collect streams, and script low-level executors."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResult,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.server.agent import Agent, FunctionExecutor
from parley.server.broker import EventBroker
from parley.server.context import CallContext, Caller
from parley.server.execution import AgentExecutor, EventSink, RequestContext
from parley.server.service import AgentService

T = TypeVar("T")

TIMEOUT = 2.0
"""Upper bound of any one test's event loop: a hang fails the test instead of the suite."""

T0 = datetime(2025, 3, 15, 18, 30, tzinfo=UTC)

ALICE = CallContext(caller=Caller(id="alice"))
BOB = CallContext(caller=Caller(id="bob"))
ALICE_OTHER_TENANT = CallContext(caller=Caller(id="alice"), tenant="other")

_message_ids = itertools.count()


def run(coro: Coroutine[Any, Any, T], timeout: float = TIMEOUT) -> T:
    """Run `coro` in a fresh event loop, failing with TimeoutError after `timeout` s."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def user(
    text: str = "hi",
    *,
    task_id: str = "",
    context_id: str = "",
    message_id: str = "",
    parts: tuple[Part, ...] = (),
    metadata: dict[str, Any] | None = None,
) -> Message:
    """A client message (a fresh message id unless one is given)."""
    return Message(
        message_id=message_id or f"msg-{next(_message_ids)}",
        role=Role.USER,
        parts=parts or (TextPart(text=text),),
        task_id=task_id,
        context_id=context_id,
        metadata=metadata,
    )


def send(
    text: str = "hi",
    *,
    task_id: str = "",
    context_id: str = "",
    message_id: str = "",
    return_immediately: bool = False,
    history_length: int | None = None,
    push: TaskPushNotificationConfig | None = None,
    metadata: dict[str, Any] | None = None,
) -> SendMessageRequest:
    """A SendMessageRequest carrying one text message."""
    configuration = None
    if return_immediately or history_length is not None or push is not None:
        configuration = SendMessageConfiguration(
            return_immediately=return_immediately,
            history_length=history_length,
            push_notification_config=push,
        )
    return SendMessageRequest(
        message=user(text, task_id=task_id, context_id=context_id, message_id=message_id),
        configuration=configuration,
        metadata=metadata,
    )


def make_card(
    *, streaming: bool = True, push: bool = False, extended: bool | None = None
) -> AgentCard:
    return AgentCard(
        name="Test",
        description="A test agent",
        version="1.0.0",
        supported_interfaces=(
            AgentInterface(url="http://test", protocol_binding="JSONRPC", protocol_version="1.0"),
        ),
        capabilities=AgentCapabilities(
            streaming=streaming, push_notifications=push, extended_agent_card=extended
        ),
        default_input_modes=("text/plain",),
        default_output_modes=("text/plain",),
        skills=(),
    )


def serve(
    agent: Agent,
    *,
    buffer_size: int = 1024,
    clock: Callable[[], datetime] | None = None,
    **card_changes: Any,
) -> tuple[AgentService, FunctionExecutor]:
    """An AgentService over an authoring-API agent, and its executor (for session counts)."""
    executor = agent.executor()
    service = AgentService(
        executor,
        agent.card("http://test", **card_changes),
        broker=EventBroker(buffer_size=buffer_size),
    )
    if clock is not None:
        service.runner.clock = clock
    return service, executor


def serve_executor(
    executor: AgentExecutor, *, streaming: bool = True, push: bool = False
) -> AgentService:
    return AgentService(executor, make_card(streaming=streaming, push=push))


def ticking_clock(
    start: datetime = T0, step: timedelta = timedelta(seconds=1)
) -> Callable[[], datetime]:
    """A clock that moves `step` forward at every reading."""
    moments: Iterator[datetime] = (start + step * i for i in itertools.count())
    return lambda: next(moments)


def as_task(result: SendMessageResult | StreamEvent) -> Task:
    assert isinstance(result, Task), f"expected a Task, got {type(result).__name__}"
    return result


def as_message(result: SendMessageResult | StreamEvent) -> Message:
    assert isinstance(result, Message), f"expected a Message, got {type(result).__name__}"
    return result


async def collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


def kinds(events: list[StreamEvent]) -> list[str]:
    """A compact picture of a stream: `task:STATE`, `status:STATE`, `artifact`, `message`."""
    out: list[str] = []
    for event in events:
        if isinstance(event, Task):
            out.append(f"task:{event.status.state.name}")
        elif isinstance(event, TaskStatusUpdateEvent):
            out.append(f"status:{event.status.state.name}")
        elif isinstance(event, TaskArtifactUpdateEvent):
            out.append("artifact")
        else:
            out.append("message")
    return out


def text_of(message: Message | None) -> str:
    assert message is not None
    return "".join(p.text for p in message.parts if isinstance(p, TextPart))


def artifact_text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts if isinstance(p, TextPart))


async def get(service: AgentService, task_id: str, ctx: CallContext = ALICE) -> Task:
    return await service.get_task(ctx, GetTaskRequest(id=task_id))


async def wait_for_state(
    service: AgentService, task_id: str, *states: TaskState, ctx: CallContext = ALICE
) -> Task:
    """Poll (yielding to the loop) until the stored task is in one of `states`."""
    while True:
        stored = await service.store.get(service.store_scope(ctx), task_id)
        if stored is not None and stored.task.status.state in states:
            return stored.task
        await asyncio.sleep(0.001)


async def settle() -> None:
    """Let every ready callback run (a few loop iterations)."""
    for _ in range(20):
        await asyncio.sleep(0)


Script = Callable[[RequestContext, EventSink], Awaitable[None]]


class ScriptedExecutor:
    """A low-level AgentExecutor running `script` for every message; records cancels."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.contexts: list[RequestContext] = []
        self.canceled: list[str] = []

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        self.contexts.append(context)
        await self.script(context, events)

    async def cancel(self, context: RequestContext) -> None:
        self.canceled.append(context.task_id)
