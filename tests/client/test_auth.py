"""Credentials: an API key (header or cookie) and a bearer token (fixed, or from a sync or
async function) reach a live Parley server's authenticator on every binding, and the
extended card is fetched at connect when credentials are given (R-XCARD-1/2)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from msgspec.structs import replace

from parley.asgi import A2AApp, build_app
from parley.client import APIKeyAuth, Auth, BearerAuth, Client, user_message
from parley.model import APIKeySecurityScheme, Message, TextPart
from parley.protocol.errors import ExtendedAgentCardNotConfiguredError
from parley.server.service import AgentService
from tests.client.agents import API_KEY, TOKEN, TokenAuthenticator, build_client_agent, client_card
from tests.client.conftest import Mode
from tests.interop.agent import Probe
from tests.interop.live import serving

pytestmark = pytest.mark.anyio

EXTENDED = "Extended for members"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    agent = build_client_agent(Probe())

    def make_app(url: str) -> A2AApp:
        card = client_card(agent, url, required_extension=False)
        service = AgentService(agent.executor(), card, extended_card=replace(card, name=EXTENDED))
        return build_app(service, authenticator=TokenAuthenticator())

    with serving(make_app) as served:
        yield served


async def token_function() -> str:
    return TOKEN


CREDENTIALS: dict[str, tuple[Auth | None, str]] = {
    "none": (None, "anonymous"),
    "bearer": (BearerAuth(TOKEN), "bearer-user"),
    "bearer-sync-function": (BearerAuth(lambda: TOKEN), "bearer-user"),
    "bearer-async-function": (BearerAuth(token_function), "bearer-user"),
    "wrong-bearer": (BearerAuth("nope"), "anonymous"),
    "api-key": (APIKeyAuth(API_KEY), "key-user"),
    "api-key-cookie": (APIKeyAuth(API_KEY, name="api_key", location="cookie"), "key-user"),
}


@pytest.mark.parametrize("name", list(CREDENTIALS))
async def test_credentials_reach_the_server(url: str, mode: Mode, name: str) -> None:
    auth, caller = CREDENTIALS[name]
    async with Client.connect(
        url, versions=[mode.version], bindings=[mode.binding], auth=auth
    ) as client:
        result = await client.send(user_message("who", metadata={"skill": "whoami"}))
        assert client.card is not None
        assert client.card.name == (EXTENDED if auth is not None else "Interop")
    assert isinstance(result, Message)
    part = result.parts[0]
    assert isinstance(part, TextPart)
    assert part.text.split("|")[0] == caller


async def test_the_extended_card_can_be_forced_or_skipped(url: str) -> None:
    async with Client.connect(url, extended_card=True) as client:
        assert client.card is not None
        assert client.card.name == EXTENDED
    async with Client.connect(url, auth=BearerAuth(TOKEN), extended_card=False) as client:
        assert client.card is not None
        assert client.card.name == "Interop"


def test_an_api_key_placed_as_the_card_says() -> None:
    header = APIKeyAuth.for_scheme(APIKeySecurityScheme(name="X-Key", location="header"), "k")
    cookie = APIKeyAuth.for_scheme(APIKeySecurityScheme(name="sid", location="cookie"), "k")
    assert (header.name, header.location) == ("X-Key", "header")
    assert (cookie.name, cookie.location) == ("sid", "cookie")
    with pytest.raises(ValueError, match="query"):
        APIKeyAuth.for_scheme(APIKeySecurityScheme(name="k", location="query"), "k")
    with pytest.raises(ValueError, match="header"):
        APIKeyAuth("k", location="query")  # type: ignore[arg-type]


def test_secrets_stay_out_of_reprs() -> None:
    assert "s3cret" not in repr(BearerAuth("s3cret"))
    assert "s3cret" not in repr(APIKeyAuth("s3cret"))


async def test_a_failing_extended_card_fails_the_connect() -> None:
    """The card offers an extended card the server has not configured: connect raises
    the server's error (and leaves nothing open)."""
    agent = build_client_agent(Probe())

    def make_app(url: str) -> A2AApp:
        card = client_card(agent, url, required_extension=False)
        return build_app(AgentService(agent.executor(), card))

    with serving(make_app) as served, pytest.raises(ExtendedAgentCardNotConfiguredError):
        await Client.connect(served, auth=BearerAuth(TOKEN))
