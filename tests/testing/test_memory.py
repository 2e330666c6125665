"""`parley.testing.InMemoryTransport` seen from the handler's side: the `CallContext` each call
gets is the one a binding would build — the version, the headers lower-cased (the
transport's, the call's, the credentials'), the extensions asked for and those the card
activates (R-EXT-3), the resume point of a resubscription (REFERENCE §7.3: after the last
event id, a decimal sequence number; anything else is no resume point), the tenant — and
an operation the version lacks never reaches the handler (REFERENCE §8.5: ListTasks is 1.0
only). A recording handler stands for the agent. End-to-end use against an `AgentService`
is in tests/client/test_memory.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from parley.client import BearerAuth, CallOptions, Client, StreamIdleError, StreamPolicy
from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskState,
    TaskStatus,
)
from parley.protocol.errors import MethodNotFoundError, TaskNotFoundError
from parley.protocol.negotiation import VERSION_HEADER, Version
from parley.server.context import CallContext
from parley.testing import HandlerEventStream, InMemoryTransport

pytestmark = pytest.mark.anyio

DECLARED = "urn:example:declared/v1"
UNDECLARED = "urn:example:undeclared/v1"


def task(state: TaskState = TaskState.WORKING) -> Task:
    return Task(id="t-1", context_id="c", status=TaskStatus(state=state))


class Numbered:
    """A handler's event iterator that tells each event's sequence number, as the
    service's does."""

    def __init__(self, events: list[tuple[int, StreamEvent]]) -> None:
        self._events = iter(events)
        self.sequence: int | None = None
        self.closed = False

    def __aiter__(self) -> Numbered:
        return self

    async def __anext__(self) -> StreamEvent:
        try:
            self.sequence, event = next(self._events)
        except StopIteration:
            raise StopAsyncIteration from None
        return event

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class Recording:
    """A handler that records the context of every call."""

    card: AgentCard = field(
        default_factory=lambda: AgentCard(
            name="Recorder",
            description="",
            version="1",
            supported_interfaces=(),
            capabilities=AgentCapabilities(
                streaming=True, extensions=(AgentExtension(uri=DECLARED),)
            ),
            default_input_modes=("text/plain",),
            default_output_modes=("text/plain",),
            skills=(),
        )
    )
    contexts: list[CallContext] = field(default_factory=list)
    streams: list[Numbered] = field(default_factory=list)
    events: list[tuple[int, StreamEvent]] = field(default_factory=list)

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        self.contexts.append(ctx)
        if request.id == "missing":
            raise TaskNotFoundError("no such task", metadata={"taskId": request.id})
        return task()

    async def list_tasks(self, ctx: CallContext, request: ListTasksRequest) -> ListTasksResponse:
        self.contexts.append(ctx)
        return ListTasksResponse(tasks=(), next_page_token="", page_size=0, total_size=0)

    def subscribe_to_task(
        self, ctx: CallContext, request: SubscribeToTaskRequest
    ) -> AsyncIterator[StreamEvent]:
        self.contexts.append(ctx)
        stream = Numbered(self.events)
        self.streams.append(stream)
        return stream


async def test_the_version_header_and_the_callers_headers_lower_cased() -> None:
    handler = Recording()
    transport = InMemoryTransport(
        handler,  # type: ignore[arg-type]
        version=Version.V0_3,
        headers={"X-Trace": "abc", "User-Agent": "tests"},
        auth=BearerAuth("tok"),
    )
    async with Client(transport) as client:
        await client.get_task("t-1")
    [ctx] = handler.contexts
    assert ctx.version is Version.V0_3
    assert ctx.headers[VERSION_HEADER.lower()] == "0.3"
    assert ctx.headers["x-trace"] == "abc"
    assert ctx.headers["user-agent"] == "tests"
    assert ctx.headers["authorization"] == "Bearer tok"
    assert all(name == name.lower() for name in ctx.headers)


@pytest.mark.parametrize("version", [Version.V1_0, Version.V0_3], ids=lambda v: v.value)
async def test_extensions_asked_for_and_those_the_card_activates(version: Version) -> None:
    handler = Recording()
    async with Client(InMemoryTransport(handler, version=version)) as client:  # type: ignore[arg-type]
        await client.get_task("t-1", extensions=[DECLARED, UNDECLARED])
        await client.get_task("t-1")
    asked, plain = handler.contexts
    assert set(asked.requested_extensions) == {DECLARED, UNDECLARED}
    assert set(asked.activated_extensions) == {DECLARED}
    header = "a2a-extensions" if version is Version.V1_0 else "x-a2a-extensions"
    assert set(asked.headers[header].split(", ")) == {DECLARED, UNDECLARED}
    assert (plain.requested_extensions, plain.activated_extensions) == ((), ())
    assert header not in plain.headers


