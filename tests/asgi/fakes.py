"""A small fake RequestHandler for the binding tests (the real one is tested elsewhere):
a dict of tasks, push configs, streams that record being closed, and every call's context.

Behaviour is keyed on the text of the message's first part: `reply` answers a Message,
`boom` raises a RuntimeError; for streams `hang` (the Task, then silence), `fail-first`
(an error before any event), `fail-mid` / `crash-mid` (the Task, then an A2AError / a
RuntimeError), `empty` (no events), `unencodable` (the Task, then one no codec can
write); anything else streams the Task, then COMPLETED.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    HTTPAuthSecurityScheme,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Model,
    Role,
    SecurityRequirement,
    SendMessageRequest,
    SendMessageResult,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.errors import (
    InvalidAgentResponseError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.server.context import CallContext

ECHO_EXTENSION = "urn:test:echo/v1"
TRACE_EXTENSION = "urn:test:trace/v1"
REQUIRED_EXTENSION = "urn:test:required/v1"

CARD = AgentCard(
    name="Fake agent",
    description="A fake for binding tests",
    version="2.0.0",
    supported_interfaces=(
        AgentInterface(
            url="http://testserver/", protocol_binding="JSONRPC", protocol_version="1.0"
        ),
        AgentInterface(
            url="http://testserver/", protocol_binding="HTTP+JSON", protocol_version="1.0"
        ),
        AgentInterface(
            url="http://testserver/", protocol_binding="JSONRPC", protocol_version="0.3"
        ),
        AgentInterface(
            url="http://testserver/", protocol_binding="HTTP+JSON", protocol_version="0.3"
        ),
    ),
    capabilities=AgentCapabilities(
        streaming=True,
        push_notifications=True,
        extended_agent_card=True,
        extensions=(AgentExtension(uri=ECHO_EXTENSION), AgentExtension(uri=TRACE_EXTENSION)),
    ),
    default_input_modes=("text/plain",),
    default_output_modes=("text/plain",),
    skills=(
        AgentSkill(
            id="echo",
            name="Echo",
            description="Echoes",
            tags=("test",),
            security_requirements=(SecurityRequirement(schemes={"bearer": ("read",)}),),
        ),
    ),
    security_schemes={"bearer": HTTPAuthSecurityScheme(scheme="Bearer")},
    security_requirements=(SecurityRequirement(schemes={"bearer": ()}),),
)

Step = StreamEvent | Exception | float | None
"""One step of a fake stream: an event, an error to raise, a pause (seconds), or None:
wait until cancelled."""


class FakeStream:
    """An async iterator over steps that records `aclose` and cancellation."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self.closed = False
        self.cancelled = False
        self.delivered: list[StreamEvent] = []

    def __aiter__(self) -> FakeStream:
        return self

    async def __anext__(self) -> StreamEvent:
        while self.steps and not self.closed:
            step = self.steps.pop(0)
            if step is None:
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    self.cancelled = True
                    raise
            elif isinstance(step, float):
                await asyncio.sleep(step)
            elif isinstance(step, Exception):
                raise step
            else:
                self.delivered.append(step)
                return step
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self.closed = True


def user_message(text: str, message_id: str = "m-1") -> Message:
    return Message(message_id=message_id, role=Role.USER, parts=(TextPart(text=text),))


def task(
    task_id: str,
    state: TaskState = TaskState.WORKING,
    context_id: str = "ctx-1",
    metadata: dict[str, Any] | None = None,
) -> Task:
    return Task(
        id=task_id, context_id=context_id, status=TaskStatus(state=state), metadata=metadata
    )


