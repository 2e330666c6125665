"""The client against a live Parley server (uvicorn on 127.0.0.1, gRPC beside it): every
operation in both protocol versions over JSON-RPC, HTTP+JSON and gRPC (issues 1 and 6,
acceptance 1). What only gRPC has (its channel, deadlines, statuses, TLS) is in
test_grpc.py.

The card declares a required extension, so every call proves the version's extensions
header (gRPC: metadata key) travels; its 1.0 interfaces carry the tenant `acme`, so every
1.0 call proves the tenant reaches the server (REST: the `/{tenant}` routes).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import anyio
import pytest
from msgspec.structs import replace

from parley.asgi import A2AApp, build_app
from parley.client import (
    GRPC_BINDING,
    HTTP_JSON_BINDING,
    JSONRPC_BINDING,
    Client,
    JsonRpcTransport,
    Reconnected,
    RestTransport,
    user_message,
)
from parley.client.grpc import GrpcTransport
from parley.grpc import GrpcServer
from parley.model import (
    AuthenticationInfo,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import (
    ExtensionSupportRequiredError,
    FieldViolation,
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.protocol.negotiation import Version
from parley.server.service import AgentService
from tests.client.agents import (
    EXTENSION,
    OPTIONAL_EXTENSION,
    TENANT,
    TokenAuthenticator,
    build_client_agent,
    client_card,
)
from tests.client.calls import ask, collect, key, task_of, text_of, wait_until
from tests.client.conftest import EVERY_MODE, Mode
from tests.interop.agent import QUESTION, STREAM_CHUNKS, Probe
from tests.interop.live import Live, serving
from tests.ports import free_port

pytestmark = pytest.mark.anyio

EXTENDED_NAME = "Client tests (extended)"
TRANSPORTS: dict[str, type[JsonRpcTransport | RestTransport | GrpcTransport]] = {
    JSONRPC_BINDING: JsonRpcTransport,
    HTTP_JSON_BINDING: RestTransport,
    GRPC_BINDING: GrpcTransport,
}


@pytest.fixture(params=EVERY_MODE, ids=str)
def mode(request: pytest.FixtureRequest) -> Mode:
    value: Mode = request.param
    return value


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    probe = Probe()
    agent = build_client_agent(probe)
    services: list[AgentService] = []
    grpc_port = free_port()

    def make_app(url: str) -> A2AApp:
        card = client_card(agent, url, grpc_address=f"127.0.0.1:{grpc_port}")
        extended = replace(card, name=EXTENDED_NAME)
        service = AgentService(agent.executor(), card, extended_card=extended)
        services.append(service)
        return build_app(service, authenticator=TokenAuthenticator())

    def make_grpc() -> GrpcServer:
        return GrpcServer(services[0], port=grpc_port, authenticator=TokenAuthenticator())

    with serving(make_app, make_grpc) as url:
        yield Live(url, services[0], probe)


@pytest.fixture(autouse=True)
def leaves_nothing_behind(live: Live) -> Iterator[None]:
    """After every test the server holds no task, subscriber or agent function: the
    client closed every stream it opened."""
    yield
    deadline = time.monotonic() + 5
    while live.leftovers() != (0, 0, 0):
        assert time.monotonic() < deadline, f"left behind: {live.leftovers()}"
        time.sleep(0.01)


@pytest.fixture
async def client(live: Live, mode: Mode) -> AsyncIterator[Client]:
    async with Client.connect(
        live.url, versions=[mode.version], bindings=[mode.binding], extensions=[EXTENSION]
    ) as connected:
        yield connected


@pytest.fixture
def gates(live: Live) -> Iterator[list[str]]:
    """Keys whose gates the test must open: all opened at teardown."""
    keys: list[str] = []
    yield keys
    for name in keys:
        live.probe.gate(name).set()


# ---------------------------------------------------------------------------- tests


async def test_connect_selects_the_interface_of_the_mode(client: Client, mode: Mode) -> None:
    """R-BIND-6, REFERENCE §5.3: the interface of the asked version and binding, its tenant
    kept (1.0); the transport of that binding."""
    assert client.interface is not None
    assert (client.interface.protocol_binding, client.version) == (mode.binding, mode.version)
    assert client.tenant == (TENANT if mode.version is Version.V1_0 else "")
    assert isinstance(client.transport, TRANSPORTS[mode.binding])
    assert client.card is not None
    assert client.card.name == "Interop"


async def test_default_connect_prefers_1_0_and_the_cards_first_binding(live: Live) -> None:
    async with Client.connect(live.url, extensions=[EXTENSION]) as client:
        assert client.version is Version.V1_0
        assert isinstance(client.transport, JsonRpcTransport)


async def test_blocking_send_returns_the_finished_task(client: Client) -> None:
    """R-SEND-1/2/3: the finished Task, its artifact, the user's message in its history."""
    message = ask(key("echo"), "echo")
    task = await task_of(client, message)
    assert task.status.state is TaskState.COMPLETED
    assert [text_of(a.parts) for a in task.artifacts] == [text_of(message.parts)]
    assert task.history[0].message_id == message.message_id


