"""Streams over a live uvicorn server and real HTTP SSE (REFERENCE §7.4, R-STREAM-6..10):
concurrent subscribers of one task receive identical ordered events, and a client that
disconnects mid-stream leaves nothing behind — no live task, no subscription (buffer), no
suspended agent function (asserted by counting) — while the agent carries on and the other
subscriber gets everything.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from parley.asgi import A2AApp, build_app
from parley.model import Model
from parley.protocol.negotiation import Version
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from parley.wire.codec_table import JSONRPC, REST
from tests.interop.agent import Probe, wait_for
from tests.interop.live import Live, serving

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}
STREAM_ID = "stream-1"
BURST = 20
"""Chunks the `burst` skill emits back to back once its gate opens."""
STEPS = 4
"""Chunks the `steps` skill emits, each after its own gate `<key>/<i>` opens."""


def build_agent(probe: Probe) -> Agent:
    agent = Agent("Streams", description="Gated streaming skills.")

    @agent.skill()
    async def burst(task: TaskContext) -> None:
        """WORKING; wait for the gate; BURST chunks of one artifact at once; COMPLETED."""
        key = task.text
        await task.update("started")
        probe.started(key).set()
        await wait_for(probe.gate(key))
        artifact_id = ""
        for i in range(BURST):
            artifact_id = await task.artifact(
                f"{i} ", artifact_id=artifact_id, append=i > 0, last_chunk=i == BURST - 1
            )

    @agent.skill()
    async def steps(task: TaskContext) -> None:
        """WORKING; then chunk i once gate `<key>/<i>` opens; COMPLETED after the last."""
        key = task.text
        await task.update("started")
        probe.started(key).set()
        artifact_id = ""
        for i in range(STEPS):
            await wait_for(probe.gate(f"{key}/{i}"))
            artifact_id = await task.artifact(
                f"step-{i} ", artifact_id=artifact_id, append=i > 0, last_chunk=i == STEPS - 1
            )

    @agent.skill()
    async def late(task: TaskContext) -> str:
        """Emit nothing until the gate opens (so a stream has no first event yet)."""
        probe.started(task.text).set()
        await wait_for(probe.gate(task.text))
        return "late answer"

    return agent


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    probe = Probe()
    agent = build_agent(probe)
    services: list[AgentService] = []

    def make_app(url: str) -> A2AApp:
        services.append(AgentService(agent.executor(), agent.card(url)))
        return build_app(services[-1])

    with serving(make_app) as url:
        yield Live(url, services[0], probe)


@pytest.fixture
def keys(live: Live) -> Iterator[list[str]]:
    """Gates a test may leave closed when it fails: all opened at teardown."""
    opened: list[str] = []
    yield opened
    for name in opened:
        live.probe.gate(name).set()
        for i in range(STEPS):
            live.probe.gate(f"{name}/{i}").set()


async def wait_until(check: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await anyio.sleep(0.01)


# ----------------------------------------------------------------------------- raw SSE


class Events:
    """One open SSE response, read event by event (comments and `event:` lines skipped);
    each `data:` is parsed as JSON."""

    def __init__(self, response: httpx.Response) -> None:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        self.response = response
        self._lines = response.aiter_lines()

    async def next(self) -> Any:
        """The next event's data, or None when the stream ended."""
        data: list[str] = []
        with anyio.fail_after(5):
            async for line in self._lines:
                if line.startswith("data:"):
                    data.append(line.removeprefix("data:").removeprefix(" "))
                elif line == "" and data:
                    return json.loads("\n".join(data))
        return None

    async def rest(self) -> list[Any]:
        out = []
        while (event := await self.next()) is not None:
            out.append(event)
        return out


