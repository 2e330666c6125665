"""A Client's settings applied to every call (`parley.client.session`), on a recording fake
transport: default extensions merged with a call's own (each once, the client's first),
the unary timeout (the client's unless the call says, `None` for none), the stream idle
limit, extra headers, the tenant (the interface's unless given); idempotent calls retried
after a transport failure, the others never (docs/client.md, Timeouts and retries); the
card a client made without one does not have; and closing closes what the client owns.
Credentials (`parley.client.auth`) are here too: a token asked for on every call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from parley.client import (
    APIKeyAuth,
    BaseTransport,
    BearerAuth,
    CallOptions,
    Client,
    ClientConnectionError,
    ClientError,
    RetryPolicy,
    StreamPolicy,
)
from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    CancelTaskRequest,
    GetTaskRequest,
    Model,
    Task,
    TaskState,
    TaskStatus,
)
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation

pytestmark = pytest.mark.anyio

NO_WAIT = RetryPolicy(attempts=3, backoff=0.0)


def task(state: TaskState = TaskState.COMPLETED) -> Task:
    return Task(id="t-1", context_id="c", status=TaskStatus(state=state))


@dataclass
class Recording(BaseTransport):
    """Answers every unary call with a task, after failing the first `failures` calls
    with a dropped connection; records each call and whether it was closed."""

    failures: int = 0
    calls: list[tuple[Operation, Model, CallOptions]] = field(default_factory=list)
    closed: bool = False

    @property
    def version(self) -> Version:
        return Version.V1_0

    async def unary(self, operation: Operation, request: Model, options: CallOptions) -> Any:
        self.calls.append((operation, request, options))
        if len(self.calls) <= self.failures:
            raise ClientConnectionError("connection reset")
        return task()

    async def aclose(self) -> None:
        self.closed = True


async def test_the_clients_extensions_come_first_then_the_calls_each_once() -> None:
    transport = Recording()
    async with Client(transport, extensions=["urn:a", "urn:b"]) as client:
        await client.get_task("t-1", extensions=["urn:b", "urn:c", "urn:c"])
        await client.get_task("t-1")
    first, second = (options for _, _, options in transport.calls)
    assert first.extensions == ("urn:a", "urn:b", "urn:c")
    assert second.extensions == ("urn:a", "urn:b")


@pytest.mark.parametrize(
    ("client_timeout", "call", "expected"),
    [
        (12.0, {}, 12.0),
        (12.0, {"timeout": 3.0}, 3.0),
        (12.0, {"timeout": None}, None),
        (None, {}, None),
        (None, {"timeout": 5.0}, 5.0),
    ],
)
async def test_the_unary_timeout_is_the_clients_unless_the_call_says(
    client_timeout: float | None, call: dict[str, Any], expected: float | None
) -> None:
    transport = Recording()
    async with Client(transport, timeout=client_timeout) as client:
        await client.get_task("t-1", **call)
    assert transport.calls[0][2].timeout == expected


async def test_headers_and_the_stream_idle_limit_go_with_every_call() -> None:
    transport = Recording()
    policy = StreamPolicy(idle_timeout=42.0)
    async with Client(transport, headers={"X-Trace": "1"}, streaming=policy) as client:
        await client.cancel_task("t-1")
    options = transport.calls[0][2]
    assert dict(options.headers) == {"X-Trace": "1"}
    assert options.idle_timeout == 42.0


@pytest.mark.parametrize(
    ("interface_tenant", "given", "expected"),
    [("acme", None, "acme"), ("acme", "other", "other"), ("acme", "", ""), ("", None, "")],
)
async def test_the_tenant_is_the_interfaces_unless_given(
    interface_tenant: str, given: str | None, expected: str
) -> None:
    interface = AgentInterface(
        url="http://a", protocol_binding="JSONRPC", protocol_version="1.0", tenant=interface_tenant
    )
    transport = Recording()
    async with Client(transport, interface=interface, tenant=given) as client:
        assert client.tenant == expected
        await client.get_task("t-1")
        await client.cancel_task("t-1")
    tenants = [
        r.tenant for _, r, _ in transport.calls if isinstance(r, GetTaskRequest | CancelTaskRequest)
    ]
    assert tenants == [expected] * 2


async def test_a_client_without_a_card_says_so() -> None:
    async with Client(Recording()) as client:
        with pytest.raises(ClientError, match=r"no agent card: Client\.connect\(url\) fetches it"):
            _ = client.card
        card = AgentCard(
            name="Given",
            description="",
            version="1",
            supported_interfaces=(),
            capabilities=AgentCapabilities(),
            default_input_modes=(),
            default_output_modes=(),
            skills=(),
        )
        client.card = card
        assert client.card is card


@pytest.mark.parametrize(
    ("call", "idempotent"),
    [
        (lambda client: client.get_task("t-1"), True),
        (lambda client: client.list_tasks(), True),
        (lambda client: client.cancel_task("t-1"), False),
        (lambda client: client.send("hi"), False),
    ],
    ids=["GetTask", "ListTasks", "CancelTask", "SendMessage"],
)
async def test_only_idempotent_calls_are_retried_after_a_dropped_connection(
    call: Callable[[Client], Awaitable[object]], idempotent: bool
) -> None:
    transport = Recording(failures=2)
    async with Client(transport, retry=NO_WAIT) as client:
        if idempotent:
            await call(client)
        else:
            with pytest.raises(ClientConnectionError):
                await call(client)
    assert len(transport.calls) == (3 if idempotent else 1)
    assert len({id(request) for _, request, _ in transport.calls}) == 1  # the same request


async def test_retries_stop_after_the_policys_attempts() -> None:
    transport = Recording(failures=10)
    async with Client(transport, retry=RetryPolicy(attempts=4, backoff=0.0)) as client:
        with pytest.raises(ClientConnectionError, match="connection reset"):
            await client.get_task("t-1")
    assert len(transport.calls) == 4


async def test_closing_closes_the_transport_and_the_http_client_it_owns() -> None:
    transport = Recording()
    http = httpx.AsyncClient()
    client = Client(transport, http=http)
    await client.aclose()
    assert transport.closed
    assert http.is_closed


async def test_the_http_client_is_closed_even_when_the_transport_fails_to_close() -> None:
    class Failing(Recording):
        async def aclose(self) -> None:
            raise ClientConnectionError("already gone")

    http = httpx.AsyncClient()
    with pytest.raises(ClientConnectionError):
        async with Client(Failing(), http=http):
            pass
    assert http.is_closed


async def test_a_callers_http_client_is_left_open() -> None:
    async with httpx.AsyncClient() as http:
        async with Client(Recording()):
            pass
        assert not http.is_closed


# ---------------------------------------------------------------------- credentials


async def test_a_bearer_token_is_asked_for_on_every_call() -> None:
    issued = iter(["t1", "t2"])
    sync = BearerAuth(lambda: next(issued))
    assert [await sync.headers(), await sync.headers()] == [
        {"Authorization": "Bearer t1"},
        {"Authorization": "Bearer t2"},
    ]

    async def refreshed() -> str:
        return "fresh"

    assert await BearerAuth(refreshed).token() == "fresh"
    assert await BearerAuth("fixed").headers() == {"Authorization": "Bearer fixed"}


async def test_an_api_key_in_a_header_or_a_cookie() -> None:
    assert await APIKeyAuth("k").headers() == {"X-API-Key": "k"}
    assert await APIKeyAuth("k", name="X-Key").headers() == {"X-Key": "k"}
    assert await APIKeyAuth("k", name="sid", location="cookie").headers() == {"Cookie": "sid=k"}
    cookie = APIKeyAuth("s3cret-key", name="sid", location="cookie")
    assert repr(cookie) == "APIKeyAuth(name='sid', location='cookie')"
