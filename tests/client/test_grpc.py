"""What only the client's gRPC transport has (issue 6), against a live Parley gRPC server in
both protocol versions: streams cancelled mid-way, dropped and resubscribed, idle; the
transport's own event stream and channel; credentials, headers and extensions as metadata;
deadlines and retries; interface addresses and TLS; and, on a scripted gRPC server, every
status the translation point knows. Every operation in every binding, gRPC among them, is
in test_parley.py.
The official SDK's gRPC server: test_sdk.py, with its other bindings.
"""

from __future__ import annotations

import ipaddress
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from msgspec.structs import replace

from parley.client import (
    APIKeyAuth,
    BearerAuth,
    CallOptions,
    Client,
    ClientConnectionError,
    ClientProtocolError,
    ClientTimeoutError,
    Reconnected,
    RetryPolicy,
    StreamIdleError,
    StreamItem,
    StreamPolicy,
)
from parley.client.grpc import GrpcTransport
from parley.grpc import A2AServicer, GrpcServer
from parley.grpc.servicer import Settings
from parley.model import (
    AgentCard,
    GetTaskRequest,
    Message,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import (
    ExtendedAgentCardNotConfiguredError,
    FieldViolation,
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.protocol.operations import GRPC_SERVICES, Operation
from parley.server.context import AnonymousAuthenticator
from parley.server.service import AgentService
from parley.wire.cards import hybrid_card
from parley.wire.codec_table import GRPC as GRPC_CODECS
from tests.client.agents import (
    API_KEY,
    EXTENSION,
    OPTIONAL_EXTENSION,
    TOKEN,
    TokenAuthenticator,
    build_client_agent,
    client_card,
)
from tests.client.calls import ask, collect, key, task_of, text_of, wait_until
from tests.client.scripted import Exchange, Proxy, Request, scripted
from tests.interop.agent import STREAM_CHUNKS, Probe
from tests.ports import free_port

pytestmark = pytest.mark.anyio

EXTENDED_NAME = "Client tests (extended)"
GRPC = "GRPC"
CARD_PATH = "/.well-known/agent-card.json"


def grpc_card(url: str, address: str) -> AgentCard:
    """Only the gRPC interfaces (1.0 under the tenant), every capability, the required
    and the optional extension."""
    return client_card(build_client_agent(Probe()), url, bindings=(), grpc_address=address)


@dataclass
class Served:
    """A Parley gRPC server, and the HTTP server of its card (`url`)."""

    url: str
    service: AgentService
    probe: Probe
    server: GrpcServer

    def leftovers(self) -> tuple[int, int]:
        """(live tasks, subscribers): both 0 once every stream and task is over."""
        return self.service.runner.live_count(), self.service.broker.subscriber_count()


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    probe = Probe()
    agent = build_client_agent(probe)
    port = free_port()
    card_box: list[AgentCard] = []

    async def card(request: Request, exchange: Exchange) -> None:
        if request.path == CARD_PATH:
            await exchange.json(200, hybrid_card(card_box[0]))
        else:
            await exchange.json(404, {"error": "no"})

    async with scripted(card) as http:
        card_box.append(grpc_card(http.url, f"127.0.0.1:{port}"))
        extended = replace(card_box[0], name=EXTENDED_NAME)
        service = AgentService(agent.executor(), card_box[0], extended_card=extended)
        server = GrpcServer(service, port=port, authenticator=TokenAuthenticator())
        async with server:
            live = Served(http.url, service, probe, server)
            yield live
            deadline = time.monotonic() + 5
            while live.leftovers() != (0, 0):
                assert time.monotonic() < deadline, f"left behind: {live.leftovers()}"
                await anyio.sleep(0.01)


@pytest.fixture(params=list(RELEASED_VERSIONS), ids=lambda v: v.value)
def version(request: pytest.FixtureRequest) -> Version:
    chosen: Version = request.param
    return chosen


@pytest.fixture
async def client(served: Served, version: Version) -> AsyncIterator[Client]:
    async with Client.connect(
        served.url, versions=[version], bindings=[GRPC], extensions=[EXTENSION]
    ) as connected:
        yield connected


@pytest.fixture
def gates(served: Served) -> Iterator[list[str]]:
    """Keys whose gates the test must open: all opened at teardown."""
    keys: list[str] = []
    yield keys
    for name in keys:
        served.probe.gate(name).set()


# ---------------------------------------------------------------------------- streams


async def test_closing_a_stream_mid_way_cancels_the_call(client: Client, served: Served) -> None:
    """The call is cancelled: the server drops its subscription at once, the task runs on."""
    text = key("mid-stream")
    stream = client.stream(ask(text, "until_cancelled"))
    first = await anext(stream)
    assert isinstance(first, Task)
    await wait_until(lambda: served.service.broker.subscriber_count() == 1)
    await stream.aclose()
    await wait_until(lambda: served.service.broker.subscriber_count() == 0)
    assert (await client.get_task(first.id)).status.state is TaskState.WORKING
    await client.cancel_task(first.id)


async def test_the_transports_own_event_stream(served: Served, version: Version) -> None:
    """Straight on the transport: an async iterator without ids; ended, it stays ended;
    closing the transport shuts its channel down."""
    transport = GrpcTransport(served.server.address, version)
    try:
        request = SendMessageRequest(message=ask(key("chunks"), "chunks"))
        stream = transport.send_streaming_message(request, CallOptions(extensions=(EXTENSION,)))
        events = [event async for event in stream]
        assert len(events) == len(STREAM_CHUNKS) + 3
        assert stream.last_event_id == ""
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
    finally:
        channel = transport.channel
        await transport.aclose()
    assert channel.get_state() is grpc.ChannelConnectivity.SHUTDOWN


async def test_a_dropped_stream_resubscribes(served: Served, version: Version) -> None:
    """The connection is cut mid-stream (UNAVAILABLE): the client resubscribes; gRPC cannot
    resume, so it says so with `Reconnected` and the task's snapshot, then carries on."""
    text = key("dropped")
    async with Proxy(f"http://{served.server.address}") as proxy:
        transport = GrpcTransport(proxy.url, version)
        async with Client(transport, extensions=[EXTENSION]) as client:
            stream = client.stream(ask(text, "background"))
            items: list[StreamItem] = []
            async for item in stream:
                items.append(item)
                if isinstance(item, TaskStatusUpdateEvent):
                    proxy.cut()
                if isinstance(item, Reconnected):
                    served.probe.gate(text).set()
    assert [type(i) for i in items] == [
        Task,
        TaskStatusUpdateEvent,
        Reconnected,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    snapshot = items[2]
    assert isinstance(snapshot, Reconnected)
    assert snapshot.task is not None
    assert snapshot.task.status.state is TaskState.WORKING
    assert "UNAVAILABLE" in snapshot.reason
    assert stream.reconnects == 1
    assert proxy.connections == 2


async def test_an_idle_stream_fails(served: Served, version: Version, gates: list[str]) -> None:
    """The agent goes silent after WORKING (until teardown opens its gate): the idle
    limit ends the stream with StreamIdleError, the agent still running."""
    text = key("idle")
    gates.append(text)
    async with Client.connect(
        served.url,
        versions=[version],
        bindings=[GRPC],
        extensions=[EXTENSION],
        streaming=StreamPolicy(idle_timeout=0.1),
    ) as client:
        stream = client.stream(ask(text, "silent_middle"))
        with pytest.raises(StreamIdleError, match=r"nothing received for 0\.1 s"):
            await collect(stream)
    assert served.probe.started(text).is_set()
    assert not served.probe.gate(text).is_set()


# ---------------------------------------------------------------------------- metadata


async def test_extensions_credentials_and_headers_travel_as_metadata(
    served: Served, version: Version
) -> None:
    """The client's extensions and a call's own are activated; BearerAuth, APIKeyAuth
    and plain headers reach the server's authenticator as metadata."""
    callers = []
    for auth, headers in (
        (BearerAuth(TOKEN), None),
        (APIKeyAuth(API_KEY), None),
        (None, {"X-API-Key": API_KEY}),
        (None, None),
    ):
        async with Client.connect(
            served.url,
            versions=[version],
            bindings=[GRPC],
            extensions=[EXTENSION],
            auth=auth,
            headers=headers,
        ) as client:
            result = await client.send(ask("who", "whoami"), extensions=[OPTIONAL_EXTENSION])
            assert isinstance(result, Message)
            callers.append(text_of(result.parts))
    activated = f"{EXTENSION},{OPTIONAL_EXTENSION}"
    assert callers == [
        f"bearer-user|{activated}",
        f"key-user|{activated}",
        f"key-user|{activated}",
        f"anonymous|{activated}",
    ]


async def test_with_credentials_connect_fetches_the_extended_card(
    served: Served, version: Version
) -> None:
    async with Client.connect(
        served.url,
        versions=[version],
        bindings=[GRPC],
        extensions=[EXTENSION],
        auth=BearerAuth(TOKEN),
    ) as client:
        assert client.card is not None
        assert client.card.name == EXTENDED_NAME


# ---------------------------------------------------------------------------- deadlines, retries


async def test_a_unary_call_has_a_deadline(
    client: Client, served: Served, gates: list[str]
) -> None:
    """The call ends at its deadline (DEADLINE_EXCEEDED), not when the agent finishes: the
    agent is still waiting for its gate."""
    text = key("deadline")
    gates.append(text)
    with pytest.raises(ClientTimeoutError, match=r"no answer within 0\.1 s"):
        await client.send(ask(text, "slow"), timeout=0.1)
    assert not served.probe.gate(text).is_set()


async def test_an_unreachable_server_fails_at_once() -> None:
    """UNAVAILABLE, not the call's deadline: the channel does not wait to be ready."""
    transport = GrpcTransport(f"127.0.0.1:{free_port()}")
    async with Client(transport, retry=RetryPolicy(attempts=1)) as client:
        with pytest.raises(ClientConnectionError, match="UNAVAILABLE"):
            await client.get_task("any", timeout=60)
        with pytest.raises(ClientConnectionError, match="UNAVAILABLE"):
            await anext(client.stream("hello"))


class FailureSignalling(GrpcTransport):
    """A gRPC transport that counts its GetTask calls and sets `failed` at the first
    connection failure."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.calls = 0
        self.failed = anyio.Event()

    async def get_task(self, request: GetTaskRequest, options: CallOptions) -> Task:
        self.calls += 1
        try:
            return await super().get_task(request, options)
        except ClientConnectionError:
            self.failed.set()
            raise


async def test_idempotent_calls_are_retried_until_the_server_is_up(served: Served) -> None:
    """GetTask retried after UNAVAILABLE (the client's policy), until the server is back:
    the server restarts once a call has failed. (The channel's own reconnection backoff
    fails the calls of its first second at once: hence the many short attempts.)"""
    policy = RetryPolicy(attempts=1000, backoff=0.01, max_backoff=0.02)
    transport = FailureSignalling(served.server.address)
    async with Client(transport, extensions=[EXTENSION], retry=policy) as client:
        task = await task_of(client, ask(key("retried"), "echo"))
        await served.server.stop(0)
        async with anyio.create_task_group() as group:

            async def restart() -> None:
                await transport.failed.wait()
                await served.server.start()

            group.start_soon(restart)
            got = await client.get_task(task.id)
    assert got.id == task.id
    assert transport.calls >= 2


# ---------------------------------------------------------------------------- addresses, TLS


def test_only_grpc_needs_the_grpc_extra() -> None:
    """Without grpcio, `parley.client` imports and its other transports work; the gRPC
    transport fails with one line naming the extra (also when a card picks it)."""
    code = """
import sys
sys.modules["grpc"] = None
import parley.client
from parley.protocol.negotiation import Version
try:
    parley.client.TRANSPORTS["GRPC"](
        "h:1", Version.V1_0, http=None, auth=None, headers=None, connect_timeout=1
    )
except ImportError as exc:
    print(exc)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "gRPC needs the grpc extra: pip install 'parley-a2a[grpc]'"


@pytest.mark.parametrize(
    ("url", "target", "tls"),
    [
        ("127.0.0.1:50051", "127.0.0.1:50051", False),
        ("[::1]:50051/", "[::1]:50051", False),
        ("grpc://agent:50051", "agent:50051", False),
        ("grpc://agent", "agent", False),
        ("GRPCS://agent:50051", "agent:50051", True),
        ("grpcs://agent", "agent", True),
        ("http://agent", "agent:80", False),
        ("http://agent:8080/", "agent:8080", False),
        ("https://agent", "agent:443", True),
    ],
)
def test_interface_urls_and_their_channels(url: str, target: str, tls: bool) -> None:
    """Cards name a bare `host:port` (older Parley servers: `grpc://host:port` for 0.3);
    `http(s)://` URLs are accepted; `grpcs://` and `https://` mean TLS (with the system's
    roots)."""
    transport = GrpcTransport(url)
    assert (transport.target, transport.credentials is not None) == (target, tls)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://agent:21",
        "http://agent:80/a2a",
        "http://agent:80?x=1",
        "http://u@agent:80",
        "grpc://",
    ],
)
def test_what_is_not_a_grpc_address(url: str) -> None:
    with pytest.raises(ValueError, match="Not a gRPC address"):
        GrpcTransport(url)


def self_signed() -> tuple[bytes, bytes]:
    """(key, certificate) in PEM for 127.0.0.1 and localhost, valid for a day."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return key_pem, certificate.public_bytes(serialization.Encoding.PEM)


async def test_tls() -> None:
    """A TLS server: reached over `grpcs://` with the credentials naming its root; with
    the system's roots (`https://`) or in plaintext the connection fails."""
    agent = build_client_agent(Probe())
    service = AgentService(agent.executor(), agent.card("http://127.0.0.1:1"))
    servicer = A2AServicer(Settings(service, AnonymousAuthenticator()), Version.V1_0)
    key_pem, cert_pem = self_signed()
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([servicer.rpc_handler()])
    port = server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials([(key_pem, cert_pem)]))
    await server.start()
    try:
        roots = grpc.ssl_channel_credentials(root_certificates=cert_pem)
        secure = GrpcTransport(f"grpcs://127.0.0.1:{port}", credentials=roots)
        async with Client(secure) as client:
            assert isinstance(await client.send(ask("over TLS", "echo")), Task)
        for url in (f"https://127.0.0.1:{port}", f"127.0.0.1:{port}"):
            async with Client(GrpcTransport(url), retry=RetryPolicy(attempts=1)) as client:
                with pytest.raises(ClientConnectionError, match="UNAVAILABLE"):
                    await client.get_task("any")
    finally:
        await server.stop(0)


# ---------------------------------------------------------------------------- every status


def rich_status(code: grpc.StatusCode, message: str, *details: Any) -> grpc.Status:
    status = status_pb2.Status(code=code.value[0], message=message)
    for detail in details:
        packed = any_pb2.Any()
        packed.Pack(detail)
        status.details.append(packed)
    result: grpc.Status = rpc_status.to_status(status)
    return result


Context = grpc.aio.ServicerContext[bytes, bytes]
Abort = Callable[[Context], Awaitable[None]]


def aborting(code: grpc.StatusCode, message: str) -> Abort:
    async def abort(context: Context) -> None:
        await context.abort(code, message)

    return abort


def with_status(status: grpc.Status) -> Abort:
    async def abort(context: Context) -> None:
        await context.abort_with_status(status)

    return abort


async def bad_trailer(context: Context) -> None:
    context.set_trailing_metadata((("grpc-status-details-bin", b"\xff\xfe"),))
    await context.abort(grpc.StatusCode.INTERNAL, "trailer")


INFO = error_details_pb2.ErrorInfo(
    reason="TASK_NOT_FOUND", domain="a2a-protocol.org", metadata={"taskId": "t1"}
)
VIOLATION = error_details_pb2.BadRequest.FieldViolation(field="id", description="unknown")
ANSWERS: dict[str, Abort] = {
    "unauthenticated": aborting(grpc.StatusCode.UNAUTHENTICATED, "who are you?"),
    "blank": aborting(grpc.StatusCode.INTERNAL, ""),
    "named": aborting(grpc.StatusCode.FAILED_PRECONDITION, "TaskNotCancelableError: not now"),
    "sdk-name": aborting(grpc.StatusCode.UNKNOWN, "AuthenticatedExtendedCardNotConfiguredError: -"),
    "other-name": aborting(grpc.StatusCode.INTERNAL, "KeyError: 'x'"),
    "cancelled": aborting(grpc.StatusCode.CANCELLED, "stopping"),
    "unavailable": aborting(grpc.StatusCode.UNAVAILABLE, "draining"),
    "deadline": aborting(grpc.StatusCode.DEADLINE_EXCEEDED, "too slow"),
    "reason": with_status(
        rich_status(
            grpc.StatusCode.NOT_FOUND,
            "gone",
            error_details_pb2.RetryInfo(),
            INFO,
            error_details_pb2.BadRequest(field_violations=[VIOLATION]),
        )
    ),
    "unknown-reason": with_status(
        rich_status(grpc.StatusCode.INTERNAL, "odd", error_details_pb2.ErrorInfo(reason="ODD"))
    ),
    "bad-trailer": bad_trailer,
}
EXPECTED: dict[str, tuple[type[Exception], str]] = {
    "unauthenticated": (ClientProtocolError, "GetTask: gRPC UNAUTHENTICATED: who are you?"),
    "blank": (ClientProtocolError, "GetTask: gRPC INTERNAL: (no details)"),
    "named": (TaskNotCancelableError, "not now"),
    "sdk-name": (ExtendedAgentCardNotConfiguredError, "-"),
    "other-name": (ClientProtocolError, "GetTask: gRPC INTERNAL: KeyError: 'x'"),
    "cancelled": (ClientConnectionError, "GetTask: gRPC CANCELLED: stopping"),
    "unavailable": (ClientConnectionError, "GetTask: gRPC UNAVAILABLE: draining"),
    "deadline": (ClientTimeoutError, "GetTask: no answer within 300.0 s"),
    "reason": (TaskNotFoundError, "gone"),
    "unknown-reason": (ClientProtocolError, "GetTask: gRPC INTERNAL: odd"),
    "bad-trailer": (ClientProtocolError, "GetTask: gRPC INTERNAL: trailer"),
}


async def get_task(data: bytes, context: Context) -> bytes:
    """GetTask answered by the task id: a status from ANSWERS, else bytes no Task has."""
    request = GRPC_CODECS[Version.V1_0].request_type(Operation.GET_TASK).FromString(data)
    answer = ANSWERS.get(request.id)
    if answer is not None:
        await answer(context)
    return b"\xff\xff\xff"


async def send_streaming_message(data: bytes, context: Context) -> AsyncIterator[bytes]:
    """Streams by the message's text: none, one unreadable message, or a named error."""
    request = GRPC_CODECS[Version.V1_0].request_type(Operation.SEND_STREAMING_MESSAGE)
    text = request.FromString(data).message.parts[0].text
    if text == "named":
        await context.abort(grpc.StatusCode.NOT_FOUND, "TaskNotFoundError: no such task")
    if text == "garbage":
        yield b"\xff\xff\xff"


@pytest.fixture
async def statuses() -> AsyncIterator[str]:
    """A gRPC server of the 1.0 service with only GetTask and SendStreamingMessage, each
    answering as the request says: its address."""
    server = grpc.aio.server()
    methods: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
        "GetTask": grpc.unary_unary_rpc_method_handler(get_task),
        "SendStreamingMessage": grpc.unary_stream_rpc_method_handler(send_streaming_message),
    }
    handler = grpc.method_handlers_generic_handler(GRPC_SERVICES[Version.V1_0], methods)
    server.add_generic_rpc_handlers([handler])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(0)


