"""The 1.0 wire form of security: the `SecurityScheme` oneof wrapper and its five schemes,
`OAuthFlows` (exactly one flow on the wire) and `SecurityRequirement`.

The fields of each scheme and flow are tables in `wire.security_fields`, shared with 0.3.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from parley.model import OAuth2SecurityScheme, OAuthFlows, SecurityRequirement, SecurityScheme
from parley.wire.protojson.fields import obj, one_of, required
from parley.wire.reader import (
    Obj,
    fail,
    field,
    nested,
    opt_bool,
    opt_str,
    req_str,
    str_list,
    str_map,
)
from parley.wire.security_fields import FLOWS, SCHEMES, Flow, Scheme, encode_fields, scheme_of

# ---------------------------------------------------------------- schemes


def encode_scheme(scheme: SecurityScheme) -> Obj:
    """The `SecurityScheme` wrapper: `{"<kind>SecurityScheme": {...}}`."""
    return {scheme_of(scheme).key: _encode_inner(scheme)}


def _encode_inner(scheme: Any) -> Obj:
    """A scheme without its wrapper."""
    return encode_fields(scheme, {}, encode_flows, {})


def _scheme_decoder(spec: Scheme) -> Callable[[Any], SecurityScheme]:
    def decode(value: Any) -> SecurityScheme:
        d = obj(value)
        values: dict[str, Any] = {}
        if spec.model is OAuth2SecurityScheme:
            values["flows"] = required("flows", decode_flows, d.get("flows"))
        for name, key, is_required in spec.fields:
            values[name] = (req_str if is_required else opt_str)(d, key, "", name)
        values["description"] = opt_str(d, "description", "")
        return spec.model(**values)  # type: ignore[no-any-return]

    return decode


_SCHEME_MEMBERS = tuple((spec.key, spec.member) for spec in SCHEMES)
_SCHEME_DECODERS = {spec.key: _scheme_decoder(spec) for spec in SCHEMES}


def decode_scheme(value: Any) -> SecurityScheme:
    key, inner = one_of(obj(value), _SCHEME_MEMBERS)
    return nested(key, _SCHEME_DECODERS[key], inner)


# ---------------------------------------------------------------- OAuth flows


def _encode_flow(spec: Flow, flow: Any) -> Obj:
    """The URLs, the refresh URL, then the scopes; a strict flow's REQUIRED fields are
    emitted even when empty."""
    out: Obj = {}
    for name, key in spec.urls:
        url = getattr(flow, name)
        if url or spec.strict:
            out[key] = url
    if flow.refresh_url:
        out["refreshUrl"] = flow.refresh_url
    if flow.scopes or spec.strict:
        out["scopes"] = dict(flow.scopes)
    if spec.pkce and flow.pkce_required:
        out["pkceRequired"] = True
    return out


def encode_flows(flows: OAuthFlows) -> Obj:
    """Exactly one flow, as 1.0 requires: the first set of authorizationCode,
    clientCredentials, deviceCode, implicit, password (a 0.3 scheme may hold several).
    """
    for spec in FLOWS:
        flow = getattr(flows, spec.attr)
        if flow is not None:
            return {spec.key: _encode_flow(spec, flow)}
    return {}


def _flow_decoder(spec: Flow) -> Callable[[Any], Any]:
    read_url = req_str if spec.strict else opt_str

    def decode(value: Any) -> Any:
        d = obj(value)
        values: dict[str, Any] = {name: read_url(d, key, "", name) for name, key in spec.urls}
        values["scopes"] = str_map(d, "scopes", "")
        values["refresh_url"] = opt_str(d, "refreshUrl", "", "refresh_url")
        if spec.pkce:
            values["pkce_required"] = bool(opt_bool(d, "pkceRequired", "", "pkce_required"))
        return spec.model(**values)

    return decode


_FLOW_MEMBERS = tuple((spec.key, spec.attr if spec.attr != spec.key else None) for spec in FLOWS)
_FLOW_DECODERS = {spec.key: (spec.attr, _flow_decoder(spec)) for spec in FLOWS}


def decode_flows(value: Any) -> OAuthFlows:
    """`OAuthFlows`: a oneof, so exactly one flow."""
    key, inner = one_of(obj(value), _FLOW_MEMBERS)
    attr, decode = _FLOW_DECODERS[key]
    return OAuthFlows(**{attr: nested(key, decode, inner)})


STANDALONE: dict[type[Any], tuple[Callable[[Any], Obj], Callable[[Any], Any]]] = {
    **{spec.model: (_encode_inner, _SCHEME_DECODERS[spec.key]) for spec in SCHEMES},
    **{spec.model: (partial(_encode_flow, spec), _FLOW_DECODERS[spec.key][1]) for spec in FLOWS},
}
"""Each scheme and each flow on its own (without the oneof wrapper), for the codec's table."""


# ---------------------------------------------------------------- requirements


def encode_requirement(requirement: SecurityRequirement) -> Obj:
    """`{"schemes": {name: {"list": [scopes]}}}`; an empty scope list is `{}`."""
    schemes = {
        name: {"list": list(scopes)} if scopes else {}
        for name, scopes in requirement.schemes.items()
    }
    return {"schemes": schemes} if schemes else {}


def decode_requirement(value: Any) -> SecurityRequirement:
    schemes = field(obj(value), "schemes")
    if schemes is None:
        return SecurityRequirement(schemes={})
    if type(schemes) is not dict:
        fail("", "schemes", "expected a JSON object")
    return SecurityRequirement(
        schemes={name: nested(f"schemes.{name}", _scopes, v) for name, v in schemes.items()}
    )


def _scopes(value: Any) -> tuple[str, ...]:
    return str_list(obj(value), "list", "")
