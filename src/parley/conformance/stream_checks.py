"""Checks of streaming on one interface: SSE framing, the first and last events, and
capability truth — streaming declared means streams work, undeclared means they are
refused (REFERENCE R-STREAM, R-CAP)."""

from __future__ import annotations

from typing import Any

from parley.conformance.context import InterfaceContext
from parley.conformance.exchange import StreamAnswer
from parley.conformance.results import CheckFailedError, CheckSkippedError, Level, Registry
from parley.model import Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from parley.protocol import lifecycle
from parley.protocol.operations import Operation

checks = Registry()


async def _stream(context: InterfaceContext) -> StreamAnswer:
    return await context.stream(Operation.SEND_STREAMING_MESSAGE, context.send_request())


@checks.interface(
    "stream.framing", "R-STREAM-1", Level.MUST, "a declared stream is a stream of events"
)
async def stream_framing(context: InterfaceContext) -> str:
    if not context.card.capabilities.streaming:
        raise CheckSkippedError("the card does not declare streaming")
    answer = await _stream(context)
    problem = context.subject.framing_problem(answer)
    if problem is not None:
        raise CheckFailedError(problem)
    if answer.malformed:
        raise CheckFailedError(
            f"an event's data is not a JSON answer: {answer.malformed[0][:120]!r}"
        )
    if answer.errors:
        raise CheckFailedError(f"the stream carries an error: {answer.errors[0]!r}"[:200])
    if not answer.events:
        raise CheckFailedError("the stream has no event")
    return f"{len(answer.events)} events"


@checks.interface(
    "stream.order",
    "R-STREAM-3",
    Level.MUST,
    "a stream starts with the Task or Message, ends terminal",
)
async def stream_order(context: InterfaceContext) -> str:
    if not context.card.capabilities.streaming:
        raise CheckSkippedError("the card does not declare streaming")
    answer = await _stream(context)
    if not answer.events:
        raise CheckSkippedError("no events to order (see stream.framing)")
    events = [_decoded(context, payload) for payload in answer.events]
    first, last = events[0], events[-1]
    if isinstance(first, Message):
        if len(events) != 1:
            raise CheckFailedError(
                f"a Message stream holds {len(events)} events, not one (R-STREAM-2)"
            )
        return "one Message"
    if not isinstance(first, Task):
        raise CheckFailedError(f"the first event is a {type(first).__name__}, not the Task")
    if any(isinstance(event, Task | Message) for event in events[1:]):
        raise CheckFailedError("a Task or Message after the first event (only updates may follow)")
    state = _state(last)
    if state is None or not (lifecycle.is_terminal(state) or lifecycle.is_interrupted(state)):
        raise CheckFailedError(
            f"the last event leaves the task {state.name if state else 'unchanged'} (R-STREAM-4)"
        )
    if not answer.ended:
        raise CheckFailedError(
            f"the stream stays open after the task became {state.name} (R-STREAM-4)"
        )
    return f"Task first, {len(events) - 1} updates, ends {state.name}"


@checks.interface(
    "stream.undeclared", "R-STREAM-12", Level.MUST, "without streaming, streams are refused"
)
async def stream_undeclared(context: InterfaceContext) -> str:
    if context.card.capabilities.streaming:
        raise CheckSkippedError("the card declares streaming")
    answer = await _stream(context)
    if answer.events:
        raise CheckFailedError(
            f"the stream runs ({len(answer.events)} events) though the card declares none"
        )
    if not answer.errors:
        raise CheckFailedError(f"no error answer: HTTP {answer.status} {answer.text[:120]}")
    return "refused"


def _decoded(context: InterfaceContext, payload: Any) -> Any:
    try:
        return context.subject.codec.decode_event(payload)
    except Exception as exc:  # any decoding failure is the finding
        raise CheckFailedError(f"an event does not decode: {exc}") from exc


def _state(event: Any) -> Any:
    if isinstance(event, Task | TaskStatusUpdateEvent):
        return event.status.state
    if isinstance(event, TaskArtifactUpdateEvent):
        return None
    return None