@dataclass(frozen=True)
class Call:
    """How one binding and version opens a stream: subscribe to a task, or send."""

    binding: str
    version: Version

    def __str__(self) -> str:
        return f"{self.binding}-{self.version.value}"

    @property
    def headers(self) -> dict[str, str]:
        return V1 if self.version is Version.V1_0 else {}

    def subscribe(self, task_id: str) -> tuple[str, Any]:
        """(path, JSON body or None) of SubscribeToTask / tasks/resubscribe."""
        if self.binding == "jsonrpc":
            method = "SubscribeToTask" if self.version is Version.V1_0 else "tasks/resubscribe"
            return "/", {
                "jsonrpc": "2.0",
                "id": f"sub-{self}",
                "method": method,
                "params": {"id": task_id},
            }
        prefix = "" if self.version is Version.V1_0 else "/v1"
        return f"{prefix}/tasks/{task_id}:subscribe", None

    def stream(self, message: dict[str, Any]) -> tuple[str, Any]:
        """(path, JSON body) of SendStreamingMessage (1.0 only here)."""
        assert self.version is Version.V1_0
        if self.binding == "jsonrpc":
            params = {"message": message}
            return "/", {
                "jsonrpc": "2.0",
                "id": STREAM_ID,
                "method": "SendStreamingMessage",
                "params": params,
            }
        return "/message:stream", {"message": message}

    def unwrap(self, data: Any) -> Any:
        """The event itself: JSON-RPC frames carry it in `result` (the request's id)."""
        if self.binding != "jsonrpc":
            return data
        assert set(data) == {"jsonrpc", "id", "result"}
        assert data["jsonrpc"] == "2.0"
        assert data["id"] in (STREAM_ID, f"sub-{self}")  # the request's id, echoed
        return data["result"]

    def decode(self, data: Any) -> Model:
        """The event as Parley's model (each version's codec of the binding)."""
        codecs = JSONRPC if self.binding == "jsonrpc" else REST
        decoded: Model = codecs[self.version].decode_event(self.unwrap(data))
        return decoded


JSONRPC_1 = Call("jsonrpc", Version.V1_0)
REST_1 = Call("rest", Version.V1_0)


def user_message(text: str, skill: str, **fields: str) -> dict[str, Any]:
    return {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "metadata": {"skill": skill},
        **fields,
    }


async def start(client: httpx.AsyncClient, text: str, skill: str) -> str:
    """A non-blocking 1.0 send (R-SEND-4); returns the task id."""
    body = {"message": user_message(text, skill), "configuration": {"returnImmediately": True}}
    response = await client.post("/message:send", json=body, headers=V1)
    assert response.status_code == 200, response.text
    task_id: str = response.json()["task"]["id"]
    return task_id


async def open_stream(stack: AsyncExitStack, url: str, call: Call, path: str, body: Any) -> Events:
    """A new HTTP client (its own connection) with one SSE response open on it (POST:
    SubscribeToTask's REST verb is GET in the proto, POST in the prose; both are served)."""
    client = await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=10))
    response = await stack.enter_async_context(
        client.stream("POST", path, json=body, headers=call.headers)
    )
    return Events(response)


def kind(event: Any) -> str:
    (name,) = event.keys()
    return str(name)


async def get_task(url: str, task_id: str) -> Any:
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        response = await client.get(f"/tasks/{task_id}", headers=V1)
    assert response.status_code == 200
    return response.json()


# ----------------------------------------------------------------------------- tests


