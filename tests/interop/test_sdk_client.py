"""The official `a2a-sdk` Python client (1.3) against a live Parley server on 127.0.0.1,
in 1.0 mode and in its 0.3 compatibility mode (`a2a.compat.v0_3`), over JSON-RPC,
HTTP+JSON and gRPC: every scenario runs in all six (version, binding) modes the card lists.

The client is built the way an application builds it: the card is fetched with the SDK's
resolver from the server's well-known URL, then narrowed to the one interface under test
(so `ClientFactory` selects that binding and version), and `ClientFactory.create` picks
the transport (`JsonRpcTransport`, `RestTransport`, `GrpcTransport`, or the 0.3
`CompatJsonRpcTransport`, `CompatRestTransport`, `CompatGrpcTransport`). gRPC channels
are opened on the interface's URL as the card gives it (no scheme stripped).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import grpc
import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as sdk_errors

from tests.interop.agent import QUESTION, STREAM_CHUNKS
from tests.interop.live import Live

pytestmark = pytest.mark.anyio

JSONRPC = "JSONRPC"
REST = "HTTP+JSON"
GRPC = "GRPC"


@dataclass(frozen=True)
class Mode:
    """One (protocol version, binding) pair the SDK client is pinned to."""

    version: str
    binding: str

    @property
    def legacy(self) -> bool:
        return self.version == "0.3"

    def __str__(self) -> str:
        return f"{self.version}-{self.binding}"


MODES = [Mode(v, b) for v in ("1.0", "0.3") for b in (JSONRPC, REST, GRPC)]
TRANSPORTS = {
    Mode("1.0", JSONRPC): "JsonRpcTransport",
    Mode("1.0", REST): "RestTransport",
    Mode("1.0", GRPC): "GrpcTransport",
    Mode("0.3", JSONRPC): "CompatJsonRpcTransport",
    Mode("0.3", REST): "CompatRestTransport",
    Mode("0.3", GRPC): "CompatGrpcTransport",
}


@pytest.fixture(params=MODES, ids=str)
def mode(request: pytest.FixtureRequest) -> Mode:
    value: Mode = request.param
    return value


@dataclass
class Clients:
    """Two SDK clients on the same interface: one sends without streaming (so a send is
    `SendMessage`), the other streams (`SendStreamingMessage`, `SubscribeToTask`)."""

    unary: Client
    streaming: Client
    card: Any


def narrowed(card: Any, mode: Mode) -> Any:
    """The card with only the interface of `mode` left in `supportedInterfaces`."""
    keep = [
        pb.AgentInterface(
            url=i.url, protocol_binding=i.protocol_binding, protocol_version=i.protocol_version
        )
        for i in card.supported_interfaces
        if i.protocol_binding == mode.binding and i.protocol_version == mode.version
    ]
    assert len(keep) == 1, f"the card lists {mode} once: {card.supported_interfaces}"
    out = pb.AgentCard()
    out.CopyFrom(card)
    del out.supported_interfaces[:]
    out.supported_interfaces.extend(keep)
    return out


@asynccontextmanager
async def connect(live: Live, mode: Mode) -> AsyncIterator[Clients]:
    async with httpx.AsyncClient(timeout=10) as http:
        card = narrowed(await A2ACardResolver(http, live.url).get_agent_card(), mode)
        made = []
        for streaming in (False, True):
            config = ClientConfig(
                supported_protocol_bindings=[mode.binding],
                streaming=streaming,
                httpx_client=http,
                grpc_channel_factory=grpc.aio.insecure_channel,
            )
            made.append(ClientFactory(config).create(card))
        try:
            yield Clients(made[0], made[1], card)
        finally:
            for client in made:
                await client.close()


@pytest.fixture
async def sdk(live: Live, mode: Mode) -> AsyncIterator[Clients]:
    async with connect(live, mode) as clients:
        yield clients


# ---------------------------------------------------------------------------- helpers


def key(prefix: str) -> str:
    """A unique message text: the agent's gates and probes are keyed by it."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def user_message(
    text: str, *, skill: str | None = None, task_id: str = "", context_id: str = ""
) -> Any:
    message = pb.Message(
        message_id=str(uuid.uuid4()),
        role=pb.ROLE_USER,
        parts=[pb.Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )
    if skill is not None:
        message.metadata.update({"skill": skill})
    return message


def send_request(message: Any, *, return_immediately: bool = False) -> Any:
    request = pb.SendMessageRequest(message=message)
    if return_immediately:
        request.configuration.return_immediately = True
    return request


async def collect(events: AsyncIterator[Any]) -> list[Any]:
    return [event async for event in events]


async def send(client: Client, message: Any, *, return_immediately: bool = False) -> Any:
    """A unary send: exactly one response, a Task (these skills never reply directly)."""
    events = await collect(
        client.send_message(send_request(message, return_immediately=return_immediately))
    )
    assert len(events) == 1
    assert events[0].WhichOneof("payload") == "task"
    return events[0].task


def text_of(parts: Any) -> str:
    return "".join(part.text for part in parts)


def state_name(state: int) -> str:
    name: str = pb.TaskState.Name(state)
    return name


async def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await anyio.sleep(0.01)


async def wait_for_state(client: Client, task_id: str, state: int) -> Any:
    """Poll GetTask until the task is in `state`."""
    deadline = time.monotonic() + 5
    while True:
        task = await client.get_task(pb.GetTaskRequest(id=task_id))
        if task.status.state == state:
            return task
        assert time.monotonic() < deadline, f"still {state_name(task.status.state)}"
        await anyio.sleep(0.02)


@pytest.fixture
def gates(live: Live) -> Iterator[list[str]]:
    """Keys whose gates the test opened or must open: all opened at teardown, so a
    failing test never leaves a skill waiting."""
    keys: list[str] = []
    yield keys
    for name in keys:
        live.probe.gate(name).set()


# ---------------------------------------------------------------------------- tests


async def test_the_sdk_selects_the_interface_under_test(sdk: Clients, mode: Mode) -> None:
    """R-CARD-28, R-BIND-5: the hybrid card lists all six interfaces; narrowed to one, the
    SDK builds that binding's transport for that version (1.0 core or 0.3 compat)."""
    interface = sdk.card.supported_interfaces[0]
    assert (interface.protocol_binding, interface.protocol_version) == (
        mode.binding,
        mode.version,
    )
    for client in (sdk.unary, sdk.streaming):
        assert type(client._transport).__name__ == TRANSPORTS[mode]


async def test_the_full_card_makes_the_sdk_choose_1_0(live: Live) -> None:
    """With the whole card, the SDK prefers 1.0 over 0.3 (and JSON-RPC, listed first)."""
    async with httpx.AsyncClient(timeout=10) as http:
        card = await A2ACardResolver(http, live.url).get_agent_card()
        listed = [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces]
        assert listed == [(b, v) for v in ("1.0", "0.3") for b in (JSONRPC, REST, GRPC)]
        for binding, transport in ((JSONRPC, "JsonRpcTransport"), (REST, "RestTransport")):
            config = ClientConfig(supported_protocol_bindings=[binding], httpx_client=http)
            client = ClientFactory(config).create(card)
            assert type(client._transport).__name__ == transport
            await client.close()
    # The SDK's one-call path: its factory sets `A2A-Version: 1.0` on its HTTP client, so
    # Parley answers the card request with the pure 1.0 card; it lists every interface too.
    config = ClientConfig(supported_protocol_bindings=[REST, JSONRPC], streaming=False)
    factory = ClientFactory(config)
    client = await factory.create_from_url(live.url)
    assert type(client._transport).__name__ == "JsonRpcTransport"
    task = await send(client, user_message(key("echo"), skill="echo"))
    assert task.status.state == pb.TASK_STATE_COMPLETED
    await client.close()


async def test_the_sdk_factory_stamps_a2a_version_on_a_shared_http_client(live: Live) -> None:
    """SDK behaviour worth knowing (not a Parley issue): `ClientFactory` sets the default
    header `A2A-Version: 1.0` on a caller-supplied httpx client, so every later request on
    that client claims 1.0: a card fetched with it is Parley's pure 1.0 card (no 0.3
    top-level `url`/`protocolVersion`, still all six interfaces), and a plain 0.3 call
    on it is refused with VersionNotSupported (R-VER-5, REFERENCE §1.3)."""
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as http:
        assert "A2A-Version" not in http.headers
        ClientFactory(ClientConfig(httpx_client=http))
        assert http.headers["A2A-Version"] == "1.0"
        card = (await http.get("/.well-known/agent-card.json")).json()
        assert "url" not in card
        assert "protocolVersion" not in card
        assert len(card["supportedInterfaces"]) == 6
        body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t-1"}}
        response = await http.post("/", json=body)
    assert response.json()["error"]["code"] == -32009


async def test_blocking_send_completes_with_the_echoed_artifact(sdk: Clients) -> None:
    """R-SEND-1/2/3, R-CTX-1/8/9: a blocking send returns the finished Task, with new ids,
    the artifact, and the user's message in its history."""
    text = key("echo")
    message = user_message(text, skill="echo")
    task = await send(sdk.unary, message)
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert task.id
    assert task.context_id
    assert [text_of(a.parts) for a in task.artifacts] == [text]
    assert task.artifacts[0].artifact_id
    first = task.history[0]
    assert (first.message_id, first.role, text_of(first.parts)) == (
        message.message_id,
        pb.ROLE_USER,
        text,
    )
    assert (first.task_id, first.context_id) == (task.id, task.context_id)


async def test_non_blocking_send_returns_at_once_and_completes_later(
    sdk: Clients, live: Live, gates: list[str]
) -> None:
    """R-SEND-4: `returnImmediately` (0.3: `blocking: false`) returns the task while the
    agent still works; GetTask later shows it COMPLETED with its artifact."""
    text = key("slow")
    gates.append(text)
    task = await send(sdk.unary, user_message(text, skill="slow"), return_immediately=True)
    assert task.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    assert task.id
    assert task.context_id
    await wait_until(live.probe.started(text).is_set)
    polled = await sdk.unary.get_task(pb.GetTaskRequest(id=task.id))
    assert polled.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    live.probe.gate(text).set()
    done = await wait_for_state(sdk.unary, task.id, pb.TASK_STATE_COMPLETED)
    assert done.context_id == task.context_id
    assert [text_of(a.parts) for a in done.artifacts] == [f"done: {text}"]


async def test_stream_delivers_the_task_then_the_chunks_in_order(sdk: Clients) -> None:
    """R-STREAM-1/3/4/6: the Task first, WORKING, the artifact's chunks in order (the first
    not appended, the rest appended, the last marked lastChunk), then COMPLETED."""
    text = key("stream")
    request = send_request(user_message(text, skill="chunks"))
    events = await collect(sdk.streaming.send_message(request))
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds == ["task", "status_update"] + ["artifact_update"] * len(STREAM_CHUNKS) + [
        "status_update"
    ]
    task = events[0].task
    assert task.status.state == pb.TASK_STATE_SUBMITTED
    assert events[1].status_update.status.state == pb.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    updates = [event.artifact_update for event in events[2:-1]]
    assert [text_of(u.artifact.parts) for u in updates] == list(STREAM_CHUNKS)
    assert [u.append for u in updates] == [False, True, True]
    assert [u.last_chunk for u in updates] == [False, False, True]
    assert len({u.artifact.artifact_id for u in updates}) == 1
    for event in events[1:]:
        body = getattr(event, event.WhichOneof("payload"))
        assert (body.task_id, body.context_id) == (task.id, task.context_id)
    stored = await sdk.unary.get_task(pb.GetTaskRequest(id=task.id))
    assert stored.status.state == pb.TASK_STATE_COMPLETED
    assert [text_of(a.parts) for a in stored.artifacts] == ["".join(STREAM_CHUNKS)]


async def test_cancel_stops_the_agent(sdk: Clients, live: Live) -> None:
    """R-TASK-10, §8.6: cancel of a working task returns it CANCELED; the agent function
    saw CancelledError and stopped ticking; GetTask agrees."""
    text = key("cancel")
    task = await send(
        sdk.unary, user_message(text, skill="until_cancelled"), return_immediately=True
    )
    await wait_until(live.probe.started(text).is_set)
    cancelled = await sdk.unary.cancel_task(pb.CancelTaskRequest(id=task.id))
    assert cancelled.id == task.id
    assert cancelled.context_id == task.context_id
    assert cancelled.status.state == pb.TASK_STATE_CANCELED
    assert text in live.probe.cancelled
    ticks = live.probe.ticks.get(text, 0)
    await anyio.sleep(0.05)
    assert live.probe.ticks[text] == ticks, "the agent kept running after the cancel"
    stored = await sdk.unary.get_task(pb.GetTaskRequest(id=task.id))
    assert stored.status.state == pb.TASK_STATE_CANCELED


async def test_subscribe_to_a_running_task(sdk: Clients, live: Live, gates: list[str]) -> None:
    """R-SUB-1/2: the first event is the current Task (WORKING), then the updates, and the
    stream ends at COMPLETED."""
    text = key("subscribe")
    gates.append(text)
    task = await send(sdk.unary, user_message(text, skill="background"), return_immediately=True)
    await wait_until(live.probe.started(text).is_set)
    stream = sdk.streaming.subscribe(pb.SubscribeToTaskRequest(id=task.id))
    first = await anext(stream)
    assert first.WhichOneof("payload") == "task"
    assert (first.task.id, first.task.context_id) == (task.id, task.context_id)
    assert first.task.status.state == pb.TASK_STATE_WORKING
    live.probe.gate(text).set()
    rest = await collect(stream)
    assert [event.WhichOneof("payload") for event in rest] == ["artifact_update", "status_update"]
    assert text_of(rest[0].artifact_update.artifact.parts) == f"result: {text}"
    assert rest[0].artifact_update.task_id == task.id
    assert rest[1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert rest[1].status_update.task_id == task.id


async def test_multi_turn_follow_up_inherits_the_context(sdk: Clients) -> None:
    """R-CTX-12, §8.2: INPUT_REQUIRED ends the blocking send; a follow-up naming only the
    task id resumes the same task, in the same context, to COMPLETED."""
    asked = await send(sdk.unary, user_message(key("greet"), skill="greet"))
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert text_of(asked.status.message.parts) == QUESTION
    assert asked.status.message.role == pb.ROLE_AGENT
    follow_up = user_message("Ada", task_id=asked.id)
    done = await send(sdk.unary, follow_up)
    assert (done.id, done.context_id) == (asked.id, asked.context_id)
    assert done.status.state == pb.TASK_STATE_COMPLETED
    assert [text_of(a.parts) for a in done.artifacts] == ["Hello, Ada!"]
    answer = next(m for m in done.history if m.message_id == follow_up.message_id)
    assert (answer.task_id, answer.context_id) == (asked.id, asked.context_id)


async def test_get_task_history_length(sdk: Clients, mode: Mode) -> None:
    """R-TASK-1/2, §8.4, D11: historyLength unset → the whole history; N → the N most
    recent messages; 0 → no history in 1.0 (and in Parley's 0.3 JSON-RPC), but unlimited in
    0.3 REST and gRPC, whose proto has no presence bit (`0` = unset)."""
    asked = await send(sdk.unary, user_message(key("history"), skill="greet"))
    await send(sdk.unary, user_message("Grace", task_id=asked.id))
    full = await sdk.unary.get_task(pb.GetTaskRequest(id=asked.id))
    ids = [m.message_id for m in full.history]
    # The first message, the question (moved from the status when the reply came), the reply.
    assert [(m.role, text_of(m.parts)) for m in full.history][1:] == [
        (pb.ROLE_AGENT, QUESTION),
        (pb.ROLE_USER, "Grace"),
    ]
    assert full.history[0].role == pb.ROLE_USER
    for length in (1, 2, len(ids)):
        got = await sdk.unary.get_task(pb.GetTaskRequest(id=asked.id, history_length=length))
        assert [m.message_id for m in got.history] == ids[-length:]
    none = await sdk.unary.get_task(pb.GetTaskRequest(id=asked.id, history_length=0))
    expected = ids if mode.legacy and mode.binding != JSONRPC else []
    assert [m.message_id for m in none.history] == expected
    assert none.status.state == pb.TASK_STATE_COMPLETED
    assert [text_of(a.parts) for a in none.artifacts] == ["Hello, Grace!"]


async def test_list_tasks(sdk: Clients, mode: Mode) -> None:
    """R-TASK-3/4/6/9/12 (1.0 only): ListTasks filtered by context, paged by cursor, without
    artifacts unless asked. 0.3 has no ListTasks (D13): the SDK refuses it client-side."""
    context_id = str(uuid.uuid4())
    ids = set()
    for _ in range(3):
        task = await send(sdk.unary, user_message(key("list"), skill="echo", context_id=context_id))
        assert task.context_id == context_id
        ids.add(task.id)
    if mode.legacy:
        with pytest.raises(NotImplementedError):
            await sdk.unary.list_tasks(pb.ListTasksRequest(context_id=context_id))
        return
    listed = await sdk.unary.list_tasks(pb.ListTasksRequest(context_id=context_id))
    assert {t.id for t in listed.tasks} == ids
    assert (listed.next_page_token, listed.page_size, listed.total_size) == ("", 50, 3)
    stamps = [t.status.timestamp.ToNanoseconds() for t in listed.tasks]
    assert stamps == sorted(stamps, reverse=True)  # R-TASK-7
    assert all(not t.artifacts for t in listed.tasks)
    assert all(t.status.state == pb.TASK_STATE_COMPLETED for t in listed.tasks)
    full = await sdk.unary.list_tasks(
        pb.ListTasksRequest(context_id=context_id, include_artifacts=True, history_length=0)
    )
    assert all(len(t.artifacts) == 1 and not t.history for t in full.tasks)
    seen: list[str] = []
    token = ""
    for _ in range(3):
        page = await sdk.unary.list_tasks(
            pb.ListTasksRequest(context_id=context_id, page_size=2, page_token=token)
        )
        seen.extend(t.id for t in page.tasks)
        assert page.total_size == 3
        token = page.next_page_token
        if not token:
            break
    assert sorted(seen) == sorted(ids)
    assert seen == [t.id for t in listed.tasks]


async def test_multi_turn_over_streams(sdk: Clients) -> None:
    """R-STREAM-11, §7.2: a stream ends at INPUT_REQUIRED; the follow-up's stream starts
    with the task's snapshot (the same ids, the reply in its history), then WORKING, the
    artifact and COMPLETED."""
    first = await collect(
        sdk.streaming.send_message(send_request(user_message(key("greet"), skill="greet")))
    )
    assert [e.WhichOneof("payload") for e in first] == ["task", "status_update"]
    task = first[0].task
    asked = first[1].status_update
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert text_of(asked.status.message.parts) == QUESTION
    follow_up = user_message("Lin", task_id=task.id)
    second = await collect(sdk.streaming.send_message(send_request(follow_up)))
    assert [e.WhichOneof("payload") for e in second] == [
        "task",
        "status_update",
        "artifact_update",
        "status_update",
    ]
    snapshot = second[0].task
    assert (snapshot.id, snapshot.context_id) == (task.id, task.context_id)
    assert snapshot.history[-1].message_id == follow_up.message_id
    assert second[1].status_update.status.state == pb.TASK_STATE_WORKING
    assert text_of(second[2].artifact_update.artifact.parts) == "Hello, Lin!"
    assert second[3].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert all(
        getattr(e, e.WhichOneof("payload")).context_id == task.context_id for e in second[1:]
    )


ERROR_CASES = ["get-unknown", "cancel-terminal", "subscribe-terminal", "send-terminal"]


async def provoke(sdk: Clients, case: str) -> None:
    """Make the call `case` names; it must raise."""
    if case == "get-unknown":
        await sdk.unary.get_task(pb.GetTaskRequest(id="no-such-task"))
        return
    done = await send(sdk.unary, user_message(key("done"), skill="echo"))
    if case == "cancel-terminal":
        await sdk.unary.cancel_task(pb.CancelTaskRequest(id=done.id))
    elif case == "subscribe-terminal":
        await collect(sdk.streaming.subscribe(pb.SubscribeToTaskRequest(id=done.id)))
    else:
        await collect(sdk.unary.send_message(send_request(user_message("x", task_id=done.id))))


SDK_ERRORS: dict[str, type[Exception]] = {
    "get-unknown": sdk_errors.TaskNotFoundError,  # R-CTX-11, R-ERR-12
    "cancel-terminal": sdk_errors.TaskNotCancelableError,  # R-TASK-10
    "subscribe-terminal": sdk_errors.UnsupportedOperationError,  # R-SUB-3
    "send-terminal": sdk_errors.UnsupportedOperationError,  # R-SEND-8
}


@pytest.mark.parametrize("case", ERROR_CASES)
async def test_errors_reach_the_sdk_as_its_exceptions(sdk: Clients, case: str) -> None:
    """Parley's errors decode into the SDK's own exception classes on every binding of
    both versions. In 0.3 REST the SDK's compat transport reads the class name from the
    body's `type`, which Parley's 0.3 REST errors carry (docs/decisions.md, "0.3 REST
    error bodies"); without it, 404 would be MethodNotFoundError and anything else a bare
    A2AClientError."""
    with pytest.raises(SDK_ERRORS[case]):
        await provoke(sdk, case)
