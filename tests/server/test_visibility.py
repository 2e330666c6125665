"""A task exists for its caller from the start (`parley.server.visibility`): an agent that
stays silent has its task created after `visible_after`, so a stream gets its headers,
the Task and keep-alives, and GetTask, ListTasks and CancelTask find the task, all before
the agent's first output; an agent that answers at once still leaves no task behind.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator

import httpx
import pytest

from parley.asgi import A2AApp, build_app
from parley.client import Client
from parley.client.grpc import GrpcTransport
from parley.grpc import GrpcServer
from parley.model import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Role,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.negotiation import Version
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.stores.memory import InMemoryTaskStore
from parley.server.task_context import TaskContext
from tests.asgi.helpers import V1, send_body
from tests.interop.live import serving
from tests.ports import free_port
from tests.server.support import ALICE, as_task, run, send

pytestmark = pytest.mark.anyio

QUICK = 0.05
"""`visible_after` and the keep-alive period of these tests, in seconds."""


class Gate:
    """What the silent skill waits for: set from any thread; counts the skill's outputs."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.started = threading.Event()
        self.outputs = 0

    async def wait(self) -> None:
        self.started.set()
        while not self.open.is_set():
            await asyncio.sleep(0.005)


def reply(text: str) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.AGENT, parts=(TextPart(text=text),))


def silent_agent(gate: Gate) -> Agent:
    agent = Agent("Silent")

    @agent.skill()
    async def think(task: TaskContext) -> Message | str:
        """Thinks (silently) until the gate opens; to `reply`, answers with a Message."""
        await gate.wait()
        gate.outputs += 1
        if task.text == "reply":
            return reply("thought")
        return "thought"

    @agent.skill()
    async def quick(task: TaskContext) -> Message:
        return reply("at once")

    return agent


def service_of(gate: Gate, visible_after: float | None = QUICK) -> AgentService:
    agent = silent_agent(gate)
    return AgentService(agent.executor(), agent.card("http://test"), visible_after=visible_after)


# ----------------------------------------------------------------------------- over HTTP


@pytest.fixture
def live() -> Iterator[tuple[str, Gate]]:
    gate = Gate()

    def make_app(url: str) -> A2AApp:
        agent = silent_agent(gate)
        service = AgentService(agent.executor(), agent.card(url), visible_after=QUICK)
        return build_app(service, keepalive_seconds=QUICK)

    with serving(make_app) as url:
        try:
            yield url, gate
        finally:
            gate.open.set()


