"""Rate limits hold on every binding and in both versions (R-OPS-14, R-OPS-15; issue:
deployable security II): a caller's requests carry `X-RateLimit-Limit/Remaining/Reset`
(gRPC: the same keys as initial metadata); over the limit the answer is HTTP 429 with
`Retry-After` (JSON-RPC too: the call was refused before it became one) or gRPC
RESOURCE_EXHAUSTED with `retry-after` in the trailers, and the Parley client raises
RateLimitedError. Each caller (an API key's principal) has its own count; an operation
class's own rate is counted besides; refused credentials count against their address."""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest

from parley.client import Client, user_message
from parley.model import Message, Task
from parley.protocol.errors import RateLimitedError, TaskNotFoundError
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.server.auth import ApiKeys, Security
from parley.server.quotas import Quotas
from tests.client.agents import EXTENSION
from tests.equivalence.conftest import all_bindings
from tests.equivalence.test_bindings import BINDINGS
from tests.interop.agent import Probe

pytestmark = pytest.mark.anyio

CASES = [(version, binding) for version in RELEASED_VERSIONS for binding in BINDINGS]
KEYS = {f"key-{n}": f"caller-{n}" for n in range(32)}
QUOTAS = Quotas(rate="3/minute", operations={"cancel": "1/minute"}, anonymous_rate="2/minute")
_fresh = itertools.count()


@pytest.fixture(scope="module")
async def served() -> AsyncIterator[tuple[str, str]]:
    """The server's URL and its gRPC address."""
    security = Security(ApiKeys(KEYS))
    async with all_bindings(Probe(), security=security, quotas=QUOTAS) as (url, service):
        grpc_interface = next(
            i for i in service.card.supported_interfaces if i.protocol_binding == "GRPC"
        )
        yield url, grpc_interface.url


def caller_key() -> str:
    """A key no other test has used: a caller with its whole allowance."""
    return f"key-{next(_fresh)}"


def echo(text: str) -> Message:
    return user_message(text, metadata={"skill": "echo"})


class Heard:
    """The HTTP responses a client received."""

    def __init__(self) -> None:
        self.responses: list[httpx.Response] = []

    async def __call__(self, response: httpx.Response) -> None:
        if response.request.method == "POST" or "/tasks" in response.request.url.path:
            self.responses.append(response)

    @property
    def last(self) -> httpx.Response:
        return self.responses[-1]


def _connect(url: str, version: Version, binding: str, key: str, http: Any) -> Any:
    return Client.connect(
        url,
        versions=[version],
        bindings=[binding],
        extensions=[EXTENSION],
        headers={"X-API-Key": key},
        extended_card=False,
        http=http,
    )


@pytest.mark.parametrize(("version", "binding"), CASES, ids=[f"{v.value}-{b}" for v, b in CASES])
async def test_the_rate_limit_holds(
    served: tuple[str, str], version: Version, binding: str
) -> None:
    heard = Heard()
    key = caller_key()
    async with (
        httpx.AsyncClient(event_hooks={"response": [heard]}) as http,
        _connect(served[0], version, binding, key, http) as client,
    ):
        for left in (2, 1, 0):
            assert isinstance(await client.send(echo(f"within {left}")), Task)
            if binding != "GRPC":
                headers = heard.last.headers
                assert headers["X-RateLimit-Limit"] == "3"
                assert headers["X-RateLimit-Remaining"] == str(left)
                assert 0 < int(headers["X-RateLimit-Reset"]) - time.time() <= 61
        with pytest.raises(RateLimitedError) as refused:
            await client.send(echo("over"))
        if binding != "GRPC":
            response = heard.last
            assert response.status_code == 429
            wait = int(response.headers["Retry-After"])
            assert 1 <= wait <= 60  # whole seconds, rounded up
            assert response.headers["X-RateLimit-Remaining"] == "0"
            assert response.headers["X-RateLimit-Limit"] == "3"
        if version is Version.V1_0 or binding == "GRPC":  # typed details carry the wait
            assert refused.value.retry_after is not None
            assert 1 <= refused.value.retry_after <= 60
    async with _connect(served[0], version, binding, caller_key(), None) as other:
        assert isinstance(await other.send(echo("another caller")), Task)


async def test_an_operation_class_has_its_own_rate(served: tuple[str, str]) -> None:
    async with _connect(served[0], Version.V1_0, "JSONRPC", caller_key(), None) as client:
        with pytest.raises(TaskNotFoundError):
            await client.cancel_task("unknown")
        with pytest.raises(RateLimitedError):
            await client.cancel_task("unknown")  # cancel: 1 a minute
        with pytest.raises(TaskNotFoundError):
            await client.get_task("unknown")  # every operation: 3 a minute


async def test_refused_credentials_count_against_their_address(served: tuple[str, str]) -> None:
    """Guessing keys is rate-limited (R-OPS-9): the anonymous rate of the address (2 a
    minute here) counts refused credentials on every binding, then answers 429."""
    url = served[0]
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
    wrong = {"X-API-Key": "guess", "A2A-Version": "1.0", "A2A-Extensions": EXTENSION}
    async with httpx.AsyncClient() as http:
        for _ in range(2):
            answer = await http.post(url, json=body, headers=wrong)
            assert answer.status_code == 401
        answer = await http.get(f"{url}/tasks/t", headers=wrong)
        assert answer.status_code == 429
        assert answer.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
        assert int(answer.headers["Retry-After"]) >= 1
    async with _connect(url, Version.V1_0, "GRPC", "guess", None) as client:
        with pytest.raises(RateLimitedError):
            await client.get_task("t")
    async with _connect(url, Version.V1_0, "GRPC", caller_key(), None) as client:
        with pytest.raises(TaskNotFoundError):  # a known caller is served
            await client.get_task("t")


async def test_grpc_metadata_tells_the_limit(served: tuple[str, str]) -> None:
    """gRPC: the allowance as initial metadata; the refusal's wait and limit as trailers."""
    address = served[1].removeprefix("grpc://").removeprefix("http://")
    method = "/lf.a2a.v1.A2AService/GetExtendedAgentCard"
    metadata = (("x-api-key", caller_key()), ("a2a-version", "1.0"), ("a2a-extensions", EXTENSION))
    async with grpc.aio.insecure_channel(address) as channel:
        call_card: Any = channel.unary_unary(method)
        for left in (2, 1, 0):
            call = call_card(b"", metadata=metadata)
            await call
            sent = dict(await call.initial_metadata())
            assert sent["x-ratelimit-limit"] == "3"
            assert sent["x-ratelimit-remaining"] == str(left)
        call = call_card(b"", metadata=metadata)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        trailers = dict(refused.value.trailing_metadata() or ())
        assert 1 <= int(trailers["retry-after"]) <= 60
        assert trailers["x-ratelimit-remaining"] == "0"