async def test_two_subscribers_receive_identical_ordered_events(
    live: Live, keys: list[str]
) -> None:
    """R-STREAM-6/7/8/9, R-SUB-1/2: a JSON-RPC and a REST SubscribeToTask on one running
    task, each on its own connection, get the same events in the same order: the Task
    snapshot, every chunk in generation order, then COMPLETED (and the streams end)."""
    key = f"burst-{uuid.uuid4().hex[:12]}"
    keys.append(key)
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(httpx.AsyncClient(base_url=live.url, timeout=10))
        task_id = await start(client, key, "burst")
        await wait_until(live.probe.started(key).is_set, "the agent to start")
        streams = [
            await open_stream(stack, live.url, call, *call.subscribe(task_id))
            for call in (JSONRPC_1, REST_1)
        ]
        firsts = [
            call.unwrap(await events.next())
            for call, events in zip((JSONRPC_1, REST_1), streams, strict=True)
        ]
        assert firsts[0] == firsts[1]
        assert firsts[0]["task"]["id"] == task_id
        assert firsts[0]["task"]["status"]["state"] == "TASK_STATE_WORKING"
        assert live.service.broker.subscriber_count() == 2
        live.probe.gate(key).set()
        received = [
            [call.unwrap(e) for e in await events.rest()]
            for call, events in zip((JSONRPC_1, REST_1), streams, strict=True)
        ]
    assert received[0] == received[1]
    events = received[0]
    assert [kind(e) for e in events] == ["artifactUpdate"] * BURST + ["statusUpdate"]
    chunks = [e["artifactUpdate"] for e in events[:-1]]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == [f"{i} " for i in range(BURST)]
    assert [c.get("append", False) for c in chunks] == [False] + [True] * (BURST - 1)
    assert [c.get("lastChunk", False) for c in chunks] == [False] * (BURST - 1) + [True]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert all(e[kind(e)]["taskId"] == task_id for e in events)
    await wait_until(lambda: live.leftovers() == (0, 0, 0), "the server to be idle")


async def test_all_four_wire_forms_carry_the_same_events(live: Live, keys: list[str]) -> None:
    """R-STREAM-9, R-DATA-1: subscribers in 1.0 and 0.3, over JSON-RPC and REST, each get
    the same events: decoded with each version's codec they are equal, in order."""
    key = f"burst-{uuid.uuid4().hex[:12]}"
    keys.append(key)
    calls = [Call(b, v) for v in (Version.V1_0, Version.V0_3) for b in ("jsonrpc", "rest")]
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(httpx.AsyncClient(base_url=live.url, timeout=10))
        task_id = await start(client, key, "burst")
        await wait_until(live.probe.started(key).is_set, "the agent to start")
        streams = [await open_stream(stack, live.url, c, *c.subscribe(task_id)) for c in calls]
        for events in streams:
            assert await events.next() is not None  # the snapshot: subscribed
        live.probe.gate(key).set()
        decoded = [
            [call.decode(e) for e in await events.rest()]
            for call, events in zip(calls, streams, strict=True)
        ]
    assert len(decoded[0]) == BURST + 1
    for other in decoded[1:]:
        assert other == decoded[0]
    await wait_until(lambda: live.leftovers() == (0, 0, 0), "the server to be idle")


LEAVERS = [
    pytest.param("subscriber", JSONRPC_1, REST_1, id="subscriber-jsonrpc"),
    pytest.param("subscriber", REST_1, JSONRPC_1, id="subscriber-rest"),
    pytest.param("originator", JSONRPC_1, REST_1, id="originator-jsonrpc"),
    pytest.param("originator", REST_1, JSONRPC_1, id="originator-rest"),
]


