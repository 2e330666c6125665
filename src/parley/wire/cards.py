"""The hybrid agent card (REFERENCE §5.9): the current card plus the top-level members
older clients read, from one source of truth. Used by every binding that serves cards.
"""

from __future__ import annotations

from typing import Any

from parley.model import AgentCard
from parley.protocol.negotiation import Version
from parley.wire.codec_table import JSONRPC

PRIMARY = Version.V1_0
"""The version whose card is the body of the hybrid card."""
LEGACY = Version.V0_3
"""The version whose top-level members the hybrid card carries as well."""
GRPC_BINDING = "GRPC"
"""The `protocolBinding` (0.3: `transport`) of a gRPC interface."""
_LEGACY_MEMBERS = ("protocolVersion", "url", "preferredTransport", "additionalInterfaces")
_EXTENDED_FLAG = "supportsAuthenticatedExtendedCard"


def grpc_url(address: str, version: Version) -> str:
    """A gRPC interface's `url`: the bare `host:port` the official clients of both
    versions dial (they hand the URL to gRPC's channel as it is, and `grpc://host:port`
    does not resolve there). An address given with a scheme (`http://host:port`, which the
    0.3 TCK dials) is kept for 0.3 and stripped for 1.0."""
    _, found, rest = address.partition("://")
    return rest if found and version is not Version.V0_3 else address


def hybrid_card(card: AgentCard) -> dict[str, Any]:
    """The primary card plus the legacy card's top-level members, its skill `security`
    lists and its scheme members merged into the same `securitySchemes` entries."""
    out: dict[str, Any] = JSONRPC[PRIMARY].encode_card(card)
    legacy: dict[str, Any] = JSONRPC[LEGACY].encode_card(card)
    out.update({key: legacy[key] for key in _LEGACY_MEMBERS if key in legacy})
    if legacy.get(_EXTENDED_FLAG) is True:
        out[_EXTENDED_FLAG] = True
    if "security" in legacy:
        out["security"] = legacy["security"]
    for skill, old in zip(out.get("skills", []), legacy.get("skills", []), strict=False):
        if "security" in old:
            skill["security"] = old["security"]
    schemes: dict[str, Any] = out.get("securitySchemes", {})
    for name, scheme in legacy.get("securitySchemes", {}).items():
        schemes[name] = {**schemes.get(name, {}), **scheme}
    return out