async def test_a_silent_skill_streams_headers_the_task_and_keep_alives_and_can_be_canceled(
    live: tuple[str, Gate],
) -> None:
    """R-STREAM-3: the stream opens with the Task (SUBMITTED) while the skill has said
    nothing; keep-alives follow; GetTask, ListTasks and CancelTask find it; the cancel
    ends the stream. The skill never produced anything."""
    url, gate = live
    body = send_body(Version.V1_0, "think")  # the first skill: `think`
    seen = b""
    async with (
        httpx.AsyncClient(base_url=url, timeout=10, headers=V1) as client,
        client.stream("POST", "/message:stream", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        chunks = response.aiter_bytes()
        while seen.count(b": keep-alive\n\n") < 2:
            seen += await anext(chunks)
        first = json.loads(seen.partition(b"\n\n")[0].partition(b"data: ")[2])
        task_id = first["task"]["id"]
        assert first["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"

        fetched = (await client.get(f"/tasks/{task_id}")).json()
        assert fetched["status"]["state"] == "TASK_STATE_SUBMITTED"
        listed = (await client.get("/tasks")).json()
        assert task_id in [task["id"] for task in listed["tasks"]]
        canceled = (await client.post(f"/tasks/{task_id}:cancel", json={})).json()
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"

        rest = b"".join([chunk async for chunk in chunks])
    events = [line for line in rest.split(b"\n") if line.startswith(b"data: ")]
    last = json.loads(events[-1].removeprefix(b"data: "))
    assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert gate.started.is_set()
    assert gate.outputs == 0


# ----------------------------------------------------------------------------- in process


def test_a_blocking_send_to_a_silent_skill_can_be_found_and_canceled() -> None:
    gate = Gate()
    service = service_of(gate)

    async def main() -> None:
        answer = asyncio.ensure_future(service.send_message(ALICE, send("hi", metadata=THINK)))
        while not (listed := await service.list_tasks(ALICE, ListTasksRequest())).tasks:
            await asyncio.sleep(0.01)
        (task,) = listed.tasks
        fetched = await service.get_task(ALICE, GetTaskRequest(id=task.id))
        assert fetched.status.state is TaskState.SUBMITTED
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        assert canceled.status.state is TaskState.CANCELED
        assert as_task(await answer).status.state is TaskState.CANCELED
        assert gate.outputs == 0
        await service.shutdown()

    run(main())


def test_a_direct_reply_after_the_silence_completes_the_task() -> None:
    """Once the task exists, a skill's direct Message is its result (as after a
    non-blocking send)."""
    gate = Gate()
    service = service_of(gate)

    async def main() -> None:
        answer = asyncio.ensure_future(service.send_message(ALICE, send("reply", metadata=THINK)))
        while not (await service.list_tasks(ALICE, ListTasksRequest())).tasks:
            await asyncio.sleep(0.01)
        gate.open.set()
        task = as_task(await answer)
        assert task.status.state is TaskState.COMPLETED
        assert task.status.message is not None
        assert task.status.message.parts == (TextPart(text="thought"),)
        await service.shutdown()

    run(main())


def test_a_skill_that_answers_at_once_leaves_no_task() -> None:
    """The fast path: a direct reply, no task written, now or after `visible_after`."""
    service = service_of(Gate())

    async def main() -> None:
        answer = await service.send_message(ALICE, send("hi", metadata={"skill": "quick"}))
        assert isinstance(answer, Message)
        await asyncio.sleep(QUICK * 3)
        assert isinstance(service.store, InMemoryTaskStore)
        assert len(service.store) == 0
        assert service.visibility.pending_count() == 0
        await service.shutdown()

    run(main())


def test_without_visible_after_the_task_waits_for_the_first_event() -> None:
    gate = Gate()
    service = service_of(gate, visible_after=None)

    async def main() -> None:
        answer = asyncio.ensure_future(service.send_message(ALICE, send("hi", metadata=THINK)))
        await asyncio.sleep(QUICK * 3)
        assert (await service.list_tasks(ALICE, ListTasksRequest())).tasks == ()
        gate.open.set()
        assert as_task(await answer).status.state is TaskState.COMPLETED
        await service.shutdown()

    run(main())


def test_visible_after_must_be_positive() -> None:
    with pytest.raises(ValueError, match="visible_after"):
        service_of(Gate(), visible_after=0)


THINK = {"skill": "think"}


# ----------------------------------------------------------------------------- over gRPC


async def test_over_grpc_the_silent_skills_stream_starts_with_its_task() -> None:
    """The stream's first message (and the initial metadata with it) comes while the
    skill is silent; a cancel from the same client ends the stream."""
    gate = Gate()
    server = GrpcServer(service_of(gate), port=free_port())
    await server.start()
    try:
        async with (
            Client(GrpcTransport(server.address, Version.V1_0)) as client,
            client.stream("think") as stream,
        ):
            first = await anext(stream)
            assert isinstance(first, Task)
            assert first.status.state is TaskState.SUBMITTED
            canceled = await client.cancel_task(first.id)
            assert canceled.status.state is TaskState.CANCELED
            rest = [item async for item in stream]
        last = rest[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.CANCELED
        assert gate.outputs == 0
    finally:
        gate.open.set()
        await server.stop(0)
