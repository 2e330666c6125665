"""Slow agents (acceptance 3): an agent silent for as long as the test keeps its gate shut,
then streaming — the client with its defaults sets no read deadline on a stream and no
idle limit, so it neither times out nor misses an event; and the idle limit, when the
caller sets one. (Keep-alive comments keeping an idle-limited stream open:
`test_resubscribe.py`.)

The silence is the agent's gate, not a clock: with no timer on the client's side there
is nothing a longer silence would trip, which the first test checks on the request the
stream sends.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator

import httpx
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
from tests.client.calls import key
from tests.client.scripted import Proxy
from tests.interop.agent import STREAM_CHUNKS, Probe
from tests.interop.live import Live, serving

pytestmark = pytest.mark.anyio

VISIBLE_AFTER = 0.02
"""Seconds of silence after which the server creates a silent agent's task (its stream
then starts with the Task)."""


@pytest.fixture(scope="module")
def quiet() -> Iterator[Live]:
    """A server that never sends keep-alives."""
    probe = Probe()
    agent = build_client_agent(probe)
    services: list[AgentService] = []

    def make_app(url: str) -> A2AApp:
        service = AgentService(agent.executor(), agent.card(url), visible_after=VISIBLE_AFTER)
        services.append(service)
        return build_app(service, keepalive_seconds=0)

    with serving(make_app) as url:
        yield Live(url, services[0], probe)


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


@pytest.mark.parametrize("skill", ["silent_start", "silent_middle"])
async def test_an_agent_silent_then_streaming(quiet: Live, skill: str) -> None:
    """Nothing but the Task (and, for `silent_middle`, WORKING) until the agent's gate
    opens, then every chunk and COMPLETED, on one connection; the stream's request has no
    read deadline."""
    text = key(skill)
    requests: list[httpx.Request] = []

    async def record(request: httpx.Request) -> None:
        requests.append(request)

    try:
        async with (
            httpx.AsyncClient(event_hooks={"request": [record]}) as http,
            Client.connect(quiet.url, http=http) as client,
            client.stream(user_message(text, metadata={"skill": skill})) as stream,
        ):
            items: list[StreamItem] = [await anext(stream)]
            if skill == "silent_middle":
                items.append(await anext(stream))
            following = asyncio.ensure_future(anext(stream))
            await until(lambda: quiet.service.broker.subscriber_count() == 1)
            assert not following.done()
            quiet.probe.gate(text).set()
            items.append(await following)
            items += [item async for item in stream]
    finally:
        quiet.probe.gate(text).set()
    assert isinstance(items[0], Task)
    assert chunks_of(items) == list(STREAM_CHUNKS)
    last = items[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED
    assert stream.reconnects == 0
    working = [i for i in items if isinstance(i, TaskStatusUpdateEvent) and i.status.message]
    assert len(working) == (skill == "silent_middle")
    streamed = requests[-1]
    assert streamed.method == "POST"
    assert streamed.extensions["timeout"]["read"] is None


async def test_the_idle_limit_ends_a_silent_stream(quiet: Live) -> None:
    """The caller's idle limit, with nothing coming after WORKING: StreamIdleError, while
    the agent is still waiting for its gate."""
    text = key("idle")
    try:
        async with Client.connect(quiet.url, streaming=StreamPolicy(idle_timeout=0.05)) as client:
            stream = client.stream(user_message(text, metadata={"skill": "silent_middle"}))
            items: list[StreamItem] = []
            with pytest.raises(StreamIdleError, match=r"nothing received for 0\.05 s"):
                await drain(stream, items)
            await until(quiet.probe.started(text).is_set)
            assert not quiet.probe.gate(text).is_set()
    finally:
        quiet.probe.gate(text).set()
    assert all(isinstance(i, Task | TaskStatusUpdateEvent) for i in items)  # no chunk


async def test_an_idle_limit_with_resubscription_rides_out_the_silence(quiet: Live) -> None:
    """`resubscribe_on_idle`: the silent stream is replaced by a subscription, which
    Parley resumes after the last event seen; the caller sees every event once. (The
    agent goes on only once the new subscription is in place: a task that finished in
    between could not be resumed, only read.)"""
    text = f"idle-{uuid.uuid4().hex[:8]}"
    broker = quiet.service.broker
    policy = StreamPolicy(idle_timeout=0.1, resubscribe_on_idle=True)
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
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.005)
