"""Sequence numbers on the wire and `Last-Event-ID` (DESIGN 5), over a live uvicorn
server: every frame of a task stream carries `id: <sequence>` (JSON-RPC and REST, 1.0
and 0.3); SubscribeToTask with `Last-Event-ID` gets the events it missed instead of the
Task snapshot; a header that is not a number is ignored; the card declares the extension.
"""

from __future__ import annotations

import json
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from parley.asgi import A2AApp, build_app
from parley.asgi.calls import resume_point
from parley.asgi.http import Request
from parley.model import (
    Message,
    Model,
    Role,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.server.agent import STREAM_RESUME_URI, Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from parley.wire import sse
from parley.wire.codec_table import JSONRPC, REST
from tests.interop.agent import Probe, wait_for
from tests.interop.live import Live, serving

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}
STEPS = 3


def build_agent(probe: Probe) -> Agent:
    agent = Agent("Resumable", description="Gated steps.")

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
    async def count(task: TaskContext) -> AsyncIterator[str]:
        for number in range(3):
            yield f"{number} "

    @agent.skill()
    async def hello(task: TaskContext) -> Any:
        return task.reply("hello")

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
    for key in opened:
        for i in range(STEPS):
            live.probe.gate(f"{key}/{i}").set()


@dataclass(frozen=True)
class Mode:
    """One binding in one version: how it sends, subscribes and unwraps events."""

    binding: str
    version: Version

    def __str__(self) -> str:
        return f"{self.binding}-{self.version.value}"

    @property
    def headers(self) -> dict[str, str]:
        return V1 if self.version is Version.V1_0 else {}

    def send(self, text: str, skill: str) -> tuple[str, str, Any]:
        """(verb, path, body) of a streaming send of one text message to `skill`."""
        message = Message(
            message_id=str(uuid.uuid4()),
            role=Role.USER,
            parts=(TextPart(text=text),),
            metadata={"skill": skill},
        )
        request = SendMessageRequest(message=message)
        operation = Operation.SEND_STREAMING_MESSAGE
        if self.binding == "jsonrpc":
            method = "SendStreamingMessage" if self.version is Version.V1_0 else "message/stream"
            return (
                "POST",
                "/",
                _rpc(method, JSONRPC[self.version].encode_request(operation, request)),
            )
        path = "/message:stream" if self.version is Version.V1_0 else "/v1/message:stream"
        return "POST", path, REST[self.version].encode_request(operation, request)

    def subscribe(self, task_id: str) -> tuple[str, str, Any]:
        """(verb, path, body) of SubscribeToTask / tasks/resubscribe (REST: the proto's GET)."""
        if self.binding == "jsonrpc":
            method = "SubscribeToTask" if self.version is Version.V1_0 else "tasks/resubscribe"
            return "POST", "/", _rpc(method, {"id": task_id})
        prefix = "" if self.version is Version.V1_0 else "/v1"
        return "GET", f"{prefix}/tasks/{task_id}:subscribe", None

    def decode(self, frame: sse.SSEEvent) -> Model:
        data = json.loads(frame.data)
        if self.binding == "jsonrpc":
            data = data["result"]
            return JSONRPC[self.version].decode_event(data)
        return REST[self.version].decode_event(data)


def _rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}


MODES = [Mode(b, v) for v in (Version.V1_0, Version.V0_3) for b in ("jsonrpc", "rest")]


class Frames:
    """One open SSE response, read frame by frame with Parley's own parser."""

    def __init__(self, response: httpx.Response) -> None:
        assert response.status_code == 200, response.status_code
        assert response.headers["content-type"] == sse.MEDIA_TYPE
        self.response = response
        self._chunks = response.aiter_bytes()
        self._parser = sse.SSEParser()
        self._ready: deque[sse.SSEEvent] = deque()
        self.raw = b""

    async def next(self) -> sse.SSEEvent | None:
        with anyio.fail_after(5):
            while not self._ready:
                chunk = await anext(self._chunks, None)
                if chunk is None:
                    return None
                self.raw += chunk
                self._ready.extend(self._parser.feed(chunk))
        return self._ready.popleft()

    async def rest(self) -> list[sse.SSEEvent]:
        out = []
        while (frame := await self.next()) is not None:
            out.append(frame)
        return out


