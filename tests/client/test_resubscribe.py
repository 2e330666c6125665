"""Dropped streams (acceptance 3), against a scripted server that numbers its events and
honours `Last-Event-ID` (independent of Parley's server) — or not: the client resubscribes,
and the caller sees every event exactly once when the server replays, or is told it
reconnected. The idle limit, too. (Real servers, cut by a proxy: `test_cuts.py`.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from msgspec.structs import replace

from parley.client import (
    Client,
    ClientConnectionError,
    JsonRpcTransport,
    Reconnected,
    RestTransport,
    RetryPolicy,
    StreamIdleError,
    StreamItem,
    StreamPolicy,
    Transport,
)
from parley.model import (
    Artifact,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.errors import TaskNotFoundError, UnsupportedOperationError
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire import jsonrpc
from parley.wire.codec_table import JSONRPC
from parley.wire.errors import jsonrpc_error
from parley.wire.json_bytes import loads
from tests.client.scripted import Exchange, Request, scripted

pytestmark = pytest.mark.anyio

V1 = JSONRPC[Version.V1_0]
TASK_ID, CONTEXT_ID = "t-1", "c-1"
FAST = RetryPolicy(attempts=3, backoff=0.01)


def _status(state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=TASK_ID, context_id=CONTEXT_ID, status=TaskStatus(state=state)
    )


def _chunk(text: str, index: int) -> TaskArtifactUpdateEvent:
    artifact = Artifact(artifact_id="a", parts=(TextPart(text=text),))
    return TaskArtifactUpdateEvent(
        task_id=TASK_ID, context_id=CONTEXT_ID, artifact=artifact, append=index > 0
    )


EVENTS: list[StreamEvent] = [
    Task(id=TASK_ID, context_id=CONTEXT_ID, status=TaskStatus(state=TaskState.SUBMITTED)),
    _status(TaskState.WORKING),
    _chunk("one ", 0),
    _chunk("two ", 1),
    _chunk("three", 2),
    _status(TaskState.COMPLETED),
]
"""The task's events; event n (1-based) has SSE id `n`."""

SNAPSHOT = Task(
    id=TASK_ID,
    context_id=CONTEXT_ID,
    status=TaskStatus(state=TaskState.WORKING, timestamp=datetime(2025, 1, 1, tzinfo=UTC)),
    artifacts=(Artifact(artifact_id="a", parts=(TextPart(text="one two "),)),),
)
FINAL = replace(SNAPSHOT, status=TaskStatus(state=TaskState.COMPLETED))


