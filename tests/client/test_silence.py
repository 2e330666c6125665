"""Slow agents (acceptance 3): an agent silent for 30 s and then streaming — the client
neither times out nor misses an event; and the idle limit, when the caller sets one.

The 30-second test runs two streams at once, so it costs 30 s in all: one from a server
that sends nothing meanwhile but the Task (no keep-alives: the task of a silent agent is
created after a second, `parley.server.visibility`), with the client's defaults; one from a
server sending keep-alive comments every 2 s, to a client with a 5 s idle limit.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator

import anyio
import pytest

from parley.asgi import A2AApp, build_app
from parley.client import (
    Client,
    ClientStream,
    JsonRpcTransport,
    StreamIdleError,
    StreamItem,
    StreamPolicy,
    user_message,
)
from parley.model import Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent, TextPart
from parley.server.service import AgentService
from tests.client.agents import build_client_agent
from tests.client.scripted import Proxy
from tests.interop.agent import STREAM_CHUNKS, Probe
from tests.interop.live import Live, serving

pytestmark = pytest.mark.anyio

SILENCE = 30.0


def server(keepalive: float) -> Iterator[Live]:
    probe = Probe()
    agent = build_client_agent(probe)
    services: list[AgentService] = []

    def make_app(url: str) -> A2AApp:
        services.append(AgentService(agent.executor(), agent.card(url)))
        return build_app(services[0], keepalive_seconds=keepalive)

    with serving(make_app) as url:
        yield Live(url, services[0], probe)


@pytest.fixture(scope="module")
def quiet() -> Iterator[Live]:
    """A server that never sends keep-alives."""
    yield from server(0)


@pytest.fixture(scope="module")
def chatty() -> Iterator[Live]:
    """A server that sends a keep-alive comment after 2 s of silence."""
    yield from server(2)


def chunks_of(items: list[StreamItem]) -> list[str]:
    return [
        "".join(p.text for p in i.artifact.parts if isinstance(p, TextPart))
        for i in items
        if isinstance(i, TaskArtifactUpdateEvent)
    ]


async def drain(stream: ClientStream, into: list[StreamItem]) -> None:
    async with stream:
        async for item in stream:
            into.append(item)


async def test_an_agent_silent_for_30_seconds_then_streaming(quiet: Live, chatty: Live) -> None:
    silent_start: list[StreamItem] = []
    silent_middle: list[StreamItem] = []
    started = time.monotonic()
    async with (
        Client.connect(quiet.url) as defaults,
        Client.connect(chatty.url, streaming=StreamPolicy(idle_timeout=5)) as limited,
    ):
        first = defaults.stream(user_message(f"{SILENCE}", metadata={"skill": "silent_start"}))
        second = limited.stream(user_message(f"{SILENCE}", metadata={"skill": "silent_middle"}))
        async with anyio.create_task_group() as group:
            group.start_soon(drain, first, silent_start)
            group.start_soon(drain, second, silent_middle)
    assert time.monotonic() - started >= SILENCE
    for items, stream in ((silent_start, first), (silent_middle, second)):
        assert isinstance(items[0], Task)
        assert chunks_of(items) == list(STREAM_CHUNKS)
        last = items[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.COMPLETED
        assert stream.reconnects == 0
    working = [
        i for i in silent_middle if isinstance(i, TaskStatusUpdateEvent) and i.status.message
    ]
    assert working, "the WORKING update sent before the silence arrived"


async def test_the_idle_limit_ends_a_silent_stream(quiet: Live) -> None:
    """The caller's idle limit, with nothing at all coming: StreamIdleError, in time."""
    async with Client.connect(quiet.url, streaming=StreamPolicy(idle_timeout=0.5)) as client:
        text = "2"
        stream = client.stream(user_message(text, metadata={"skill": "silent_middle"}))
        started = time.monotonic()
        with pytest.raises(StreamIdleError):
            await drain(stream, [])
        assert 0.5 <= time.monotonic() - started < 2


async def test_an_idle_limit_with_resubscription_rides_out_the_silence(quiet: Live) -> None:
    """`resubscribe_on_idle`: the silent stream is replaced by a subscription, which
    Parley resumes after the last event seen; the caller sees every event once. (The
    agent goes on only once the new subscription is in place: a task that finished in
    between could not be resumed, only read.)"""
    text = f"idle-{uuid.uuid4().hex[:8]}"
    broker = quiet.service.broker
    policy = StreamPolicy(idle_timeout=0.3, resubscribe_on_idle=True)
    async with (
        Proxy(quiet.url) as proxy,
        Client(JsonRpcTransport(proxy.url), streaming=policy) as client,
    ):
        try:
            async with client.stream(
                user_message(text, metadata={"skill": "background"})
            ) as stream:
                items: list[StreamItem] = [await anext(stream), await anext(stream)]
                proxy.hold()
                following = asyncio.ensure_future(anext(stream))
                await until(lambda: broker.subscriber_count() == 0)  # the idle stream is gone
                proxy.release()
                await until(lambda: broker.subscriber_count() == 1)  # the resubscription
                quiet.probe.gate(text).set()
                items.append(await following)
                items += [item async for item in stream]
        finally:
            quiet.probe.gate(text).set()
    assert stream.reconnects == 1
    assert [type(i) for i in items] == [
        Task,
        TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]


async def until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)
