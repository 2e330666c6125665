"""The client against the official a2a-sdk server (1.x, started on 127.0.0.1), in 1.0 and in
the SDK's 0.3 compatibility mode, over JSON-RPC, HTTP+JSON and gRPC (its 1.0 and 0.3
services on one port, beside the app) (acceptance 2, issue 6): every operation the SDK
supports succeeds; what it does not is pinned down as it answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from parley.asgi import A2AApp
from parley.client import Client, ClientConnectionError, StreamPolicy, user_message
from parley.model import Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from parley.protocol.errors import (
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from parley.protocol.negotiation import Version
from tests.client.calls import ask, key, task_of, text_of
from tests.client.conftest import EVERY_MODE, Mode
from tests.client.sdk_server import EXTENDED_NAME, Gates, SdkGrpcServer, sdk_servers
from tests.interop.agent import STREAM_CHUNKS
from tests.interop.live import serving
from tests.ports import free_port

pytestmark = pytest.mark.anyio

REST_V03 = Mode(Version.V0_3, "HTTP+JSON")


class SDK:
    def __init__(self, url: str, gates: Gates) -> None:
        self.url = url
        self.gates = gates


@pytest.fixture(params=EVERY_MODE, ids=str)
def mode(request: pytest.FixtureRequest) -> Mode:
    value: Mode = request.param
    return value


@pytest.fixture(scope="module")
def sdk() -> Iterator[SDK]:
    gates = Gates()
    grpc_port = free_port()
    beside: list[SdkGrpcServer] = []

    def make_app(url: str) -> A2AApp:
        app, grpc_server = sdk_servers(url, gates, grpc_port)
        beside.append(grpc_server)
        made: A2AApp = app  # any ASGI app
        return made

    with serving(make_app, lambda: beside[0]) as url:
        yield SDK(url, gates)


@pytest.fixture
async def client(sdk: SDK, mode: Mode) -> AsyncIterator[Client]:
    async with Client.connect(sdk.url, versions=[mode.version], bindings=[mode.binding]) as c:
        yield c


async def test_the_sdk_card_is_read_and_the_mode_selected(client: Client, mode: Mode) -> None:
    """The SDK's card (its own hybrid form) lists the six interfaces."""
    assert client.card is not None
    assert client.card.name == "SDK agent"
    assert len(client.card.supported_interfaces) == 6
    assert (client.version, client.interface.protocol_binding if client.interface else "") == (
        mode.version,
        mode.binding,
    )


async def test_send_get_and_history(client: Client) -> None:
    message = ask(key("echo"), "echo")
    task = await task_of(client, message)
    assert task.status.state is TaskState.COMPLETED
    assert [text_of(a.parts) for a in task.artifacts] == [text_of(message.parts)]
    got = await client.get_task(task.id, history_length=1)
    assert got.id == task.id
    assert len(got.history) == 1


async def test_stream(client: Client) -> None:
    async with client.stream(ask(key("chunks"), "chunks")) as stream:
        items = [item async for item in stream]
    assert [type(i) for i in items] == [Task, TaskStatusUpdateEvent] + [
        TaskArtifactUpdateEvent
    ] * len(STREAM_CHUNKS) + [TaskStatusUpdateEvent]
    chunks = [text_of(i.artifact.parts) for i in items if isinstance(i, TaskArtifactUpdateEvent)]
    assert chunks == list(STREAM_CHUNKS)
    assert stream.last_event_id == ""  # the SDK sends no SSE ids (gRPC has none)


async def test_multi_turn(client: Client) -> None:
    asked = await task_of(client, ask(key("greet"), "greet"))
    assert asked.status.state is TaskState.INPUT_REQUIRED
    done = await task_of(client, user_message("Ada", task_id=asked.id))
    assert done.status.state is TaskState.COMPLETED
    assert [text_of(a.parts) for a in done.artifacts] == ["Hello, Ada!"]


