"""The well-known agent card: hybrid (1.0 + 0.3 legacy members) by default, the pure card
of the version a request names, `card_mode="v1"`, caching and revalidation
(REFERENCE §5.1, §5.9; R-CARD-1, R-CARD-24, R-CARD-25, R-CARD-28)."""

from __future__ import annotations

import re

import httpx
import pytest

from parley.asgi import build_app
from parley.protocol.negotiation import Version
from parley.wire.cards import hybrid_card
from parley.wire.codec_table import JSONRPC
from tests.asgi.fakes import CARD, FakeHandler
from tests.asgi.helpers import V1

pytestmark = pytest.mark.anyio

V03 = Version.V0_3
V10 = Version.V1_0
WELL_KNOWN = "/.well-known/agent-card.json"


async def test_hybrid_card_by_default(client: httpx.AsyncClient) -> None:
    """The 1.0 card plus the 0.3 top-level members 0.3 clients read (REFERENCE §5.9)."""
    response = await client.get(WELL_KNOWN)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    card = response.json()
    pure_v1 = JSONRPC[V10].encode_card(CARD)
    legacy = JSONRPC[V03].encode_card(CARD)
    for key in ("supportedInterfaces", "capabilities", "securityRequirements", "name"):
        assert card[key] == pure_v1[key]
    for key in ("protocolVersion", "url", "preferredTransport", "additionalInterfaces"):
        assert card[key] == legacy[key]
    assert card["supportsAuthenticatedExtendedCard"] is True
    assert card["security"] == [{"bearer": []}]
    assert card["skills"][0]["security"] == [{"bearer": ["read"]}]
    assert card["skills"][0]["securityRequirements"] == pure_v1["skills"][0]["securityRequirements"]
    assert card["securitySchemes"]["bearer"] == {
        "httpAuthSecurityScheme": {"scheme": "Bearer"},
        "type": "http",
        "scheme": "Bearer",
    }


def test_hybrid_card_reads_back_in_both_versions() -> None:
    """Both generations ignore the other's members (REFERENCE §5.9, spec §5.7)."""
    card = hybrid_card(CARD)
    assert JSONRPC[V10].decode_card(card) == CARD
    legacy = JSONRPC[V03].decode_card(card)
    assert legacy.name == CARD.name
    assert legacy.supported_interfaces[0].url == "http://testserver/"


async def test_the_version_a_request_names_gets_its_pure_card(client: httpx.AsyncClient) -> None:
    one = await client.get(WELL_KNOWN, headers=V1)
    assert one.json() == JSONRPC[V10].encode_card(CARD)
    zero = await client.get(WELL_KNOWN, headers={"A2A-Version": "0.3"})
    assert zero.json() == JSONRPC[V03].encode_card(CARD)
    bad = await client.get(WELL_KNOWN, headers={"A2A-Version": "9.0"})
    assert bad.json() == hybrid_card(CARD)


async def test_v1_mode_always_serves_the_pure_card(handler: FakeHandler) -> None:
    """For validators with `additionalProperties: false` (the v1 TCK's CARD-STRUCT-001)."""
    app = build_app(handler, card_mode="v1")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        for headers in ({}, V1, {"A2A-Version": "0.3"}):
            response = await client.get(WELL_KNOWN, headers=headers)
            assert response.json() == JSONRPC[V10].encode_card(CARD)


async def test_legacy_well_known_path(client: httpx.AsyncClient) -> None:
    """Pre-0.3 clients fall back to `/.well-known/agent.json` (REFERENCE §5.1)."""
    old = await client.get("/.well-known/agent.json")
    new = await client.get(WELL_KNOWN)
    assert old.content == new.content


async def test_caching_headers_and_revalidation(client: httpx.AsyncClient) -> None:
    """`Cache-Control: max-age`, a strong ETag, and 304 on `If-None-Match` (R-CARD-24/25)."""
    response = await client.get(WELL_KNOWN)
    assert response.headers["cache-control"] == "public, max-age=300"
    etag = response.headers["etag"]
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag)
    assert response.headers["vary"] == "A2A-Version"
    for condition in (etag, f'"other", {etag}', f"W/{etag}", "*"):
        revalidated = await client.get(WELL_KNOWN, headers={"If-None-Match": condition})
        assert revalidated.status_code == 304
        assert revalidated.content == b""
        assert revalidated.headers["etag"] == etag
    stale = await client.get(WELL_KNOWN, headers={"If-None-Match": '"other"'})
    assert stale.status_code == 200


async def test_each_variant_has_its_own_etag(client: httpx.AsyncClient) -> None:
    hybrid = await client.get(WELL_KNOWN)
    pure = await client.get(WELL_KNOWN, headers=V1)
    assert hybrid.headers["etag"] != pure.headers["etag"]
    same = await client.get(WELL_KNOWN, headers={**V1, "If-None-Match": hybrid.headers["etag"]})
    assert same.status_code == 200


async def test_card_urls_answer_only_get(client: httpx.AsyncClient) -> None:
    response = await client.post(WELL_KNOWN, json={})
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"