async def test_send_options(client: Client) -> None:
    """The options of a send reach the server: `historyLength` trims the answer (R-SEND-5)."""
    asked = await task_of(client, ask(key("greet"), "greet"))
    reply = user_message("Ada", task_id=asked.id)
    result = await client.send(reply, history_length=1, accepted_output_modes=["text/plain"])
    assert isinstance(result, Task)
    assert [m.message_id for m in result.history] == [reply.message_id]


async def test_a_direct_reply_is_a_message(client: Client) -> None:
    """R-SEND-1: an agent may answer with a Message and no task."""
    result = await client.send(ask("hello", "direct"))
    assert isinstance(result, Message)
    assert text_of(result.parts) == "direct: hello"


async def test_non_blocking_send_then_get_task(
    client: Client, live: Live, gates: list[str]
) -> None:
    """R-SEND-4: `return_immediately` answers at once; GetTask sees it finish."""
    text = key("slow")
    gates.append(text)
    task = await task_of(client, ask(text, "slow"), return_immediately=True)
    assert task.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
    live.probe.gate(text).set()
    deadline = time.monotonic() + 5
    while (await client.get_task(task.id)).status.state is not TaskState.COMPLETED:
        assert time.monotonic() < deadline
        await anyio.sleep(0.02)


async def test_stream_yields_every_event_in_order(client: Client) -> None:
    """R-STREAM-1/3/4/6: the Task, WORKING, the chunks, COMPLETED; nothing else."""
    stream = client.stream(ask(key("chunks"), "chunks"))
    items = await collect(stream)
    assert [type(i) for i in items] == [Task, TaskStatusUpdateEvent] + [
        TaskArtifactUpdateEvent
    ] * len(STREAM_CHUNKS) + [TaskStatusUpdateEvent]
    updates = [i for i in items if isinstance(i, TaskArtifactUpdateEvent)]
    assert [text_of(u.artifact.parts) for u in updates] == list(STREAM_CHUNKS)
    last = items[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED
    assert stream.task_id == last.task_id
    assert stream.reconnects == 0


async def test_a_streamed_direct_reply_is_one_message(client: Client) -> None:
    """R-STREAM-2: a Message-only stream has exactly one Message."""
    items = await collect(client.stream(ask("hi", "direct")))
    assert len(items) == 1
    assert isinstance(items[0], Message)


async def test_subscribe_to_a_running_task(client: Client, live: Live, gates: list[str]) -> None:
    """R-SUB-1/2: the current Task first, then its updates until COMPLETED."""
    text = key("background")
    gates.append(text)
    task = await task_of(client, ask(text, "background"), return_immediately=True)
    await wait_until(live.probe.started(text).is_set)
    async with client.subscribe(task.id) as stream:
        first = await anext(stream)
        assert isinstance(first, Task)
        assert (first.id, first.status.state) == (task.id, TaskState.WORKING)
        live.probe.gate(text).set()
        rest = [item async for item in stream]
    assert [type(i) for i in rest] == [TaskArtifactUpdateEvent, TaskStatusUpdateEvent]
    assert not any(isinstance(i, Reconnected) for i in rest)


async def test_cancel_task(client: Client, live: Live) -> None:
    """§8.6: cancel of a working task answers it CANCELED."""
    text = key("cancel")
    task = await task_of(client, ask(text, "until_cancelled"), return_immediately=True)
    await wait_until(live.probe.started(text).is_set)
    cancelled = await client.cancel_task(task.id)
    assert (cancelled.id, cancelled.status.state) == (task.id, TaskState.CANCELED)
    await wait_until(lambda: text in live.probe.cancelled)


async def test_multi_turn_follow_up(client: Client) -> None:
    """R-CTX-12: INPUT_REQUIRED, then the follow-up (task id only) completes it."""
    asked = await task_of(client, ask(key("greet"), "greet"))
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None
    assert text_of(asked.status.message.parts) == QUESTION
    done = await task_of(client, user_message("Ada", task_id=asked.id))
    assert (done.id, done.status.state) == (asked.id, TaskState.COMPLETED)
    assert [text_of(a.parts) for a in done.artifacts] == ["Hello, Ada!"]


async def test_get_task_history_length(client: Client, mode: Mode) -> None:
    """R-TASK-1/2: the N most recent messages. 0 means none, except in 0.3 REST's query
    and 0.3 gRPC's proto field (no presence: 0 is "not set"): unlimited."""
    asked = await task_of(client, ask(key("history"), "greet"))
    await task_of(client, user_message("Grace", task_id=asked.id))
    full = await client.get_task(asked.id)
    assert len(full.history) == 3
    one = await client.get_task(asked.id, history_length=1)
    assert [m.message_id for m in one.history] == [full.history[-1].message_id]
    none = await client.get_task(asked.id, history_length=0)
    unlimited = mode.version is Version.V0_3 and mode.binding != JSONRPC_BINDING
    assert len(none.history) == (3 if unlimited else 0)


async def test_list_tasks(client: Client, mode: Mode) -> None:
    """R-TASK-3/4 (1.0): filtered by context and paged; 0.3 has no ListTasks (D13): the
    client raises the server's MethodNotFoundError without a call."""
    context_id = uuid.uuid4().hex
    ids = {
        (await task_of(client, ask(key("list"), "echo", context_id=context_id))).id
        for _ in range(3)
    }
    if mode.version is Version.V0_3:
        with pytest.raises(MethodNotFoundError) as raised:
            await client.list_tasks(context_id=context_id)
        assert raised.value.metadata == {"method": "ListTasks"}
        return
    page = await client.list_tasks(context_id=context_id, page_size=2)
    assert (len(page.tasks), page.total_size) == (2, 3)
    rest = await client.list_tasks(context_id=context_id, page_token=page.next_page_token)
    assert {t.id for t in page.tasks + rest.tasks} == ids
    assert rest.next_page_token == ""
    done = await client.list_tasks(context_id=context_id, status=TaskState.COMPLETED)
    assert done.total_size == 3
    with_artifacts = await client.list_tasks(context_id=context_id, include_artifacts=True)
    assert all(len(t.artifacts) == 1 for t in with_artifacts.tasks)


async def test_push_config_crud(client: Client) -> None:
    """§9.1: create (with token and credentials), get, list, delete; gone after."""
    task = await task_of(client, ask(key("push"), "echo"))
    auth = AuthenticationInfo(scheme="Bearer", credentials="hook-token")
    created = await client.create_push_config(
        task.id, "https://example.com/hook", config_id="c1", token="t0k", authentication=auth
    )
    assert (created.task_id, created.id, created.url) == (task.id, "c1", "https://example.com/hook")
    assert created.authentication == auth
    got = await client.get_push_config(task.id, "c1")  # its secrets are not shown (R-PUSH-21)
    assert (got.id, got.token, got.authentication) == ("c1", "", replace(auth, credentials=""))
    listed = await client.list_push_configs(task.id)
    assert [c.id for c in listed.configs] == ["c1"]
    await client.delete_push_config(task.id, "c1")
    assert (await client.list_push_configs(task.id)).configs == ()
    with pytest.raises(TaskNotFoundError):
        await client.get_push_config(task.id, "c1")


async def test_extended_card_replaces_the_public_one(client: Client) -> None:
    """R-XCARD-2: the client keeps the extended card as its card."""
    card = await client.get_extended_card()
    assert card.name == EXTENDED_NAME
    assert client.card == card


async def test_the_extensions_header_activates_extensions(client: Client) -> None:
    """R-SVC-2/3, R-EXT: the client's extensions and a call's own reach the agent, in the
    version's header; undeclared ones are ignored (R-EXT-3)."""
    result = await client.send(
        ask("who", "whoami"), extensions=[OPTIONAL_EXTENSION, "urn:undeclared"]
    )
    assert isinstance(result, Message)
    assert text_of(result.parts) == f"anonymous|{EXTENSION},{OPTIONAL_EXTENSION}"


async def test_without_the_required_extension_every_call_fails(live: Live, mode: Mode) -> None:
    """R-CAP-2: the server's ExtensionSupportRequiredError, decoded in every mode (0.3
    REST has no status of its own for it, 400, but its body's `code` names it; gRPC
    carries the ErrorInfo reason in 0.3 too)."""
    async with Client.connect(live.url, versions=[mode.version], bindings=[mode.binding]) as bare:
        with pytest.raises(ExtensionSupportRequiredError, match=EXTENSION) as raised:
            await bare.get_task("any")
    assert type(raised.value) is ExtensionSupportRequiredError


async def test_the_tenant_scopes_the_tasks(client: Client, live: Live, mode: Mode) -> None:
    """REFERENCE §5.3, §10: a 1.0 interface's tenant goes into every request; a client
    without it does not see the tenant's tasks."""
    task = await task_of(client, ask(key("tenant"), "echo"))
    assert client.interface is not None
    transport = TRANSPORTS[mode.binding](client.interface.url, mode.version)
    async with Client(transport, extensions=[EXTENSION]) as untenanted:
        if mode.version is Version.V1_0:
            with pytest.raises(TaskNotFoundError):
                await untenanted.get_task(task.id)
        else:
            assert (await untenanted.get_task(task.id)).id == task.id


def carries_details(mode: Mode) -> bool:
    """Whether an error's metadata and field violations reach the client: 1.0 sends them
    in every binding; 0.3 only over gRPC (its JSON errors have no place for them)."""
    return mode.version is Version.V1_0 or mode.binding == GRPC_BINDING


async def test_server_errors_carry_class_message_and_metadata(client: Client, mode: Mode) -> None:
    """R-ERR: the error's class and message in every mode, with its metadata and field
    violations where the version's binding carries them."""
    with pytest.raises(TaskNotFoundError) as unknown:
        await client.get_task("no-such-task")
    with pytest.raises(InvalidParamsError) as invalid:
        await client.get_task("any", history_length=-1)
    if not carries_details(mode):
        assert (unknown.value.metadata, invalid.value.field_violations) == ({}, ())
        return
    assert unknown.value.metadata == {"taskId": "no-such-task"}
    assert unknown.value.message == "Task no-such-task not found"
    assert invalid.value.field_violations == (
        FieldViolation(field="historyLength", description="must be >= 0, got -1"),
    )


ERRORS = {
    "cancel-terminal": TaskNotCancelableError,
    "subscribe-terminal": UnsupportedOperationError,
    "send-terminal": UnsupportedOperationError,
}


@pytest.mark.parametrize("case", list(ERRORS))
async def test_server_errors_are_raised_as_the_servers_classes(
    client: Client, mode: Mode, case: str
) -> None:
    """The same error classes the server raises, naming the task, in every mode (R-BIND-3)."""
    done = await task_of(client, ask(key("done"), "echo"))
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "cancel-terminal": lambda: client.cancel_task(done.id),
        "subscribe-terminal": lambda: collect(client.subscribe(done.id)),
        "send-terminal": lambda: client.send("more", task_id=done.id),
    }
    with pytest.raises(ERRORS[case]) as raised:
        await calls[case]()
    if carries_details(mode):
        assert raised.value.metadata["taskId"] == done.id