async def open_frames(
    stack: AsyncExitStack,
    url: str,
    request: tuple[str, str, Any],
    headers: Mapping[str, str | bytes],
) -> Frames:
    """A new client (its own connection) with one SSE response open on it."""
    verb, path, body = request
    raw = [(k.encode(), v if isinstance(v, bytes) else v.encode()) for k, v in headers.items()]
    client = await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=10))
    response = await stack.enter_async_context(client.stream(verb, path, json=body, headers=raw))
    return Frames(response)


def picture(mode: Mode, frames: list[sse.SSEEvent]) -> list[str]:
    """`id:task`, `id:status:STATE`, `id:artifact` per frame."""
    out: list[str] = []
    for frame in frames:
        event = mode.decode(frame)
        if isinstance(event, Task):
            out.append(f"{frame.id}:task")
        elif isinstance(event, TaskStatusUpdateEvent):
            out.append(f"{frame.id}:status:{event.status.state.name}")
        else:
            assert isinstance(event, TaskArtifactUpdateEvent)
            out.append(f"{frame.id}:artifact")
    return out


async def wait_until(check: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not check():
            await anyio.sleep(0.01)


async def start_steps(url: str, key: str) -> str:
    """A non-blocking 1.0 send of the `steps` skill; the task id (version 1, then the
    skill's WORKING is version 2)."""
    body = {
        "message": {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "parts": [{"text": key}],
            "metadata": {"skill": "steps"},
        },
        "configuration": {"returnImmediately": True},
    }
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        response = await client.post("/message:send", json=body, headers=V1)
    assert response.status_code == 200, response.text
    task_id: str = response.json()["task"]["id"]
    return task_id


async def chunks_stored(url: str, task_id: str) -> int:
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        response = await client.get(f"/tasks/{task_id}", headers=V1)
    artifacts = response.json().get("artifacts", [])
    return len(artifacts[0]["parts"]) if artifacts else 0


# ----------------------------------------------------------------------------- tests


@pytest.mark.parametrize("mode", MODES, ids=str)
async def test_every_frame_of_a_task_stream_carries_its_sequence_number(
    live: Live, mode: Mode
) -> None:
    async with AsyncExitStack() as stack:
        frames = await open_frames(stack, live.url, mode.send("go", "count"), mode.headers)
        got = await frames.rest()
    assert picture(mode, got) == [
        "1:task",
        "2:status:WORKING",
        "3:artifact",
        "4:artifact",
        "5:artifact",
        "6:status:COMPLETED",
    ]
    assert frames.raw.startswith(b"id: 1\ndata: {")


async def test_a_direct_reply_has_no_id(live: Live) -> None:
    async with AsyncExitStack() as stack:
        frames = await open_frames(stack, live.url, MODES[0].send("hi", "hello"), V1)
        got = await frames.rest()
    assert len(got) == 1
    assert frames.raw.startswith(b"data: {")
    assert b"\nid:" not in frames.raw


@pytest.mark.parametrize("mode", MODES, ids=str)
async def test_last_event_id_replays_what_the_dropped_stream_missed(
    live: Live, keys: list[str], mode: Mode
) -> None:
    """Subscribe (the snapshot, numbered 2), drop, let two chunks go by, resubscribe with
    `Last-Event-ID: 2`: the two chunks come first (no snapshot), then the live events."""
    key = f"steps-{uuid.uuid4().hex[:12]}"
    keys.append(key)
    task_id = await start_steps(live.url, key)
    await wait_until(live.probe.started(key).is_set)
    async with AsyncExitStack() as stack:
        first = await open_frames(stack, live.url, mode.subscribe(task_id), mode.headers)
        snapshot = await first.next()
        assert snapshot is not None
        assert picture(mode, [snapshot]) == ["2:task"]
    await wait_until(lambda: live.service.broker.subscriber_count() == 0)
    for i in range(2):
        live.probe.gate(f"{key}/{i}").set()
    with anyio.fail_after(5):
        while await chunks_stored(live.url, task_id) < 2:
            await anyio.sleep(0.01)
    async with AsyncExitStack() as stack:
        headers = {**mode.headers, "Last-Event-ID": "2"}
        resumed = await open_frames(stack, live.url, mode.subscribe(task_id), headers)
        missed = [await resumed.next(), await resumed.next()]
        assert picture(mode, [f for f in missed if f is not None]) == [
            "3:artifact",
            "4:artifact",
        ]
        live.probe.gate(f"{key}/{STEPS - 1}").set()
        assert picture(mode, await resumed.rest()) == ["5:artifact", "6:status:COMPLETED"]


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "", b"\xb2", "2, 3", "9" * 19])
async def test_a_last_event_id_that_is_not_a_number_is_ignored(
    live: Live, keys: list[str], value: str | bytes
) -> None:
    """The spec's behaviour: the Task snapshot first, numbered with the task's version."""
    key = f"steps-{uuid.uuid4().hex[:12]}"
    keys.append(key)
    task_id = await start_steps(live.url, key)
    await wait_until(live.probe.started(key).is_set)
    mode = MODES[0]
    async with AsyncExitStack() as stack:
        headers: dict[str, str | bytes] = {**V1, "Last-Event-ID": value}
        frames = await open_frames(stack, live.url, mode.subscribe(task_id), headers)
        first = await frames.next()
        assert first is not None
        assert picture(mode, [first]) == ["2:task"]
    for i in range(STEPS):
        live.probe.gate(f"{key}/{i}").set()


