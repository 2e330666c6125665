"""Checks of SubscribeToTask on one interface, when the card declares streaming: the
stream starts with the Task and ends when it is terminal; a terminal task cannot be
subscribed to (REFERENCE R-SUB)."""

from __future__ import annotations

import uuid

import httpx

from parley.conformance.context import InterfaceContext, NoTaskError
from parley.conformance.exchange import Answer, StreamAnswer
from parley.conformance.results import CheckFailedError, CheckSkippedError, Level, Registry
from parley.model import (
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskStatusUpdateEvent,
)
from parley.protocol import errors as e
from parley.protocol import lifecycle
from parley.protocol.operations import Operation

checks = Registry()


def _streaming(context: InterfaceContext) -> None:
    if not context.card.capabilities.streaming:
        raise CheckSkippedError("the card does not declare streaming")


def refusal(answer: StreamAnswer) -> Answer:
    """A stream's first error as a unary error answer, to judge against the error table."""
    error = answer.errors[0] if answer.errors else None
    refused = Answer(answer.status, answer.content_type, httpx.Headers(), body=error)
    refused.error, refused.text, refused.grpc_code = error, answer.text, answer.grpc_code
    return refused


@checks.interface(
    "subscribe.terminal",
    "R-SUB-3",
    Level.MUST,
    "subscribing to a terminal task is UnsupportedOperationError",
)
async def subscribe_terminal(context: InterfaceContext) -> str:
    _streaming(context)
    try:
        task = await context.terminal_task()
    except NoTaskError as exc:
        raise CheckSkippedError(str(exc)) from exc
    answer = await context.stream(Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id))
    if answer.events:
        raise CheckFailedError(f"the subscription streams {len(answer.events)} events")
    return context.expect_error(refusal(answer), e.UnsupportedOperationError)


@checks.interface(
    "subscribe.first-task",
    "R-SUB-2",
    Level.MUST,
    "a subscription starts with the Task and ends when it is terminal",
)
async def subscribe_first_task(context: InterfaceContext) -> str:
    _streaming(context)
    configuration = SendMessageConfiguration(return_immediately=True)
    request = SendMessageRequest(message=context.message(), configuration=configuration)
    task = context.decoded(
        Operation.SEND_MESSAGE, await context.call(Operation.SEND_MESSAGE, request)
    )
    if not isinstance(task, Task):
        raise CheckSkippedError("the agent answered the checker's message with a Message")
    if lifecycle.is_terminal(task.status.state):
        raise CheckSkippedError(f"the task was {task.status.state.name} at once: none to follow")
    answer = await context.stream(Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id))
    if answer.errors and not answer.events:
        raise CheckSkippedError("the task ended before the subscription: none to follow")
    if not answer.events:
        raise CheckFailedError("the subscription has no event")
    events = [context.subject.codec.decode_event(payload) for payload in answer.events]
    first, last = events[0], events[-1]
    if not isinstance(first, Task) or first.id != task.id:
        raise CheckFailedError(f"the first event is a {type(first).__name__}, not the Task")
    state = last.status.state if isinstance(last, Task | TaskStatusUpdateEvent) else None
    if state is None or not lifecycle.is_terminal(state):
        now = state.name if state else "running"
        return f"Task first; the task is still {now} (R-SUB-1 is not exercised)"
    if not answer.ended:
        raise CheckFailedError(
            f"the stream stays open after the task became {state.name} (R-SUB-1)"
        )
    return f"Task first, {len(events) - 1} updates, ends {state.name}"


@checks.interface(
    "subscribe.not-found",
    "R-SUB-4",
    Level.MUST,
    "subscribing to an unknown task is TaskNotFoundError",
)
async def subscribe_not_found(context: InterfaceContext) -> str:
    _streaming(context)
    request = SubscribeToTaskRequest(id=f"parley-check-missing-{uuid.uuid4().hex}")
    answer = await context.stream(Operation.SUBSCRIBE_TO_TASK, request)
    if answer.events:
        raise CheckFailedError(f"the subscription streams {len(answer.events)} events")
    return context.expect_error(refusal(answer), e.TaskNotFoundError)
