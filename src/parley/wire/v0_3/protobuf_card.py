"""The 0.3 agent card in the 0.3 proto's form (`a2a.v1.AgentCard`), as ProtoJSON: the
JSON-RPC card with its security schemes as the proto's oneof members and its requirements
as `{schemes: {name: {list}}}`. `iconUrl` and `stateTransitionHistory` have no place in
the proto, its OAuthFlows hold one flow, and ProtoJSON drops empty values, which the
JSON-RPC card's decoder requires: they get their defaults back.
"""

from __future__ import annotations

from typing import Any

from parley import model as m
from parley.wire.reader import Obj
from parley.wire.v0_3 import card as jsonrpc_card

_SCHEME_MEMBERS = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}
_SCHEME_TYPES = {member: kind for kind, member in _SCHEME_MEMBERS.items()}
_FLOW_URLS = {
    "authorizationCode": ("authorizationUrl", "tokenUrl"),
    "clientCredentials": ("tokenUrl",),
    "implicit": ("authorizationUrl",),
    "password": ("tokenUrl",),
}
"""The URLs each flow's JSON-RPC form requires (ProtoJSON drops them when empty)."""


def _proto_scheme(scheme: Obj) -> Obj:
    """The proto's OAuthFlows is a oneof: of several flows, the first (in the proto's
    order) is kept."""
    inner = {key: value for key, value in scheme.items() if key not in ("type", "in")}
    if "in" in scheme:
        inner["location"] = scheme["in"]
    flows = inner.get("flows")
    if flows:
        first = next(name for name in _FLOW_URLS if name in flows)
        inner["flows"] = {first: flows[first]}
    return {_SCHEME_MEMBERS[scheme["type"]]: inner}


def _jsonrpc_scheme(value: Any) -> Any:
    """A proto scheme as the JSON-RPC decoder reads it (anything odd: as is, for its error)."""
    if type(value) is not dict or len(value) != 1:
        return value
    ((member, inner),) = value.items()
    kind = _SCHEME_TYPES.get(member)
    if kind is None or type(inner) is not dict:
        return value
    out = {"type": kind, **{key: item for key, item in inner.items() if key != "location"}}
    if "location" in inner:
        out["in"] = inner["location"]
    if kind == "openIdConnect":
        out.setdefault("openIdConnectUrl", "")
    flows = out.setdefault("flows", {}) if kind == "oauth2" else None
    for name, flow in flows.items() if type(flows) is dict else ():
        if type(flow) is dict:
            out["flows"][name] = {**dict.fromkeys(_FLOW_URLS.get(name, ()), ""), **flow}
            out["flows"][name].setdefault("scopes", {})
    return out


def _proto_requirement(requirement: Obj) -> Obj:
    return {"schemes": {name: {"list": scopes} for name, scopes in requirement.items()}}


def _jsonrpc_requirement(value: Any) -> Any:
    schemes = value.get("schemes", {}) if type(value) is dict else None
    if type(schemes) is not dict:
        return value
    return {name: s.get("list", []) if type(s) is dict else s for name, s in schemes.items()}


def _map_security(card: Obj, scheme: Any, requirement: Any) -> Obj:
    """The card with its schemes and requirements (the skills' too) converted."""
    schemes = card.get("securitySchemes")
    if type(schemes) is dict:
        card["securitySchemes"] = {name: scheme(s) for name, s in schemes.items()}
    skills = card.get("skills")
    for holder in (
        [card, *(s for s in skills if type(s) is dict)] if type(skills) is list else [card]
    ):
        security = holder.get("security")
        if type(security) is list:
            holder["security"] = [requirement(r) for r in security]
    return card


def encode_card(card: m.AgentCard) -> Obj:
    out = jsonrpc_card.encode_card(card)
    out.pop("iconUrl", None)
    out["capabilities"].pop("stateTransitionHistory", None)
    return _map_security(out, _proto_scheme, _proto_requirement)


def decode_card(value: Any) -> m.AgentCard:
    if type(value) is not dict:
        return jsonrpc_card.decode_card(value)  # its error
    d = {"protocolVersion": "", "description": "", **value}
    for key in ("defaultInputModes", "defaultOutputModes", "skills"):
        d.setdefault(key, [])
    if type(d["skills"]) is list:
        d["skills"] = [
            {"description": "", "tags": [], **s} if type(s) is dict else s for s in d["skills"]
        ]
    return jsonrpc_card.decode_card(_map_security(d, _jsonrpc_scheme, _jsonrpc_requirement))
