"""`parley.testing.InMemoryTransport`: the client straight onto a handler, behaving like the
wire transports — the same operations, errors, extension activation, credentials, streams
(with Parley's event ids), timeouts and idle limits."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
from msgspec.structs import replace

from parley.client import (
    BaseTransport,
    BearerAuth,
    CallOptions,
    Client,
    ClientTimeoutError,
    StreamIdleError,
    StreamPolicy,
    user_message,
)
from parley.model import (
    AgentCard,
    GetTaskRequest,
    Message,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.errors import (
    ExtensionSupportRequiredError,
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.protocol.operations import Operation
from parley.server.context import CallContext
from parley.server.service import AgentService
from parley.testing import InMemoryTransport
from tests.client.agents import (
    EXTENSION,
    TOKEN,
    TokenAuthenticator,
    build_client_agent,
    client_card,
)
from tests.interop.agent import STREAM_CHUNKS, Probe

pytestmark = pytest.mark.anyio


PROBE = Probe()


@pytest.fixture
def service() -> AgentService:
    agent = build_client_agent(PROBE)
    card = client_card(agent, "memory://agent")
    return AgentService(agent.executor(), card, extended_card=replace(card, name="Extended"))


def ask(text: str, skill: str, **ids: str) -> Message:
    return user_message(text, metadata={"skill": skill}, **ids)


@pytest.fixture(params=list(RELEASED_VERSIONS), ids=lambda v: v.value)
async def client(service: AgentService, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    transport = InMemoryTransport(service, version=request.param)
    async with Client(transport, extensions=[EXTENSION]) as connected:
        yield connected


async def test_every_operation(client: Client) -> None:
    task = await client.send(ask("hello", "echo"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert (await client.get_task(task.id, history_length=0)).history == ()
    async with client.stream(ask("s", "chunks")) as stream:
        items = [item async for item in stream]
    assert len([i for i in items if isinstance(i, TaskArtifactUpdateEvent)]) == len(STREAM_CHUNKS)
    assert stream.last_event_id == str(len(items))  # Parley's sequence numbers
    asked = await client.send(ask("g", "greet"))
    assert isinstance(asked, Task)
    async with client.subscribe(asked.id) as subscription:
        first = await anext(subscription)
    assert isinstance(first, Task)
    cancelled = await client.cancel_task(asked.id)
    assert cancelled.status.state is TaskState.CANCELED
    await client.create_push_config(task.id, "https://example.com/h", config_id="c")
    assert (await client.get_push_config(task.id, "c")).url == "https://example.com/h"
    assert len((await client.list_push_configs(task.id)).configs) == 1
    await client.delete_push_config(task.id, "c")
    assert (await client.get_extended_card()).name == "Extended"
    if client.version is Version.V1_0:
        assert (await client.list_tasks()).total_size == 3
    else:
        with pytest.raises(MethodNotFoundError):
            await client.list_tasks()


async def test_errors_are_the_servers(client: Client) -> None:
    with pytest.raises(TaskNotFoundError):
        await client.get_task("nope")
    done = await client.send(ask("x", "echo"))
    assert isinstance(done, Task)
    with pytest.raises(UnsupportedOperationError):
        await anext(client.subscribe(done.id))


async def test_odd_ids_are_refused_as_a_binding_refuses_them(client: Client) -> None:
    with pytest.raises(InvalidParamsError, match=r"^id: must not contain control"):
        await client.get_task("odd\x00id")
    with pytest.raises(InvalidParamsError, match=r"^message\.contextId: must be at most 512"):
        await client.send(ask("x", "echo", context_id="x" * 513))


async def test_extensions_are_activated_against_the_card(service: AgentService) -> None:
    async with Client(InMemoryTransport(service)) as bare:
        with pytest.raises(ExtensionSupportRequiredError):
            await bare.send(ask("who", "whoami"))
        reply = await bare.send(ask("who", "whoami"), extensions=[EXTENSION, "urn:other"])
    assert isinstance(reply, Message)
    assert reply.parts == (TextPart(text=f"anonymous|{EXTENSION}"),)


async def test_credentials_go_through_the_authenticator(service: AgentService) -> None:
    transport = InMemoryTransport(
        service, auth=BearerAuth(TOKEN), authenticator=TokenAuthenticator(), headers={"X-A": "1"}
    )
    async with Client(transport, extensions=[EXTENSION]) as client:
        reply = await client.send(ask("who", "whoami"))
    assert isinstance(reply, Message)
    assert reply.parts == (TextPart(text=f"bearer-user|{EXTENSION}"),)
    ctx = await transport.context(
        Operation.GET_TASK,
        GetTaskRequest(id="t", tenant="acme"),
        CallOptions(extensions=(EXTENSION,), last_event_id="7"),
    )
    assert (ctx.tenant, ctx.resume_after, ctx.headers["x-a"]) == ("acme", 7, "1")
    assert ctx.headers["a2a-version"] == Version.V1_0.value


async def test_subscribe_resumes_after_the_last_event_id(service: AgentService) -> None:
    """The resume point travels as `CallContext.resume_after`, as `Last-Event-ID` would:
    Parley replays what followed it instead of sending the Task first."""
    transport = InMemoryTransport(service)
    options = CallOptions(extensions=(EXTENSION,))
    text = "resume-me"
    request = SendMessageRequest(message=ask(text, "background"))
    original = transport.send_streaming_message(request, options)
    try:
        task = await anext(original)
        assert isinstance(task, Task)
        assert original.last_event_id == "1"
        assert isinstance(await anext(original), TaskStatusUpdateEvent)
        resumed = transport.subscribe_to_task(
            SubscribeToTaskRequest(id=task.id), dataclasses.replace(options, last_event_id="1")
        )
        replayed = await anext(resumed)  # the WORKING update, not a snapshot
        assert isinstance(replayed, TaskStatusUpdateEvent)
        assert replayed.status.state is TaskState.WORKING
        assert resumed.last_event_id == "2"
        PROBE.gate(text).set()
        assert isinstance(await anext(resumed), TaskArtifactUpdateEvent)
        assert resumed.last_event_id == "3"
        await resumed.aclose()
    finally:
        PROBE.gate(text).set()
        await original.aclose()


class Broken:
    """A handler whose every method fails in a way a binding must hide."""

    def __init__(self, card: AgentCard, failure: BaseException | None) -> None:
        self.card = card
        self.failure = failure

    async def get_task(self, ctx: CallContext, request: object) -> Task:
        assert self.failure is not None
        raise self.failure

    async def send_streaming_message(
        self, ctx: CallContext, request: object
    ) -> AsyncIterator[StreamEvent]:
        if self.failure is not None:
            raise self.failure
        yield TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING)
        )

    def subscribe_to_task(self, ctx: CallContext, request: object) -> AsyncIterator[StreamEvent]:
        """Not an async generator: it fails before returning an iterator."""
        assert self.failure is not None
        raise self.failure


async def test_non_protocol_failures_become_internal_errors(service: AgentService) -> None:
    for failure in (RuntimeError("secret detail"), TimeoutError()):
        handler: Any = Broken(service.card, failure)
        async with Client(InMemoryTransport(handler), extensions=[EXTENSION]) as client:
            with pytest.raises(InternalError) as raised:
                await client.get_task("t")
            assert "secret" not in str(raised.value)
            with pytest.raises(InternalError):
                await anext(client.stream("hi"))
            with pytest.raises(InternalError):
                await anext(client.subscribe("t"))


class Refusing:
    """An authenticator that fails: with a protocol error, or with a bug."""

    def __init__(self, failure: Exception) -> None:
        self.failure = failure

    async def authenticate(self, request: object) -> Any:
        raise self.failure


async def test_an_authenticator_failure_is_what_a_binding_makes_of_it(
    service: AgentService,
) -> None:
    for failure, expected in (
        (RuntimeError("bug"), InternalError),
        (TaskNotFoundError("hidden"), TaskNotFoundError),
    ):
        transport = InMemoryTransport(service, authenticator=Refusing(failure))
        async with Client(transport, extensions=[EXTENSION]) as client:
            with pytest.raises(expected):
                await client.get_task("t")


async def test_a_stream_used_directly(service: AgentService) -> None:
    """A transport's stream: `async for` it, nothing more after it is closed."""
    handler: Any = Broken(service.card, None)
    transport = InMemoryTransport(handler)
    stream = transport.send_streaming_message(
        SendMessageRequest(message=user_message("hi")), CallOptions(extensions=(EXTENSION,))
    )
    events = [event async for event in stream]
    assert len(events) == 1
    assert stream.last_event_id == ""
    with pytest.raises(StopAsyncIteration):
        await anext(stream)
    await transport.aclose()