async def test_subscribe_cancel_and_close_mid_stream(client: Client, sdk: SDK) -> None:
    """A subscription follows the task to COMPLETED; a stream closed mid-way leaves its task
    running, which CancelTask then cancels."""
    text = key("wait")
    task = await task_of(client, ask(text, "wait"), return_immediately=True)
    try:
        async with client.subscribe(task.id) as stream:
            first = await anext(stream)
            assert isinstance(first, Task)
            assert first.id == task.id
            sdk.gates.gate(text).set()
            rest = [item async for item in stream]
        last = rest[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.COMPLETED
    finally:
        sdk.gates.gate(text).set()
    stream = client.stream(ask(key("cancel"), "wait"))
    running = await anext(stream)
    assert isinstance(running, Task)
    await stream.aclose()
    assert (await client.get_task(running.id)).status.state is TaskState.WORKING
    cancelled = await client.cancel_task(running.id)
    assert cancelled.status.state is TaskState.CANCELED


async def test_list_tasks(client: Client, mode: Mode) -> None:
    task = await task_of(client, ask(key("list"), "echo"))
    if mode.version is Version.V0_3:
        with pytest.raises(MethodNotFoundError):
            await client.list_tasks()
        return
    listed = await client.list_tasks(context_id=task.context_id)
    assert [t.id for t in listed.tasks] == [task.id]


async def test_push_config_crud(client: Client, mode: Mode) -> None:
    """Create, get, list; delete too, except in 0.3 REST, where the SDK's compat layer
    has no DELETE route: the request falls through to its 1.0 tenant route
    (`/{tenant}/tasks/…`, tenant `v1`), which refuses the 0.3 version."""
    task = await task_of(client, ask(key("push"), "echo"))
    created = await client.create_push_config(task.id, "https://example.com/hook", config_id="c1")
    assert (created.task_id, created.id) == (task.id, "c1")
    assert (await client.get_push_config(task.id, "c1")).url == "https://example.com/hook"
    assert [c.id for c in (await client.list_push_configs(task.id)).configs] == ["c1"]
    if mode == REST_V03:
        with pytest.raises(VersionNotSupportedError):
            await client.delete_push_config(task.id, "c1")
        return
    await client.delete_push_config(task.id, "c1")
    assert (await client.list_push_configs(task.id)).configs == ()


async def test_extended_card(client: Client) -> None:
    assert (await client.get_extended_card()).name == EXTENDED_NAME


async def test_errors_are_the_servers_classes(client: Client) -> None:
    """The same classes and messages in every mode (gRPC: in 1.0 by the ErrorInfo reason,
    in 0.3 by the `<ErrorClass>: ` prefix of the message, the SDK's 0.3 service sending no
    details)."""
    with pytest.raises(TaskNotFoundError) as unknown:
        await client.get_task("no-such-task")
    assert unknown.value.message == "Task not found"
    with pytest.raises(InvalidParamsError) as invalid:
        await client.get_task("any", history_length=-1)
    assert invalid.value.message == "history length must be non-negative"
    done = await task_of(client, ask(key("done"), "echo"))
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(done.id)
    with pytest.raises(UnsupportedOperationError):
        await client.send("more", task_id=done.id)


async def test_subscribing_to_a_finished_task(sdk: SDK, mode: Mode) -> None:
    """UnsupportedOperationError (R-SUB-3). The SDK's 0.3 REST layer raises it inside the
    SSE response instead, which cuts the connection: the client then finds the task
    finished with GetTask and ends the stream with it (as a `Reconnected` item)."""
    async with Client.connect(
        sdk.url,
        versions=[mode.version],
        bindings=[mode.binding],
        streaming=StreamPolicy(resubscribe=mode == REST_V03),
    ) as client:
        done = await task_of(client, ask(key("done"), "echo"))
        stream = client.subscribe(done.id)
        if mode != REST_V03:
            with pytest.raises(UnsupportedOperationError):
                await anext(stream)
            return
        items = [item async for item in stream]
    assert len(items) == 1
    final = getattr(items[0], "task", None)
    assert isinstance(final, Task)
    assert final.status.state is TaskState.COMPLETED


async def test_without_resubscription_a_cut_stream_raises(sdk: SDK) -> None:
    """The SDK's 0.3 REST cut, seen raw: ClientConnectionError."""
    async with Client.connect(
        sdk.url,
        versions=[Version.V0_3],
        bindings=["HTTP+JSON"],
        streaming=StreamPolicy(resubscribe=False),
    ) as client:
        done = await task_of(client, ask(key("done"), "echo"))
        with pytest.raises(ClientConnectionError):
            await anext(client.subscribe(done.id))