class Script:
    """What the scripted agent server does on each stream request (the first is the send,
    the rest are resubscriptions): a list of steps per connection. A step is an event
    number (sent with its id), `("event", obj, id|None)`, `"cut"`, `"end"`, `"idle"`
    (wait until the test ends), `"comments"` or an error to answer with."""

    def __init__(self, *connections: Sequence[Any], task: Task = SNAPSHOT) -> None:
        self.connections = list(connections)
        self.task = task
        self.streams: list[Request] = []
        self.over = asyncio.Event()

    def is_stream(self, request: Request, body: Any) -> bool:
        if request.method == "GET" and request.path.endswith(":subscribe"):
            return True
        if request.path.endswith((":stream", ":subscribe")):
            return True
        method = body.get("method") if isinstance(body, dict) else None
        return method in ("SendStreamingMessage", "SubscribeToTask")

    async def handle(self, request: Request, exchange: Exchange) -> None:
        body = parsed(request.body)
        rpc = isinstance(body, dict) and "jsonrpc" in body
        if not self.is_stream(request, body):  # GetTask
            payload = V1.encode_response(Operation.GET_TASK, self.task)
            await exchange.json(200, jsonrpc.success(body["id"], payload) if rpc else payload)
            return
        self.streams.append(request)
        steps = self.connections.pop(0) if self.connections else ["cut"]
        await self._stream(exchange, steps, body["id"] if rpc else None)

    async def _stream(self, exchange: Exchange, steps: Sequence[Any], rpc_id: Any) -> None:
        first = steps[0] if steps else None
        if isinstance(first, Exception):
            await self._refuse(exchange, first, rpc_id)
            return
        await exchange.start_stream()
        for step in steps:
            if step == "cut":
                exchange.cut()
                return
            if step == "end":
                break
            if step == "idle":
                await self.over.wait()
                exchange.cut()
                return
            if step == "comments":
                for _ in range(8):
                    await asyncio.sleep(0.1)
                    await exchange.chunk(b": keep-alive\n\n")
                continue
            event, event_id = (
                (EVENTS[step - 1], str(step)) if isinstance(step, int) else (step[1], step[2])
            )
            payload = V1.encode_event(event)
            data = jsonrpc.success(rpc_id, payload) if rpc_id is not None else payload
            await exchange.event(data, event_id=event_id)
        await exchange.finish()

    async def _refuse(self, exchange: Exchange, error: Exception, rpc_id: Any) -> None:
        assert isinstance(error, TaskNotFoundError | UnsupportedOperationError)
        if rpc_id is not None:
            failure = {"jsonrpc": "2.0", "id": rpc_id, "error": jsonrpc_error(error, Version.V1_0)}
            await exchange.json(200, failure)
            return
        status = 404 if isinstance(error, TaskNotFoundError) else 400
        reason = "TASK_NOT_FOUND" if status == 404 else "UNSUPPORTED_OPERATION"
        details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]
        await exchange.json(
            status, {"error": {"code": status, "message": "no", "details": details}}
        )


def parsed(body: bytes) -> Any:
    return loads(body) if body else None


TransportMaker = Callable[[str], Transport]
BINDINGS: dict[str, TransportMaker] = {
    "jsonrpc": lambda url: JsonRpcTransport(url, Version.V1_0),
    "rest": lambda url: RestTransport(url, Version.V1_0),
}