async def test_an_operation_the_version_lacks_never_reaches_the_handler() -> None:
    handler = Recording()
    async with Client(InMemoryTransport(handler, version=Version.V0_3)) as client:  # type: ignore[arg-type]
        with pytest.raises(MethodNotFoundError) as raised:
            await client.list_tasks()
    assert handler.contexts == []
    assert raised.value.metadata == {"method": "ListTasks"}
    async with Client(InMemoryTransport(handler)) as client:  # type: ignore[arg-type]
        await client.list_tasks()
    assert len(handler.contexts) == 1


async def test_a_handlers_a2a_error_is_raised_as_it_is() -> None:
    async with Client(InMemoryTransport(Recording())) as client:  # type: ignore[arg-type]
        with pytest.raises(TaskNotFoundError) as raised:
            await client.get_task("missing")
    assert raised.value.metadata == {"taskId": "missing"}


async def test_the_tenant_of_the_request_is_the_calls() -> None:
    handler = Recording()
    transport = InMemoryTransport(handler)  # type: ignore[arg-type]
    await transport.get_task(GetTaskRequest(id="t-1", tenant="acme"), _options())
    assert handler.contexts[0].tenant == "acme"


def _options(last_event_id: str = "") -> CallOptions:
    return CallOptions(last_event_id=last_event_id)


@pytest.mark.parametrize(
    ("last_event_id", "resume_after"),
    [("", None), ("7", 7), (" 12 ", 12), ("0", 0), ("abc", None), ("-3", None), ("1.5", None)],
)
async def test_the_resume_point_is_the_last_event_id_when_it_is_a_number(
    last_event_id: str, resume_after: int | None
) -> None:
    handler = Recording()
    transport = InMemoryTransport(handler)  # type: ignore[arg-type]
    stream = transport.subscribe_to_task(
        SubscribeToTaskRequest(id="t-1"),
        _options(last_event_id),
    )
    with pytest.raises(StopAsyncIteration):
        await anext(stream)
    assert handler.contexts[0].resume_after == resume_after


async def test_a_streams_event_ids_are_the_handlers_sequence_numbers() -> None:
    handler = Recording(events=[(4, task()), (5, task(TaskState.COMPLETED))])
    transport = InMemoryTransport(handler)  # type: ignore[arg-type]
    stream = transport.subscribe_to_task(SubscribeToTaskRequest(id="t-1"), _options())
    assert isinstance(stream, HandlerEventStream)
    assert stream.last_event_id == ""
    seen = [(event, stream.last_event_id) async for event in stream]
    assert [event_id for _, event_id in seen] == ["4", "5"]
    assert handler.streams[0].closed


async def test_an_iterator_without_sequence_numbers_gives_no_ids() -> None:
    class Plain(Recording):
        def subscribe_to_task(
            self, ctx: CallContext, request: SubscribeToTaskRequest
        ) -> AsyncIterator[StreamEvent]:
            async def events() -> AsyncIterator[StreamEvent]:
                yield task(TaskState.COMPLETED)

            return events()

    transport = InMemoryTransport(Plain())  # type: ignore[arg-type]
    stream = transport.subscribe_to_task(SubscribeToTaskRequest(id="t-1"), _options())
    assert [event async for event in stream] == [task(TaskState.COMPLETED)]
    assert stream.last_event_id == ""


async def test_a_closed_stream_ends_and_closes_the_handlers_iterator() -> None:
    handler = Recording(events=[(1, task()), (2, task())])
    transport = InMemoryTransport(handler)  # type: ignore[arg-type]
    stream = transport.subscribe_to_task(SubscribeToTaskRequest(id="t-1"), _options())
    await anext(stream)
    await stream.aclose()
    assert handler.streams[0].closed
    with pytest.raises(StopAsyncIteration):
        await anext(stream)
    await stream.aclose()  # twice is harmless


async def test_closing_a_stream_never_opened_touches_nothing() -> None:
    handler = Recording()
    transport = InMemoryTransport(handler)  # type: ignore[arg-type]
    stream = transport.subscribe_to_task(SubscribeToTaskRequest(id="t-1"), _options())
    await stream.aclose()
    assert handler.contexts == []


async def test_a_silent_handler_stream_hits_the_idle_limit() -> None:
    class Silent(Recording):
        def subscribe_to_task(
            self, ctx: CallContext, request: SubscribeToTaskRequest
        ) -> AsyncIterator[StreamEvent]:
            async def events() -> AsyncIterator[StreamEvent]:
                yield task()
                await _forever()
                yield task()  # pragma: no cover - never reached

            return events()

    policy = StreamPolicy(idle_timeout=0.01, resubscribe=False)
    async with Client(InMemoryTransport(Silent()), streaming=policy) as client:  # type: ignore[arg-type]
        stream = client.subscribe("t-1")
        assert await anext(stream) == task()
        with pytest.raises(StreamIdleError, match=r"SubscribeToTask: nothing for 0\.01 s"):
            await anext(stream)


async def _forever() -> None:
    await asyncio.Event().wait()
