"""`Client.connect` (`parley.client.connect`) onto a real Parley app through httpx's
ASGITransport: the card resolved from the base URL or a `.json` card URL, the interface
chosen among the bindings that have a transport (`transports=`), the transport built with
the chosen URL, version, credentials, headers and the one shared httpx client, and the
client closed by the context manager (docs/client.md, Connect and Transports)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx
import pytest

from parley.asgi import build_app
from parley.client import (
    HTTP_JSON_BINDING,
    JSONRPC_BINDING,
    TRANSPORTS,
    BearerAuth,
    Client,
    ClientProtocolError,
    JsonRpcTransport,
    NoCompatibleInterfaceError,
    RestTransport,
    Transport,
)
from parley.client.auth import Auth
from parley.model import Task, TaskState
from parley.protocol.errors import MethodNotFoundError
from parley.protocol.negotiation import Version
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext

pytestmark = pytest.mark.anyio

URL = "http://agent.test"


def echo_agent() -> Agent:
    agent = Agent("Echo", description="Says it back.")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        """Say the message back."""
        return f"{task.text}!"

    return agent


@asynccontextmanager
async def served(
    bindings: tuple[str, ...] = (JSONRPC_BINDING, HTTP_JSON_BINDING),
) -> AsyncIterator[httpx.AsyncClient]:
    agent = echo_agent()
    service = AgentService(agent.executor(), agent.card(URL, bindings=bindings))
    await service.startup()
    try:
        transport = httpx.ASGITransport(app=build_app(service))
        async with httpx.AsyncClient(transport=transport, base_url=URL) as http:
            yield http
    finally:
        await service.shutdown()


@dataclass
class Built:
    url: str
    version: Version
    http: httpx.AsyncClient
    auth: Auth | None
    headers: Mapping[str, str] | None
    connect_timeout: float


@dataclass
class Recording:
    """Transport factories that record what they were built with."""

    built: list[tuple[str, Built]] = field(default_factory=list)

    def factories(self, *bindings: str) -> dict[str, object]:
        return {binding: self._factory(binding) for binding in bindings}

    def _factory(self, binding: str) -> object:
        def build(
            url: str,
            version: Version,
            *,
            http: httpx.AsyncClient,
            auth: Auth | None,
            headers: Mapping[str, str] | None,
            connect_timeout: float,
        ) -> Transport:
            self.built.append((binding, Built(url, version, http, auth, headers, connect_timeout)))
            make = TRANSPORTS[binding]
            return make(
                url,
                version,
                http=http,
                auth=auth,
                headers=headers,
                connect_timeout=connect_timeout,
            )

        return build


async def test_the_card_comes_from_the_base_url_and_1_0_json_rpc_is_chosen() -> None:
    async with served() as http, Client.connect(URL, http=http) as client:
        assert client.card.name == "Echo"
        assert isinstance(client.transport, JsonRpcTransport)
        assert client.transport.version is Version.V1_0
        answer = await client.send("hi")
        assert isinstance(answer, Task)
        assert answer.status.state is TaskState.COMPLETED
        assert answer.text == "hi!"


@pytest.mark.parametrize(
    "url", [f"{URL}/.well-known/agent-card.json", f"{URL}/", f"{URL}/.well-known/agent.json"]
)
async def test_a_card_url_or_a_trailing_slash_finds_the_same_card(url: str) -> None:
    async with served() as http, Client.connect(url, http=http) as client:
        assert client.card.name == "Echo"


@pytest.mark.parametrize(
    ("versions", "bindings", "kind", "version"),
    [
        ([Version.V0_3], None, JsonRpcTransport, Version.V0_3),
        (None, [HTTP_JSON_BINDING], RestTransport, Version.V1_0),
        ([Version.V0_3], [HTTP_JSON_BINDING], RestTransport, Version.V0_3),
        ([Version.V0_3, Version.V1_0], None, JsonRpcTransport, Version.V0_3),
    ],
)
async def test_versions_and_bindings_pin_the_interface(
    versions: list[Version] | None,
    bindings: list[str] | None,
    kind: type[Transport],
    version: Version,
) -> None:
    options: dict[str, object] = {}
    if versions is not None:
        options["versions"] = versions
    if bindings is not None:
        options["bindings"] = bindings
    async with served() as http, Client.connect(URL, http=http, **options) as client:  # type: ignore[arg-type]
        assert isinstance(client.transport, kind)
        assert client.transport.version is version
        answer = await client.send("hi")
        assert answer.text == "hi!"


async def test_a_binding_without_a_transport_is_not_chosen() -> None:
    recording = Recording()
    transports = recording.factories(HTTP_JSON_BINDING)
    async with (
        served() as http,
        Client.connect(URL, http=http, transports=transports) as client,  # type: ignore[arg-type]
    ):
        assert isinstance(client.transport, RestTransport)
    assert [binding for binding, _ in recording.built] == [HTTP_JSON_BINDING]


async def test_the_transport_is_built_with_the_interface_and_the_callers_options() -> None:
    recording = Recording()
    auth = BearerAuth("token")
    transports = recording.factories(JSONRPC_BINDING, HTTP_JSON_BINDING)
    async with (
        served() as http,
        Client.connect(
            URL,
            http=http,
            auth=auth,
            headers={"X-Trace": "1"},
            connect_timeout=4.0,
            versions=[Version.V0_3],
            transports=transports,  # type: ignore[arg-type]
            extended_card=False,
        ),
    ):
        pass
    [(binding, built)] = recording.built
    assert binding == JSONRPC_BINDING
    assert built.url.startswith(URL)
    assert built.version is Version.V0_3
    assert built.http is http
    assert built.auth is auth
    assert built.headers == {"X-Trace": "1"}
    assert built.connect_timeout == 4.0


async def test_no_transport_for_any_offered_binding_is_no_compatible_interface() -> None:
    async with served(bindings=(HTTP_JSON_BINDING,)) as http:
        transports = Recording().factories(JSONRPC_BINDING)
        with pytest.raises(NoCompatibleInterfaceError, match=r"HTTP\+JSON 1\.0"):
            await Client.connect(URL, http=http, transports=transports)  # type: ignore[arg-type]
        assert not http.is_closed  # the caller's client is the caller's to close


async def test_a_wrong_url_says_so() -> None:
    async with served() as http:
        with pytest.raises(
            ClientProtocolError, match=re.escape("is http://agent.test/nowhere the agent's")
        ):
            await Client.connect(f"{URL}/nowhere", http=http)


async def test_awaiting_connect_gives_a_client_to_close() -> None:
    async with served() as http:
        client = await Client.connect(URL, http=http)
        try:
            assert (await client.send("x")).text == "x!"
        finally:
            await client.aclose()


async def test_a_0_3_client_has_no_list_tasks() -> None:
    """ListTasks does not exist in 0.3 (docs/decisions.md): MethodNotFoundError, as the
    server would answer."""
    async with served() as http, Client.connect(URL, http=http, versions=[Version.V0_3]) as client:
        with pytest.raises(MethodNotFoundError):
            await client.list_tasks()


async def test_the_built_in_transports_are_the_three_bindings() -> None:
    assert set(TRANSPORTS) == {JSONRPC_BINDING, HTTP_JSON_BINDING, "GRPC"}
    assert TRANSPORTS[JSONRPC_BINDING] is JsonRpcTransport
    assert TRANSPORTS[HTTP_JSON_BINDING] is RestTransport