@pytest.mark.parametrize(("role", "leaver", "stayer"), LEAVERS)
async def test_a_client_that_disconnects_mid_stream_leaves_nothing_behind(
    live: Live, keys: list[str], role: str, leaver: Call, stayer: Call
) -> None:
    """R-STREAM-10, REFERENCE §7.4 (a disconnect is not a cancel): one client — a
    SubscribeToTask subscriber, or the SendStreamingMessage client that started the task —
    leaves after the first chunk. The server drops its subscription at once (counted while
    the task still runs); the agent carries on; the other subscriber receives every chunk
    and COMPLETED; once the task ends no live task, subscription or agent function is
    left (runner.live_count, broker.subscriber_count, executor.session_count)."""
    key = f"steps-{uuid.uuid4().hex[:12]}"
    keys.append(key)
    assert live.leftovers() == (0, 0, 0)
    async with AsyncExitStack() as stack:
        if role == "originator":
            leaving = await open_stream(
                stack, live.url, leaver, *leaver.stream(user_message(key, "steps"))
            )
            first = leaver.unwrap(await leaving.next())
            task_id = first["task"]["id"]
        else:
            client = await stack.enter_async_context(
                httpx.AsyncClient(base_url=live.url, timeout=10)
            )
            task_id = await start(client, key, "steps")
            await wait_until(live.probe.started(key).is_set, "the agent to start")
            leaving = await open_stream(stack, live.url, leaver, *leaver.subscribe(task_id))
            assert leaver.unwrap(await leaving.next())["task"]["id"] == task_id
        await wait_until(live.probe.started(key).is_set, "the agent to start")
        staying = await open_stream(stack, live.url, stayer, *stayer.subscribe(task_id))
        stayed = [stayer.unwrap(await staying.next())]
        assert stayed[0]["task"]["id"] == task_id
        assert live.leftovers() == (1, 2, 1)

        live.probe.gate(f"{key}/0").set()
        if role == "originator":  # it also saw WORKING, before the other subscribed
            assert kind(leaver.unwrap(await leaving.next())) == "statusUpdate"
        gone = leaver.unwrap(await leaving.next())
        assert gone["artifactUpdate"]["artifact"]["parts"][0]["text"] == "step-0 "
        await leaving.response.aclose()  # the connection closes mid-stream

        await wait_until(
            lambda: live.service.broker.subscriber_count() == 1, "the server to drop the stream"
        )
        assert live.leftovers() == (1, 1, 1)  # the task still runs, for the other subscriber
        running = await get_task(live.url, task_id)
        assert running["status"]["state"] == "TASK_STATE_WORKING"

        for i in range(1, STEPS):
            live.probe.gate(f"{key}/{i}").set()
        stayed += [stayer.unwrap(e) for e in await staying.rest()]

    texts = [e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in stayed[1:-1]]
    assert texts == [f"step-{i} " for i in range(STEPS)]
    assert stayed[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    await wait_until(lambda: live.leftovers() == (0, 0, 0), "nothing left behind")
    final = await get_task(live.url, task_id)
    assert final["status"]["state"] == "TASK_STATE_COMPLETED"
    artifact = final["artifacts"]
    assert len(artifact) == 1
    assert "".join(p["text"] for p in artifact[0]["parts"]) == "".join(
        f"step-{i} " for i in range(STEPS)
    )


@pytest.mark.parametrize("call", [JSONRPC_1, REST_1], ids=str)
async def test_a_client_that_leaves_before_the_first_event_leaves_nothing_behind(
    live: Live, keys: list[str], call: Call
) -> None:
    """The same before anything was streamed: the task is created at the agent's first
    event, or once it has been silent for a while (docs/decisions.md), so the client may
    give up before or after the response starts. Its subscription goes at once; the agent
    carries on, the task completes (found by its context, ListTasks), and nothing is left
    behind."""
    key = f"late-{uuid.uuid4().hex[:12]}"
    keys.append(key)
    context_id = f"ctx-{key}"
    path, body = call.stream(user_message(key, "late", contextId=context_id))
    assert live.leftovers() == (0, 0, 0)

    async def leave() -> None:
        async with (
            httpx.AsyncClient(base_url=live.url, timeout=10) as client,
            client.stream("POST", path, json=body, headers=V1),
        ):
            await anyio.sleep_forever()  # a silent agent's task may already exist

    async with anyio.create_task_group() as group:
        group.start_soon(leave)
        await wait_until(live.probe.started(key).is_set, "the agent to start")
        await wait_until(lambda: live.leftovers() == (1, 1, 1), "the stream to subscribe")
        group.cancel_scope.cancel()  # the client closes its connection, unanswered

    await wait_until(
        lambda: live.service.broker.subscriber_count() == 0, "the server to drop the stream"
    )
    assert live.leftovers() == (1, 0, 1)  # the run goes on
    live.probe.gate(key).set()
    await wait_until(lambda: live.leftovers() == (0, 0, 0), "nothing left behind")
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        response = await client.get(
            "/tasks", params={"contextId": context_id, "includeArtifacts": "true"}, headers=V1
        )
    (task,) = response.json()["tasks"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "late answer"}]