def test_the_base_transport_needs_its_two_primitives() -> None:
    base = BaseTransport()
    with pytest.raises(NotImplementedError):
        base.stream(Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id="t"), CallOptions())
    with pytest.raises(NotImplementedError):
        asyncio.run(base.get_task(GetTaskRequest(id="t"), CallOptions()))


class Slow:
    """A handler that takes its time: unary calls sleep, streams go quiet after one event."""

    def __init__(self, card: AgentCard) -> None:
        self.card = card

    async def get_task(self, ctx: CallContext, request: object) -> Task:
        await asyncio.sleep(5)
        raise AssertionError("unreachable")

    async def send_streaming_message(
        self, ctx: CallContext, request: object
    ) -> AsyncIterator[StreamEvent]:
        yield TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING)
        )
        await asyncio.sleep(5)


async def test_timeouts_and_idle_limits(service: AgentService) -> None:
    handler: Any = Slow(service.card)
    policy = StreamPolicy(idle_timeout=0.1, resubscribe=False)
    async with Client(
        InMemoryTransport(handler), extensions=[EXTENSION], timeout=0.1, streaming=policy
    ) as client:
        with pytest.raises(ClientTimeoutError):
            await client.get_task("t")
        async with client.stream("hi") as stream:
            assert isinstance(await anext(stream), TaskStatusUpdateEvent)
            with pytest.raises(StreamIdleError):
                await anext(stream)
