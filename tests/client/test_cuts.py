"""Dropped streams against real servers behind a proxy that cuts the connection (acceptance
3): the official SDK, which sends no event ids (the caller is told it reconnected), and
Parley, which numbers its events and replays after `Last-Event-ID` (the caller sees every
event once).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import cast

import pytest

from parley.asgi import A2AApp, build_app
from parley.client import (
    Client,
    JsonRpcTransport,
    Reconnected,
    RestTransport,
    RetryPolicy,
    StreamItem,
    StreamPolicy,
    user_message,
)
from parley.model import Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from parley.server.service import AgentService
from tests.client.agents import build_client_agent
from tests.client.conftest import MODES, Mode
from tests.client.scripted import Proxy
from tests.client.sdk_server import Gates, sdk_app
from tests.interop.agent import Probe
from tests.interop.live import Live, serving

pytestmark = pytest.mark.anyio

FAST = RetryPolicy(attempts=3, backoff=0.01)


class SDK:
    def __init__(self, url: str, gates: Gates) -> None:
        self.url, self.gates = url, gates


@pytest.fixture(scope="module")
def sdk() -> Iterator[SDK]:
    gates = Gates()
    make = cast("Callable[[str], A2AApp]", lambda url: sdk_app(url, gates))
    with serving(make) as url:
        yield SDK(url, gates)


def pinned(url: str, mode: Mode, policy: StreamPolicy | None = None) -> Client:
    transport = (JsonRpcTransport if mode.binding == "JSONRPC" else RestTransport)(
        url, mode.version
    )
    return Client(transport, streaming=policy or StreamPolicy(reconnect=FAST))


async def _true(value: bool) -> bool:
    return value


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("mode", MODES, ids=str)
async def test_sdk_cut_mid_stream_reconnects_and_says_so(sdk: SDK, mode: Mode) -> None:
    """The official SDK sends no ids: after the cut the client resubscribes; the SDK's
    snapshot arrives as `Reconnected(task)`, then the rest of the task."""
    text = f"wait-{uuid.uuid4().hex[:8]}"
    async with Proxy(sdk.url) as proxy, pinned(proxy.url, mode) as client:
        try:
            async with client.stream(user_message(text, metadata={"skill": "wait"})) as stream:
                assert isinstance(await anext(stream), Task)
                working = await anext(stream)
                assert isinstance(working, TaskStatusUpdateEvent)
                proxy.cut()
                marker = await anext(stream)
                sdk.gates.gate(text).set()
                rest = [item async for item in stream]
        finally:
            sdk.gates.gate(text).set()
    assert isinstance(marker, Reconnected)
    assert marker.task is not None
    assert marker.task.status.state is TaskState.WORKING
    assert [type(i) for i in rest] == [TaskArtifactUpdateEvent, TaskStatusUpdateEvent]
    assert stream.reconnects == 1
    assert proxy.connections == 2


@pytest.mark.parametrize("mode", MODES, ids=str)
async def test_sdk_task_finishing_while_disconnected(sdk: SDK, mode: Mode) -> None:
    """Cut, and no reconnection possible until the task has finished: the client ends
    the stream with the final task from GetTask (`Reconnected(task)`)."""
    text = f"wait-{uuid.uuid4().hex[:8]}"
    async with Proxy(sdk.url) as proxy, pinned(proxy.url, mode) as client:
        direct = pinned(sdk.url, mode)
        try:
            stream = client.stream(user_message(text, metadata={"skill": "wait"}))
            first = await anext(stream)
            assert isinstance(first, Task)
            proxy.cut(hold=True)
            sdk.gates.gate(text).set()

            async def finished() -> bool:
                task = await direct.get_task(first.id)
                return task.status.state is TaskState.COMPLETED

            await until(finished)
            proxy.release()
            rest = [item async for item in stream]
        finally:
            sdk.gates.gate(text).set()
            await direct.aclose()
    final = rest[-1]
    assert isinstance(final, Reconnected)
    assert final.task is not None
    assert final.task.status.state is TaskState.COMPLETED
    assert not any(isinstance(i, Task) for i in rest)


@pytest.fixture(scope="module")
def parley() -> Iterator[Live]:
    probe = Probe()
    agent = build_client_agent(probe)
    services: list[AgentService] = []

    def make_app(url: str) -> A2AApp:
        services.append(AgentService(agent.executor(), agent.card(url)))
        return build_app(services[0])

    with serving(make_app) as url:
        yield Live(url, services[0], probe)


@pytest.mark.parametrize("mode", MODES, ids=str)
async def test_parley_cut_mid_stream_loses_and_repeats_nothing(parley: Live, mode: Mode) -> None:
    """Parley numbers its events and replays after `Last-Event-ID`: the caller sees the
    whole task once, with no marker, across a cut. The agent goes on once the client has
    resubscribed (a task that finished meanwhile has nothing left to replay)."""
    text = f"bg-{uuid.uuid4().hex[:8]}"
    broker = parley.service.broker
    async with Proxy(parley.url) as proxy, pinned(proxy.url, mode) as client:
        try:
            message = user_message(text, metadata={"skill": "background"})
            async with client.stream(message) as stream:
                items: list[StreamItem] = [await anext(stream), await anext(stream)]
                proxy.cut(hold=True)
                following = asyncio.ensure_future(anext(stream))
                await until(lambda: _true(broker.subscriber_count() == 0))
                proxy.release()
                await until(lambda: _true(broker.subscriber_count() == 1))
                parley.probe.gate(text).set()
                items.append(await following)
                items += [item async for item in stream]
        finally:
            parley.probe.gate(text).set()
    assert [type(i) for i in items] == [
        Task,
        TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    assert stream.reconnects == 1
    assert stream.last_event_id