@pytest.mark.parametrize("case", list(ANSWERS))
async def test_every_status_is_translated(statuses: str, case: str) -> None:
    """The ErrorInfo reason, else a known `<ErrorClass>: ` prefix, names the server's error
    (its message without the prefix); the rest is the transport's: connection, timeout,
    or protocol errors. Nothing is retried here."""
    async with Client(GrpcTransport(statuses), retry=RetryPolicy(attempts=1)) as client:
        with pytest.raises(Exception) as raised:  # noqa: PT011 - the class is checked below
            await client.get_task(case)
    kind, message = EXPECTED[case]
    assert (type(raised.value), raised.value.args[0]) == (kind, message)
    if case == "reason":
        assert raised.value == TaskNotFoundError(
            "gone",
            metadata={"taskId": "t1"},
            field_violations=(FieldViolation(field="id", description="unknown"),),
        )


async def test_unreadable_answers_and_missing_methods(statuses: str) -> None:
    async with Client(GrpcTransport(statuses), retry=RetryPolicy(attempts=1)) as client:
        with pytest.raises(ClientProtocolError, match="Unreadable GetTask result"):
            await client.get_task("garbage")
        with pytest.raises(ClientProtocolError, match="Unreadable SendStreamingMessage event"):
            await collect(client.stream("garbage"))
        with pytest.raises(TaskNotFoundError, match=r"^no such task$"):
            await collect(client.stream("named"))
        assert await collect(client.stream("nothing")) == []
        with pytest.raises(MethodNotFoundError, match="ListTasks: Method not found!"):
            await client.list_tasks()
