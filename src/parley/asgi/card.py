"""The public agent card at the well-known URLs: a hybrid card for both generations of
clients by default (REFERENCE §5.9), or a pure card; cached, with ETag revalidation and
a `Last-Modified` date (R-CARD-24/25; §8.6 MAY). An app that is not told its public URL
serves cards naming the URL each request reached it at (`RequestCards`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from email.utils import formatdate
from typing import Any, Literal, Protocol

import msgspec
from msgspec.structs import replace

from parley.asgi.http import Exchange, Request, Scope
from parley.model import AgentCard
from parley.protocol.errors import VersionNotSupportedError
from parley.protocol.negotiation import VERSION_HEADER, Version, parse_version
from parley.wire.cards import PRIMARY, hybrid_card
from parley.wire.codec_table import JSONRPC
from parley.wire.json_bytes import dumps

CardMode = Literal["hybrid", "v1"]

WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
"""The card's URI (RFC 8615) and the pre-0.3 one clients may fall back to."""

CACHE_CONTROL = "public, max-age=300"


class CardBody(msgspec.Struct, frozen=True):
    """One precomputed card response body and its strong ETag."""

    body: bytes
    etag: str

    @classmethod
    def of(cls, value: Any) -> CardBody:
        body = dumps(value)
        return cls(body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')


class Cards:
    """Every card body this app can serve, computed once."""

    def __init__(self, card: AgentCard, mode: CardMode) -> None:
        self.mode = mode
        self.pure: Mapping[Version, CardBody] = {
            version: CardBody.of(codec.encode_card(card)) for version, codec in JSONRPC.items()
        }
        self.default = CardBody.of(hybrid_card(card)) if mode == "hybrid" else self.pure[PRIMARY]
        self.last_modified = formatdate(usegmt=True)
        """When these bodies were built (RFC 9110 HTTP-date): the card is fixed from then."""

    def select(self, version_header: str | None) -> CardBody:
        """`v1` mode: always the pure primary card. Hybrid: a request naming a version
        (`A2A-Version`) gets that version's pure card, any other the hybrid one."""
        if self.mode != "hybrid" or not (version_header or "").strip():
            return self.default
        try:
            return self.pure[parse_version(version_header)]
        except VersionNotSupportedError:
            return self.default

    def at(self, scope: Scope) -> Cards:
        """The cards for a request: these, whatever the request (`CardSource`)."""
        return self


class CardSource(Protocol):
    """What an app serves its cards from: the cards for a request."""

    def at(self, scope: Scope) -> Cards: ...


HOST = re.compile(r"[A-Za-z0-9.-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")
"""A Host header fit to name in a card: a name or an IP address, and a port."""


def request_base(scope: Scope) -> str:
    """The URL a request reached the app at, up to its mount point, with a final `/`:
    the scheme the server reports (behind a proxy: what uvicorn's `--proxy-headers` make
    of `X-Forwarded-Proto`), the Host header (else the server's address), `root_path`."""
    host = Request.from_scope(scope).headers.get("host", "")
    if not HOST.fullmatch(host):
        server = scope.get("server") or ("localhost", None)
        host = server[0] if server[1] is None else f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}/"


class RequestCards:
    """Cards naming the URL each request reached the app at (`request_base`) wherever
    `card` names `placeholder`; the last `keep` bases' cards are kept."""

    def __init__(self, card: AgentCard, placeholder: str, mode: CardMode, keep: int = 16) -> None:
        self.card = card
        self.placeholder = placeholder
        self.mode = mode
        self.keep = keep
        self._cards: dict[str, Cards] = {}

    def at(self, scope: Scope) -> Cards:
        base = request_base(scope)
        cards = self._cards.get(base)
        if cards is None:
            if len(self._cards) >= self.keep:
                del self._cards[next(iter(self._cards))]
            cards = self._cards[base] = Cards(self._for(base), self.mode)
        return cards

    def _for(self, base: str) -> AgentCard:
        interfaces = tuple(
            replace(interface, url=base) if interface.url == self.placeholder else interface
            for interface in self.card.supported_interfaces
        )
        return replace(self.card, supported_interfaces=interfaces)


def _matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110 §13.1.2: weak comparison, `*` matches any current representation."""
    tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in tags or etag in tags


async def serve_card(source: CardSource, exchange: Exchange) -> None:
    """GET: 200 with the card, or 304 when `If-None-Match` names its ETag."""
    cards = source.at(exchange.scope)
    chosen = cards.select(exchange.request.version_header)
    headers = [
        ("Cache-Control", CACHE_CONTROL),
        ("ETag", chosen.etag),
        ("Last-Modified", cards.last_modified),
        ("Vary", VERSION_HEADER),
    ]
    if _matches(exchange.request.headers.get("if-none-match", ""), chosen.etag):
        await exchange.respond(304, headers=headers, content_type=None)
        return
    await exchange.respond(200, chosen.body, headers)