def _not_found(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(f"Task {task_id} not found", metadata={"taskId": task_id})


def _text(request: SendMessageRequest) -> str:
    part = request.message.parts[0] if request.message.parts else None
    return part.text if isinstance(part, TextPart) else ""


@dataclass
class FakeHandler:
    """Implements `parley.server.handler.RequestHandler` over a dict of tasks."""

    card: AgentCard = CARD
    tasks: dict[str, Task] = field(
        default_factory=lambda: {
            "task-1": task("task-1"),
            "done-1": task("done-1", TaskState.COMPLETED),
        }
    )
    configs: dict[tuple[str, str], TaskPushNotificationConfig] = field(default_factory=dict)
    calls: list[tuple[str, CallContext, Model]] = field(default_factory=list)
    streams: list[FakeStream] = field(default_factory=list)
    started: bool = False
    stopped: bool = False

    def _record(self, name: str, ctx: CallContext, request: Model) -> None:
        self.calls.append((name, ctx, request))

    def _task(self, task_id: str) -> Task:
        found = self.tasks.get(task_id)
        if found is None:
            raise _not_found(task_id)
        return found

    async def startup(self) -> None:
        self.started = True

    async def shutdown(self) -> None:
        self.stopped = True

    async def send_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> SendMessageResult:
        self._record("send_message", ctx, request)
        text = _text(request)
        if text == "boom":
            raise RuntimeError("secret internals")
        if text == "reply":
            return Message(message_id="r-1", role=Role.AGENT, parts=(TextPart(text="hi"),))
        new = task(f"task-{len(self.tasks) + 1}", TaskState.COMPLETED)
        self.tasks[new.id] = new
        return new

    def _stream(self, steps: Sequence[Step]) -> FakeStream:
        stream = FakeStream(steps)
        self.streams.append(stream)
        return stream

    def send_streaming_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> AsyncIterator[StreamEvent]:
        self._record("send_streaming_message", ctx, request)
        first = task("s-1", TaskState.SUBMITTED)
        done = TaskStatusUpdateEvent(
            task_id="s-1", context_id="ctx-1", status=TaskStatus(state=TaskState.COMPLETED)
        )
        steps: dict[str, list[Step]] = {
            "hang": [first, None],
            "fail-first": [UnsupportedOperationError("No streams today")],
            "fail-mid": [first, InvalidAgentResponseError("The agent went astray")],
            "crash-mid": [first, RuntimeError("secret internals")],
            "empty": [],
            "unencodable": [first, task("s-1", metadata={"bad": object()}), done],
        }
        return self._stream(steps.get(_text(request), [first, done]))

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        self._record("get_task", ctx, request)
        return self._task(request.id)

    async def list_tasks(self, ctx: CallContext, request: ListTasksRequest) -> ListTasksResponse:
        self._record("list_tasks", ctx, request)
        tasks = tuple(self.tasks.values())
        return ListTasksResponse(
            tasks=tasks, next_page_token="", page_size=len(tasks), total_size=len(tasks)
        )

    async def cancel_task(self, ctx: CallContext, request: CancelTaskRequest) -> Task:
        self._record("cancel_task", ctx, request)
        current = self._task(request.id)
        if current.status.state is not TaskState.WORKING:
            raise TaskNotCancelableError(metadata={"taskId": request.id})
        canceled = task(current.id, TaskState.CANCELED, current.context_id)
        self.tasks[current.id] = canceled
        return canceled

    def subscribe_to_task(
        self, ctx: CallContext, request: SubscribeToTaskRequest
    ) -> AsyncIterator[StreamEvent]:
        self._record("subscribe_to_task", ctx, request)
        found = self.tasks.get(request.id)
        return self._stream([_not_found(request.id)] if found is None else [found, None])

    async def create_task_push_notification_config(
        self, ctx: CallContext, request: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        self._record("create_task_push_notification_config", ctx, request)
        self._task(request.task_id)
        config_id = request.id or f"cfg-{len(self.configs) + 1}"
        stored = TaskPushNotificationConfig(url=request.url, task_id=request.task_id, id=config_id)
        self.configs[(request.task_id, config_id)] = stored
        return stored

    async def get_task_push_notification_config(
        self, ctx: CallContext, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        self._record("get_task_push_notification_config", ctx, request)
        found = self.configs.get((request.task_id, request.id))
        if found is None:
            raise _not_found(request.task_id)
        return found

    async def list_task_push_notification_configs(
        self, ctx: CallContext, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        self._record("list_task_push_notification_configs", ctx, request)
        self._task(request.task_id)
        found = tuple(c for (t, _), c in self.configs.items() if t == request.task_id)
        return ListTaskPushNotificationConfigsResponse(configs=found)

    async def delete_task_push_notification_config(
        self, ctx: CallContext, request: DeleteTaskPushNotificationConfigRequest
    ) -> None:
        self._record("delete_task_push_notification_config", ctx, request)
        if self.configs.pop((request.task_id, request.id), None) is None:
            raise _not_found(request.task_id)

    async def get_extended_agent_card(
        self, ctx: CallContext, request: GetExtendedAgentCardRequest
    ) -> AgentCard:
        self._record("get_extended_agent_card", ctx, request)
        return self.card

    def last(self, name: str) -> tuple[CallContext, Model]:
        """The context and request of the latest call of a handler method."""
        for called, ctx, request in reversed(self.calls):
            if called == name:
                return ctx, request
        raise AssertionError(f"{name} was not called")
