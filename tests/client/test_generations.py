"""The client's use of task generations (A2A 1.1 draft): a jump in a stream's generations
is a missed event, replaced by the task fetched again; updates a snapshot already holds
are dropped; a server that sends 0 (or a number twice) is not relied on. Against a
Parley server that serves the draft, `Client.connect` picks 1.1 from the card and
`Client.wait` (what `parley get --wait` runs) long-polls GetTask instead of streaming."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import pytest

from parley.asgi import A2AApp, build_app
from parley.cli.a2a_draft import DEFAULT_SERVED, with_interfaces
from parley.client import Client
from parley.client.generations import Generations, Verdict
from parley.client.streaming import ClientStream, Reconnected, StreamPolicy
from parley.client.transport import CallOptions
from parley.model import (
    Artifact,
    GetTaskRequest,
    Model,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.negotiation import DRAFT_VERSIONS, Version
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.interop.agent import Probe, wait_for
from tests.interop.live import serving

pytestmark = pytest.mark.anyio

VERSIONS = (DEFAULT_SERVED[0], *DRAFT_VERSIONS, *DEFAULT_SERVED[1:])


def task(generation: int, state: TaskState = TaskState.WORKING) -> Task:
    return Task(id="t1", context_id="c1", status=TaskStatus(state=state), generation=generation)


def status(generation: int, state: TaskState = TaskState.WORKING) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=TaskStatus(state=state), generation=generation
    )


def chunk(generation: int) -> TaskArtifactUpdateEvent:
    artifact = Artifact(artifact_id="a", parts=(TextPart(text=str(generation)),))
    return TaskArtifactUpdateEvent(
        task_id="t1", context_id="c1", artifact=artifact, append=True, generation=generation
    )


def verdicts(events: Sequence[StreamEvent]) -> list[str]:
    seen = Generations()
    return [seen.see(event).value for event in events]


def test_a_jump_is_a_gap_and_what_a_snapshot_holds_is_skipped() -> None:
    assert verdicts([task(1), status(2), chunk(3), chunk(5)]) == [
        "deliver",
        "deliver",
        "deliver",
        "gap",
    ]
    seen = Generations()
    for event in (task(1), status(2), chunk(4)):
        seen.see(event)
    seen.reconciled(task(6))
    assert [seen.see(e) for e in (chunk(5), chunk(6), chunk(7))] == [
        Verdict.SKIP,
        Verdict.SKIP,
        Verdict.DELIVER,
    ]


def test_a_server_without_generations_is_not_relied_on() -> None:
    assert verdicts([task(0), status(0), chunk(0), chunk(0)]) == ["deliver"] * 4
    # The same number twice: the server's numbers are wrong, so no gap is ever claimed.
    assert verdicts([task(1), status(2), status(2), chunk(9)]) == ["deliver"] * 4


class Events:
    """An EventStream of given events (no ids): what a gRPC stream looks like."""

    def __init__(self, events: Sequence[StreamEvent]) -> None:
        self._events = iter(events)

    @property
    def last_event_id(self) -> str:
        return ""

    def __aiter__(self) -> Events:
        return self

    async def __anext__(self) -> StreamEvent:
        try:
            return next(self._events)
        except StopIteration:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        return None


async def test_a_stream_with_a_gap_fetches_the_task_in_place_of_the_event() -> None:
    fetched: list[str] = []

    async def get_task(task_id: str) -> Task:
        fetched.append(task_id)
        return task(5)

    def never(task_id: str, options: CallOptions) -> Any:
        raise AssertionError("no resubscription expected")

    events: list[StreamEvent] = [
        task(1),
        status(2),
        chunk(4),
        chunk(5),
        chunk(6),
        status(7, TaskState.COMPLETED),
    ]
    stream = ClientStream(
        lambda options: Events(events),
        options=CallOptions(),
        policy=StreamPolicy(),
        resubscribe=never,
        get_task=get_task,
    )
    items: list[Model | Reconnected] = [item async for item in stream]
    assert fetched == ["t1"]
    assert items[:2] == [task(1), status(2)]
    assert isinstance(items[2], Reconnected)
    assert items[2].task == task(5)
    assert items[3:] == [chunk(6), status(7, TaskState.COMPLETED)]  # 5: in the snapshot


# ----------------------------------------------------------------------------- long-polls


class Recorded(AgentService):
    """The service, with the GetTask requests it answered kept."""

    gets: list[GetTaskRequest]

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        self.gets.append(request)
        return await super().get_task(ctx, request)


def gated_agent(probe: Probe) -> Agent:
    agent = Agent("Gated", description="Steps behind gates.")

    @agent.skill()
    async def steps(task: TaskContext) -> str:
        await task.update("started")
        for i in range(2):
            await wait_for(probe.gate(f"{task.text}/{i}"))
            await task.update(f"step {i}")
        return "done"

    return agent


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[str, Recorded, Probe]]:
    probe = Probe()
    agent = gated_agent(probe)
    services: list[Recorded] = []

    def make_app(url: str) -> A2AApp:
        card = with_interfaces(agent.card(url), VERSIONS)
        service = Recorded(agent.executor(), card)
        service.gets = []
        services.append(service)
        return build_app(service, served_versions=VERSIONS)

    with serving(make_app) as url:
        yield url, services[0], probe


@pytest.fixture
async def client(live: tuple[str, Recorded, Probe]) -> AsyncIterator[Client]:
    async with Client.connect(live[0]) as connected:
        yield connected


async def test_the_client_picks_the_draft_when_the_card_offers_it(client: Client) -> None:
    assert client.version is Version.V1_1


async def test_wait_long_polls_where_the_task_is_numbered(
    live: tuple[str, Recorded, Probe], client: Client
) -> None:
    _, service, probe = live
    key = f"wait-{uuid.uuid4()}"
    sent = await client.send(key, skill="steps", return_immediately=True)
    assert isinstance(sent, Task)
    service.gets.clear()
    waiting = asyncio.create_task(client.wait(sent.id))
    try:
        for i in range(2):
            await asyncio.wait_for(_long_polled(service, i + 1), 5)
            assert not waiting.done()  # held: its gate is closed
            probe.gate(f"{key}/{i}").set()
        done = await asyncio.wait_for(waiting, 5)
    finally:
        waiting.cancel()
    assert done.status.state is TaskState.COMPLETED
    assert service.gets[0].current_generation is None  # where the task stands
    polls = [request.current_generation or 0 for request in service.gets[1:]]
    assert all(polls)  # then long-polls past the generation it holds
    assert polls == sorted(polls)


async def _long_polled(service: Recorded, count: int) -> None:
    """Until the client has sent `count` long-polls."""
    while sum(1 for g in service.gets if g.current_generation) < count:
        await asyncio.sleep(0.005)