@pytest.fixture(params=list(BINDINGS))
def binding(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


async def run(
    script: Script, binding: str, policy: StreamPolicy | None = None
) -> tuple[list[StreamItem], Any]:
    """Stream a message through the scripted server; the items and the stream."""
    async with scripted(script.handle) as server:
        client = Client(
            BINDINGS[binding](server.url), streaming=policy or StreamPolicy(reconnect=FAST)
        )
        try:
            async with client, client.stream("go") as stream:
                items = [item async for item in stream]
        finally:
            script.over.set()
    return items, stream


def last_event_id(request: Request) -> str | None:
    return request.headers.get("last-event-id")


# ------------------------------------------------------------------ replay (ids)


async def test_replay_delivers_every_event_exactly_once(binding: str) -> None:
    """The drop after event 3; the resubscription carries `Last-Event-ID: 3`; the server
    replays from 3 (one duplicate, skipped): the caller sees 1 to 6 once, and no marker."""
    script = Script([1, 2, 3, "cut"], [3, 4, 5, 6])
    items, stream = await run(script, binding)
    assert items == EVENTS
    assert stream.reconnects == 1
    assert stream.last_event_id == "6"
    assert [last_event_id(r) for r in script.streams] == [None, "3"]
    resubscribe = script.streams[1]
    if binding == "jsonrpc":
        assert parsed(resubscribe.body)["method"] == "SubscribeToTask"
        assert parsed(resubscribe.body)["params"]["id"] == TASK_ID
    else:
        assert (resubscribe.method, resubscribe.path) == ("GET", f"/tasks/{TASK_ID}:subscribe")


async def test_a_clean_end_before_the_task_finished_is_a_drop(binding: str) -> None:
    script = Script([1, 2, "end"], [3, 4, 5, 6])
    items, stream = await run(script, binding)
    assert items == EVENTS
    assert stream.reconnects == 1


async def test_a_server_that_cannot_replay_sends_a_snapshot(binding: str) -> None:
    """The server answers the resubscription with the Task as it is now (id 5): the caller
    gets it as `Reconnected(task)`, then the events after it."""
    script = Script([1, 2, 3, "cut"], [("event", SNAPSHOT, "5"), 6])
    items, _ = await run(script, binding)
    assert items[:3] == EVENTS[:3]
    marker = items[3]
    assert isinstance(marker, Reconnected)
    assert marker.task == SNAPSHOT
    assert "RemoteProtocolError" in marker.reason
    assert items[4:] == EVENTS[5:]


async def test_a_snapshot_that_brings_nothing_new_is_skipped(binding: str) -> None:
    script = Script([1, 2, 3, "cut"], [("event", SNAPSHOT, "3"), 4, 5, 6])
    items, _ = await run(script, binding)
    assert items == EVENTS


async def test_without_ids_the_caller_is_told(binding: str) -> None:
    """No ids: nothing to resume from; the server's snapshot comes as `Reconnected`, and
    an event that is not one is preceded by `Reconnected(None)`."""
    script = Script(
        [("event", EVENTS[0], None), ("event", EVENTS[1], None), "cut"],
        [("event", EVENTS[2], None), "cut"],
        [("event", SNAPSHOT, None), ("event", EVENTS[5], None)],
    )
    items, stream = await run(script, binding)
    assert items[:2] == EVENTS[:2]
    assert isinstance(items[2], Reconnected)
    assert items[2].task is None
    assert items[3] == EVENTS[2]
    assert isinstance(items[4], Reconnected)
    assert items[4].task == SNAPSHOT
    assert items[5:] == EVENTS[5:]
    assert stream.reconnects == 2
    assert [last_event_id(r) for r in script.streams] == [None, None, None]


async def test_the_task_finished_meanwhile(binding: str) -> None:
    """The resubscription is refused (the task is terminal, R-SUB-3): GetTask gives the
    final task, the stream's last item."""
    script = Script([1, 2, "cut"], [UnsupportedOperationError("terminal")], task=FINAL)
    items, _ = await run(script, binding)
    assert items[:2] == EVENTS[:2]
    assert len(items) == 3
    assert isinstance(items[2], Reconnected)
    assert items[2].task == FINAL


async def test_a_refusal_for_a_task_still_running_is_raised(binding: str) -> None:
    script = Script([1, 2, "cut"], [UnsupportedOperationError("no")], task=SNAPSHOT)
    with pytest.raises(UnsupportedOperationError):
        await run(script, binding)


async def test_a_vanished_task_is_raised(binding: str) -> None:
    script = Script([1, 2, "cut"], [TaskNotFoundError("gone")])
    with pytest.raises(TaskNotFoundError):
        await run(script, binding)


async def test_reconnection_gives_up_after_its_attempts(binding: str) -> None:
    """Resubscriptions that bring nothing new, `attempts` times in a row: the last
    failure is raised."""
    snapshot_only = [("event", SNAPSHOT, "2"), "cut"]
    script = Script([1, 2, "cut"], snapshot_only, snapshot_only, snapshot_only, snapshot_only)
    with pytest.raises(ClientConnectionError):
        await run(script, binding)
    assert len(script.streams) == 1 + FAST.attempts


async def test_a_drop_before_the_task_is_known_is_raised(binding: str) -> None:
    script = Script(["cut"])
    with pytest.raises(ClientConnectionError):
        await run(script, binding)
    assert len(script.streams) == 1


async def test_resubscription_can_be_turned_off(binding: str) -> None:
    script = Script([1, 2, "cut"])
    with pytest.raises(ClientConnectionError):
        await run(script, binding, StreamPolicy(resubscribe=False))
    script = Script([1, 2, "end"])
    items, _ = await run(script, binding, StreamPolicy(resubscribe=False))
    assert items == EVENTS[:2]


async def test_a_drop_after_the_final_event_ends_the_stream(binding: str) -> None:
    items, stream = await run(Script([1, 2, 3, 4, 5, 6, "cut"]), binding)
    assert items == EVENTS
    assert stream.reconnects == 0


# ------------------------------------------------------------------ idle limit


async def test_the_idle_limit_raises(binding: str) -> None:
    script = Script([1, "idle"])
    policy = StreamPolicy(idle_timeout=0.2, reconnect=FAST)
    with pytest.raises(StreamIdleError):
        await run(script, binding, policy)


async def test_the_idle_limit_can_resubscribe(binding: str) -> None:
    script = Script([1, 2, "idle"], [3, 4, 5, 6])
    policy = StreamPolicy(idle_timeout=0.2, resubscribe_on_idle=True, reconnect=FAST)
    items, _ = await run(script, binding, policy)
    assert items == EVENTS
    assert [last_event_id(r) for r in script.streams] == [None, "2"]


async def test_keep_alive_comments_keep_an_idle_limited_stream_open(binding: str) -> None:
    """0.8 s of comments only, under a 0.3 s idle limit: the stream lives on."""
    script = Script([1, 2, "comments", 3, 4, 5, 6])
    items, stream = await run(script, binding, StreamPolicy(idle_timeout=0.3))
    assert items == EVENTS
    assert stream.reconnects == 0


# ------------------------------------------------------------------ corner cases


async def test_opaque_ids_are_deduplicated_too(binding: str) -> None:
    """Ids that are not numbers: each delivered one is skipped if it comes again."""
    tagged = [("event", event, f"e{n}") for n, event in enumerate(EVENTS)]
    script = Script([*tagged[:3], "cut"], [tagged[2], *tagged[3:]])
    items, stream = await run(script, binding)
    assert items == EVENTS
    assert [last_event_id(r) for r in script.streams] == [None, "e2"]
    assert stream.last_event_id == "e5"


async def test_a_subscription_cut_before_its_first_event_is_retried(binding: str) -> None:
    """`subscribe` on a dropped first connection: GetTask says the task still runs, the
    next attempt brings the snapshot first, as a fresh subscription would (no marker)."""
    script = Script(["cut"], [("event", SNAPSHOT, "5"), 6])
    async with (
        scripted(script.handle) as server,
        Client(BINDINGS[binding](server.url), streaming=StreamPolicy(reconnect=FAST)) as client,
    ):
        items = [item async for item in client.subscribe(TASK_ID)]
    assert items == [SNAPSHOT, EVENTS[5]]


async def test_a_failing_get_task_does_not_stop_the_reconnection(binding: str) -> None:
    """GetTask (asked whether the task finished) fails: the client keeps reconnecting."""

    async def handle(request: Request, exchange: Exchange) -> None:
        body = parsed(request.body)
        if script.is_stream(request, body):
            await script.handle(request, exchange)
        else:
            await exchange.respond(500, b"<html>down</html>", content_type="text/html")

    script = Script([1, 2, "cut"], ["cut"], [3, 4, 5, 6])
    async with scripted(handle) as server:
        client = Client(BINDINGS[binding](server.url), streaming=StreamPolicy(reconnect=FAST))
        async with client, client.stream("go") as stream:
            items = [item async for item in stream]
    assert items == EVENTS
    assert stream.reconnects == 2


async def test_a_failing_get_task_leaves_the_refusal_to_be_raised(binding: str) -> None:
    async def handle(request: Request, exchange: Exchange) -> None:
        if script.is_stream(request, parsed(request.body)):
            await script.handle(request, exchange)
        else:
            await exchange.respond(500, b"down", content_type="text/plain")

    script = Script([1, "cut"], [UnsupportedOperationError("terminal")])
    async with scripted(handle) as server:
        client = Client(BINDINGS[binding](server.url), streaming=StreamPolicy(reconnect=FAST))
        async with client:
            with pytest.raises(UnsupportedOperationError):
                _ = [item async for item in client.stream("go")]


async def test_closing_a_stream_early_closes_the_connection(binding: str) -> None:
    script = Script([1, "idle"])
    async with scripted(script.handle) as server:
        async with Client(BINDINGS[binding](server.url)) as client:
            stream = client.stream("go")
            assert await anext(stream) == EVENTS[0]
            await stream.aclose()
            with pytest.raises(StopAsyncIteration):
                await anext(stream)
        script.over.set()
