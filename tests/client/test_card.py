"""Card resolution and interface selection (REFERENCE §5.1, §5.3; R-BIND-6)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from parley.client import (
    Client,
    ClientConnectionError,
    ClientProtocolError,
    ClientTimeoutError,
    NoCompatibleInterfaceError,
    RestTransport,
    decode_card,
    fetch_card,
    select_interface,
)
from parley.client.card import card_urls
from parley.model import AgentCapabilities, AgentCard, AgentInterface
from parley.protocol.negotiation import Version
from parley.wire.cards import hybrid_card
from parley.wire.codec_table import JSONRPC
from parley.wire.json_bytes import dumps
from tests.client.scripted import Exchange, Handler, Request, scripted

pytestmark = pytest.mark.anyio


def interface(
    binding: str, version: str, url: str = "http://agent", tenant: str = ""
) -> AgentInterface:
    return AgentInterface(
        url=url, protocol_binding=binding, protocol_version=version, tenant=tenant
    )


def card(*interfaces: AgentInterface, extended: bool = False) -> AgentCard:
    return AgentCard(
        name="Agent",
        description="",
        version="1",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True, extended_agent_card=extended),
        default_input_modes=("text/plain",),
        default_output_modes=("text/plain",),
        skills=(),
    )


MIXED = card(
    interface("GRPC", "1.0"),
    interface("HTTP+JSON", "0.3"),
    interface("HTTP+JSON", "1.0", tenant="t"),
    interface("JSONRPC", "1.0"),
    interface("JSONRPC", "0.3"),
    interface("JSONRPC", "2.0"),
)


def test_selection_prefers_1_0_then_the_cards_order() -> None:
    chosen, version = select_interface(MIXED)
    assert (chosen.protocol_binding, version, chosen.tenant) == ("HTTP+JSON", Version.V1_0, "t")


def test_selection_as_the_caller_asks() -> None:
    chosen, version = select_interface(MIXED, versions=[Version.V0_3])
    assert (chosen.protocol_binding, version) == ("HTTP+JSON", Version.V0_3)
    chosen, version = select_interface(MIXED, bindings=["JSONRPC"])
    assert (chosen.protocol_binding, version) == ("JSONRPC", Version.V1_0)
    chosen, version = select_interface(MIXED, versions=[Version.V0_3], bindings=["JSONRPC"])
    assert (chosen.protocol_binding, version) == ("JSONRPC", Version.V0_3)


def test_patch_versions_match_and_unknown_versions_are_skipped() -> None:
    chosen, version = select_interface(
        card(interface("JSONRPC", "9.9"), interface("JSONRPC", "0.3.0"))
    )
    assert (chosen.protocol_version, version) == ("0.3.0", Version.V0_3)


def test_nothing_compatible() -> None:
    with pytest.raises(NoCompatibleInterfaceError, match=r"GRPC 1\.0"):
        select_interface(card(interface("GRPC", "1.0")))
    with pytest.raises(NoCompatibleInterfaceError, match="no interface"):
        select_interface(card())


def test_relative_interface_urls_are_resolved() -> None:
    relative = card(interface("JSONRPC", "1.0", url="/a2a"))
    chosen, _ = select_interface(relative, base_url="http://host:8000/agents/x")
    assert chosen.url == "http://host:8000/a2a"
    absolute, _ = select_interface(MIXED, base_url="http://elsewhere")
    assert absolute.url == "http://agent"


def test_cards_of_either_version_decode() -> None:
    """A 1.0 card, a 0.3 card (only `url`, `preferredTransport`…) and the hybrid card."""
    full = card(interface("JSONRPC", "1.0"), interface("HTTP+JSON", "0.3"))
    assert decode_card(JSONRPC[Version.V1_0].encode_card(full)) == full
    legacy = decode_card(JSONRPC[Version.V0_3].encode_card(full))
    assert [(i.protocol_binding, i.protocol_version) for i in legacy.supported_interfaces] == [
        ("HTTP+JSON", "0.3")
    ]
    assert decode_card(hybrid_card(full)).supported_interfaces == full.supported_interfaces
    with pytest.raises(ClientProtocolError, match="agent card"):
        decode_card({"supportedInterfaces": "nope"})


def test_card_urls() -> None:
    assert card_urls("http://h/a/") == (
        "http://h/a/.well-known/agent-card.json",
        "http://h/a/.well-known/agent.json",
    )
    assert card_urls("http://h/cards/me.json") == ("http://h/cards/me.json",)


WELL_KNOWN = ("/.well-known/agent-card.json", "/.well-known/agent.json")


def answering(answers: dict[str, tuple[int, bytes]]) -> Handler:
    """A server answering each path with (status, body), and 404 elsewhere."""

    async def handle(request: Request, exchange: Exchange) -> None:
        status, body = answers.get(request.path, (404, b'{"error": "no"}'))
        await exchange.respond(status, body)

    return handle


async def never(request: Request, exchange: Exchange) -> None:
    await asyncio.Event().wait()


async def test_fetch_falls_back_to_the_legacy_path() -> None:
    body = JSONRPC[Version.V0_3].encode_card(card(interface("JSONRPC", "0.3")))
    async with scripted(answering({"/.well-known/agent.json": (200, dumps(body))})) as server:
        found = await fetch_card(server.url)
    assert found.supported_interfaces[0].protocol_version == "0.3"
    assert [r.path for r in server.requests] == list(WELL_KNOWN)
    assert all("a2a-version" not in r.headers for r in server.requests)


@pytest.mark.parametrize(
    ("status", "body", "match"),
    [
        (404, b"<html>missing</html>", r"No A2A agent card at .*card\.json nor .*agent\.json"),
        (500, b"oops", "HTTP 500"),
        (200, b"not json", "agent card"),
        (200, b'{"name": 1}', "agent card"),
    ],
)
async def test_fetch_failures(status: int, body: bytes, match: str) -> None:
    answers = {path: (status, body) for path in WELL_KNOWN}
    async with scripted(answering(answers)) as server:
        with pytest.raises(ClientProtocolError, match=match):
            await fetch_card(server.url)


async def test_fetch_unreachable_and_slow() -> None:
    async with scripted(answering({})) as server:
        url = server.url
    with pytest.raises(ClientConnectionError):
        await fetch_card(url)

    async with scripted(never) as server:
        with pytest.raises(ClientTimeoutError):
            await fetch_card(server.url, timeout=0.2)


async def test_connect_closes_what_it_opened_when_it_fails() -> None:
    only_grpc = JSONRPC[Version.V1_0].encode_card(card(interface("GRPC", "1.0")))
    async with scripted(answering({WELL_KNOWN[0]: (200, dumps(only_grpc))})) as server:
        with pytest.raises(NoCompatibleInterfaceError):
            await Client.connect(server.url)
        async with httpx.AsyncClient() as http:
            with pytest.raises(NoCompatibleInterfaceError):
                await Client.connect(server.url, http=http)
            assert not http.is_closed  # the caller's client is left open
        with pytest.raises(NoCompatibleInterfaceError):
            await Client.connect(server.url, bindings=["GRPC"], transports={})  # none for it


async def test_connect_uses_a_shared_http_client() -> None:
    rest = JSONRPC[Version.V1_0].encode_card(card(interface("HTTP+JSON", "1.0", url="/")))
    answers = answering({WELL_KNOWN[0]: (200, dumps(rest))})
    async with scripted(answers) as server, httpx.AsyncClient() as http:
        client = await Client.connect(server.url, http=http)
        assert isinstance(client.transport, RestTransport)
        assert client.transport.url == server.url
        await client.aclose()
        assert not http.is_closed
