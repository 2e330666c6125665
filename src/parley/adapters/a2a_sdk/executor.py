"""`SdkExecutor`: Parley's executor seam over an a2a-sdk `AgentExecutor`. Each run builds the
SDK's `RequestContext` from Parley's and hands the executor an `EventQueue` whose every
enqueued event is converted and emitted to Parley's runner (folded, committed, fanned out)
before `enqueue_event` returns: streaming is event by event, as the SDK's server does it.

Where the two servers' contracts differ, the SDK's is kept: a new task reaches the
executor as `current_task=None` even when Parley created it up front (a non-blocking
send), and a `Task` the executor enqueues for a task that already exists only moves its
state. `cancel` runs after Parley has stopped the run; what the executor enqueues then
is dropped, and Parley writes the CANCELED status itself.
"""

from __future__ import annotations

import logging
from typing import Any

from a2a.auth.user import User
from a2a.server.agent_execution import RequestContext as SdkRequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue

from parley.adapters.a2a_sdk import convert
from parley.model import Task, TaskState, TaskStatusUpdateEvent
from parley.server.context import ANONYMOUS, CallContext, Caller
from parley.server.execution import EventSink, RequestContext
from parley.server.live import untouched

log = logging.getLogger("parley.adapters")


class SdkExecutor:
    """Runs an a2a-sdk `AgentExecutor` (`execute(context, event_queue)`, `cancel`) as a
    Parley executor."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        fresh = context.task is None or _fresh(context)
        queue = _Queue(events, context, context.task)
        sdk_context = SdkRequestContext(
            call_context=_call_context(context.call),
            request=convert.request(context),
            task_id=context.task_id,
            context_id=context.context_id,
            task=None if fresh or context.task is None else convert.task(context.task),
        )
        try:
            await self.executor.execute(sdk_context, queue)
        except Exception as exc:
            translated = convert.error(exc)
            if translated is exc:
                raise
            raise translated from exc

    async def cancel(self, context: RequestContext) -> None:
        sdk_context = SdkRequestContext(
            call_context=_call_context(context.call),
            task_id=context.task_id,
            context_id=context.context_id,
            task=convert.task(context.task) if context.task is not None else None,
        )
        await self.executor.cancel(sdk_context, _Dropped(context.task_id))


def _fresh(context: RequestContext) -> bool:
    """A task created up front for this very message (a non-blocking send), untouched."""
    task = context.task
    if task is None or not untouched(task):
        return False
    return all(message.message_id == context.message.message_id for message in task.history)


class _Queue(EventQueue):  # type: ignore[misc]  # the SDK is untyped here
    """The `EventQueue` an executor gets: each event goes to Parley's runner at once."""

    def __init__(self, events: EventSink, context: RequestContext, task: Task | None) -> None:
        self._events = events
        self._task_id = context.task_id
        self._context_id = context.context_id
        self._state: TaskState | None = task.status.state if task is not None else None

    async def enqueue_event(self, event: Any) -> None:
        value = convert.event(event, self._task_id, self._context_id)
        if isinstance(value, Task) and self._state is not None:
            # The task exists already: a snapshot of it can only move its state.
            if value.status.state is self._state:
                return
            value = TaskStatusUpdateEvent(
                task_id=self._task_id, context_id=self._context_id, status=value.status
            )
        if isinstance(value, (Task, TaskStatusUpdateEvent)):
            self._state = value.status.state
        await self._events.emit(value)


class _Dropped(EventQueue):  # type: ignore[misc]  # the SDK is untyped here
    """The queue of a `cancel`: Parley writes the CANCELED status once the hook returns."""

    def __init__(self, task_id: str) -> None:
        self._task_id = task_id

    async def enqueue_event(self, event: Any) -> None:
        log.debug("task %s: an event of the executor's cancel is dropped", self._task_id)


class _User(User):  # type: ignore[misc]  # the SDK is untyped here
    """Parley's authenticated caller as the SDK's `User`."""

    def __init__(self, caller: Caller) -> None:
        self._caller = caller

    @property
    def is_authenticated(self) -> bool:
        return self._caller.id != ANONYMOUS

    @property
    def user_name(self) -> str:
        return self._caller.id


def _call_context(call: CallContext) -> Any:
    return ServerCallContext(
        state={"headers": dict(call.headers), "caller": call.caller},
        user=_User(call.caller),
        tenant=call.tenant,
        requested_extensions=set(call.requested_extensions),
    )
