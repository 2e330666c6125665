"""The low-level agent interface: an executor receives each user message with its
context and emits events. Framework integrations implement this; the authoring API
(`parley.server.agent`) is built on it.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from parley.model import (
    Message,
    SendMessageConfiguration,
    StreamEvent,
    Task,
)
from parley.server.context import CallContext


class RequestContext(msgspec.Struct, frozen=True):
    """One run of the agent: the user's message and the task it belongs to.

    `task` is the task as it stands before this message (its history includes the
    message), or None when the agent may still answer with a direct Message.
    (A frozen Struct, not a frozen dataclass: made in C, where the dataclass's
    `__init__` set each field through `object.__setattr__`: 1.7k instructions, not 15k.)
    """

    message: Message
    task_id: str
    context_id: str
    call: CallContext
    task: Task | None = None
    configuration: SendMessageConfiguration | None = None
    metadata: dict[str, object] | None = None


class EventSink(Protocol):
    """Where an executor sends its events, in order. Each event is folded into the task,
    committed to the store and fanned out before `emit` returns."""

    async def emit(self, event: StreamEvent) -> None: ...


class AgentExecutor(Protocol):
    """An agent. `execute` runs for one user message and returns when the agent is done
    with it (task terminal or interrupted, or a direct Message sent). `cancel` is called
    when a client cancels a task whose run the runner has already stopped."""

    async def execute(self, context: RequestContext, events: EventSink) -> None: ...

    async def cancel(self, context: RequestContext) -> None: ...