async def test_the_card_declares_the_extension_a_client_may_activate(
    live: Live, keys: list[str]
) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        card = (await client.get("/.well-known/agent-card.json")).json()
    declared = {e["uri"]: e.get("required", False) for e in card["capabilities"]["extensions"]}
    assert declared == {STREAM_RESUME_URI: False}
    key = f"steps-{uuid.uuid4().hex[:12]}"
    keys.append(key)
    task_id = await start_steps(live.url, key)
    async with AsyncExitStack() as stack:
        headers = {**V1, "A2A-Extensions": STREAM_RESUME_URI, "Last-Event-ID": "1"}
        frames = await open_frames(stack, live.url, MODES[0].subscribe(task_id), headers)
        assert frames.response.headers["a2a-extensions"] == STREAM_RESUME_URI
        assert await frames.next() is not None
    for i in range(STEPS):
        live.probe.gate(f"{key}/{i}").set()


# ----------------------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("7", 7),
        (" 42 ", 42),
        ("0", 0),
        ("9" * 18, int("9" * 18)),
        ("9" * 19, None),
        ("", None),
        ("x1", None),
        ("+1", None),
        ("\u00b2", None),  # a digit to str.isdigit, and latin-1: a header may carry it
        ("\u0661", None),
    ],
)
def test_resume_point_reads_a_plain_decimal_last_event_id(
    value: str | None, expected: int | None
) -> None:
    headers = {} if value is None else {"last-event-id": value}
    assert resume_point(Request("GET", "/", headers, ())) == expected


def test_frames_with_a_sequence_number_parse_back() -> None:
    """The fast path (`id:` then one `data:` line) and the general one (an event name, a
    string id, several lines) both give the id back to a parser."""
    stream = (
        sse.encode(b'{"a":1}', event_id=12)
        + sse.encode(b"x\ny", event_id=13)
        + sse.encode(b"{}", event="error", event_id="14")
        + sse.encode(b"[]", event_id="15")
    )
    assert stream.startswith(b'id: 12\ndata: {"a":1}\n\n')
    got = sse.SSEParser().feed(stream)
    assert [(g.id, g.event, g.data) for g in got] == [
        ("12", "message", '{"a":1}'),
        ("13", "message", "x\ny"),
        ("14", "error", "{}"),
        ("15", "message", "[]"),
    ]
