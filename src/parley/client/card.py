"""Finding an agent: its card from a base URL (the well-known path, RFC 8615), and the
interface to talk to from the card's list — protocol version first (1.0, then 0.3, or as
the caller asks), then the card's own order among the bindings the caller allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urljoin, urlsplit

import httpx
from msgspec.structs import replace

from parley.client.errors import ClientProtocolError, NoCompatibleInterfaceError
from parley.client.http import (
    DEFAULT_CONNECT_TIMEOUT,
    HttpChannel,
    decoding,
    parse_json,
    unexpected,
)
from parley.model import AgentCard, AgentInterface
from parley.protocol.errors import VersionNotSupportedError
from parley.protocol.negotiation import DRAFT_VERSIONS, Version, parse_version
from parley.wire.cards import LEGACY, PRIMARY
from parley.wire.codec_table import JSONRPC
from parley.wire.json_bytes import JSON

JSONRPC_BINDING = "JSONRPC"
HTTP_JSON_BINDING = "HTTP+JSON"
GRPC_BINDING = "GRPC"

WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
"""The card's path, then the pre-0.3 one a client may fall back to (REFERENCE §5.1)."""

PREFERRED_VERSIONS = (*DRAFT_VERSIONS, PRIMARY, LEGACY)
"""Newest first: 0.3 cannot express ListTasks, tenants or paging (docs/decisions.md); the
1.1 draft when a card offers it (a server lists it only when it serves it), for its task
generations (long-polls, missed events detected)."""


def decode_card(document: JSON) -> AgentCard:
    """A card in either version's form: 1.0 (and hybrid) cards list `supportedInterfaces`,
    0.3 cards name a `url`."""
    primary = isinstance(document, dict) and "supportedInterfaces" in document
    with decoding("agent card"):
        return JSONRPC[PRIMARY if primary else LEGACY].decode_card(document)


def card_urls(url: str) -> tuple[str, ...]:
    """Where the card may be: `url` itself when it names a `.json` document, else the
    well-known paths under it (joined to its path, as the official SDKs do)."""
    if urlsplit(url).path.endswith(".json"):
        return (url,)
    base = url.rstrip("/")
    return tuple(base + path for path in WELL_KNOWN_PATHS)


async def fetch_card(
    url: str,
    *,
    http: httpx.AsyncClient | None = None,
    timeout: float | None = DEFAULT_CONNECT_TIMEOUT,
) -> AgentCard:
    """GET the public card: the well-known path, then the legacy one if that is a 404.

    No `A2A-Version` is sent, so a server answering both versions sends its hybrid card
    listing every interface.
    """
    channel = HttpChannel(PRIMARY, http=http)
    try:
        candidates = card_urls(url)
        for candidate in candidates:
            reply = await channel.get(candidate, timeout)
            if reply.status != 404:
                break
        if reply.status == 404:  # no card at any candidate: most likely a wrong URL
            tried = " nor ".join(candidates)
            hint = "" if len(candidates) == 1 else f": is {url} the agent's base URL?"
            raise ClientProtocolError(f"No A2A agent card at {tried}{hint}", status_code=404)
        if reply.status != 200:
            raise unexpected(reply, "agent card answer")
        return decode_card(parse_json(reply.body, channel.limits, "agent card", 200))
    finally:
        await channel.aclose()


def interface_version(interface: AgentInterface) -> Version | None:
    """The interface's protocol version if Parley speaks it (patch ignored), else None."""
    try:
        return parse_version(interface.protocol_version)
    except VersionNotSupportedError:
        return None


def select_interface(
    card: AgentCard,
    *,
    versions: Sequence[Version] = PREFERRED_VERSIONS,
    bindings: Sequence[str] = (JSONRPC_BINDING, HTTP_JSON_BINDING),
    base_url: str = "",
) -> tuple[AgentInterface, Version]:
    """The interface to use and its version: the first of `versions` the card offers on
    an allowed binding, the card's first such interface (R-BIND, REFERENCE §5.3). A
    relative interface URL is resolved against `base_url`."""
    for version in versions:
        for interface in card.supported_interfaces:
            if interface.protocol_binding in bindings and interface_version(interface) is version:
                return _absolute(interface, base_url), version
    offered = ", ".join(
        f"{i.protocol_binding} {i.protocol_version}" for i in card.supported_interfaces
    )
    wanted = ", ".join(v.value for v in versions)
    raise NoCompatibleInterfaceError(
        f"The card of {card.name!r} offers {offered or 'no interface'}; this client "
        f"speaks {', '.join(bindings)} in A2A {wanted}"
    )


def _absolute(interface: AgentInterface, base_url: str) -> AgentInterface:
    """A relative URL joined to `base_url`; a gRPC address (`host:port`) is never relative."""
    if not base_url or interface.protocol_binding == GRPC_BINDING or urlsplit(interface.url).scheme:
        return interface
    return replace(interface, url=urljoin(base_url, interface.url))
