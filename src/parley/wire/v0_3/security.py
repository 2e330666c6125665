"""Security schemes (OpenAPI style, `type` discriminator), OAuth flows and security
requirements (`{scheme: [scopes]}`) of a 0.3 agent card.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from parley.model import (
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTlsSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
)
from parley.protocol.errors import InvalidParamsError
from parley.wire.reader import fail, under
from parley.wire.security_fields import FLOWS, Flow, encode_fields, scheme_of
from parley.wire.v0_3.fields import Obj, ident, nested, obj, optional_text, text

# --- OAuth flows ---------------------------------------------------------------------------

_FLOWS = tuple(spec for spec in FLOWS if spec.legacy)
"""The four 0.3 flows: the 1.0-only device code flow has no 0.3 form."""


def _scopes(d: Obj) -> dict[str, str]:
    value = d.get("scopes")
    if type(value) is dict and all(type(v) is str for v in value.values()):
        return value
    fail("", "scopes", "is required" if value is None else "expected an object of strings")


def _flow_decoder(spec: Flow) -> Callable[[Any], Any]:
    def decode(value: Any) -> Any:
        d = obj(value)
        values: dict[str, Any] = {name: text(d, key) for name, key in spec.urls}
        values["scopes"] = _scopes(d)
        values["refresh_url"] = optional_text(d.get("refreshUrl"), "refreshUrl")
        return spec.model(**values)

    return decode


_FLOW_DECODERS = tuple((spec.attr, spec.key, _flow_decoder(spec)) for spec in _FLOWS)


def _optional(d: Obj, key: str, decoder: Callable[[Any], Any]) -> Any:
    value = d.get(key)
    return None if value is None else nested(value, decoder, key)


def decode_flows(value: Any) -> OAuthFlows:
    """Any subset of the four 0.3 flows (0.3 allows several in one scheme)."""
    d = obj(value)
    return OAuthFlows(**{name: _optional(d, key, decoder) for name, key, decoder in _FLOW_DECODERS})


def encode_flows(flows: OAuthFlows) -> Obj:
    """The 1.0-only device code flow and `pkce_required` have no 0.3 form: dropped."""
    out: Obj = {}
    for spec in _FLOWS:
        flow = getattr(flows, spec.attr)
        if flow is not None:
            encoded: Obj = {key: getattr(flow, name) for name, key in spec.urls}
            encoded["scopes"] = dict(flow.scopes)
            if flow.refresh_url:
                encoded["refreshUrl"] = flow.refresh_url
            out[spec.key] = encoded
    return out


# --- schemes -------------------------------------------------------------------------------

_NAMES = {"location": "in"}
"""The 0.3 (OpenAPI) spelling of a scheme field where it differs from 1.0's."""


def encode_scheme(scheme: SecurityScheme) -> Obj:
    return encode_fields(scheme, {"type": scheme_of(scheme).kind}, encode_flows, _NAMES)


def _description(d: Obj) -> str:
    return optional_text(d.get("description"), "description")


def _api_key(d: Obj) -> APIKeySecurityScheme:
    return APIKeySecurityScheme(
        name=ident(d, "name"), location=ident(d, "in"), description=_description(d)
    )


def _http(d: Obj) -> HTTPAuthSecurityScheme:
    return HTTPAuthSecurityScheme(
        scheme=ident(d, "scheme"),
        bearer_format=optional_text(d.get("bearerFormat"), "bearerFormat"),
        description=_description(d),
    )


def _oauth2(d: Obj) -> OAuth2SecurityScheme:
    return OAuth2SecurityScheme(
        flows=nested(d.get("flows"), decode_flows, "flows"),
        oauth2_metadata_url=optional_text(d.get("oauth2MetadataUrl"), "oauth2MetadataUrl"),
        description=_description(d),
    )


def _open_id_connect(d: Obj) -> OpenIdConnectSecurityScheme:
    return OpenIdConnectSecurityScheme(
        open_id_connect_url=text(d, "openIdConnectUrl"), description=_description(d)
    )


def _mutual_tls(d: Obj) -> MutualTlsSecurityScheme:
    return MutualTlsSecurityScheme(description=_description(d))


_SCHEMES: dict[str, Callable[[Obj], SecurityScheme]] = {
    "apiKey": _api_key,
    "http": _http,
    "oauth2": _oauth2,
    "openIdConnect": _open_id_connect,
    "mutualTLS": _mutual_tls,
}


def decode_scheme(value: Any) -> SecurityScheme:
    d = obj(value)
    kind = d.get("type")
    decoder = _SCHEMES.get(kind) if type(kind) is str else None
    if decoder is None:
        fail(
            "",
            "type",
            "is required"
            if kind is None
            else "expected 'apiKey', 'http', 'oauth2', 'openIdConnect' or 'mutualTLS'",
        )
    return decoder(d)


def encode_schemes(schemes: Mapping[str, SecurityScheme]) -> Obj:
    return {name: encode_scheme(scheme) for name, scheme in schemes.items()}


def decode_schemes(value: Any) -> dict[str, SecurityScheme]:
    """`securitySchemes`: scheme name to scheme; errors are named by the scheme."""
    if type(value) is not dict:
        fail("", "securitySchemes", "expected a JSON object")
    out: dict[str, SecurityScheme] = {}
    for name, scheme in value.items():
        try:
            out[name] = decode_scheme(scheme)
        except InvalidParamsError as exc:
            raise under(exc, f"securitySchemes.{name}") from None
    return out


# --- requirements --------------------------------------------------------------------------


def encode_requirement(requirement: SecurityRequirement) -> Obj:
    return {name: list(scopes) for name, scopes in requirement.schemes.items()}


def decode_requirement(value: Any) -> SecurityRequirement:
    """`{scheme: [scopes]}`: every scheme must be satisfied (with those scopes)."""
    d = obj(value)
    for name, scopes in d.items():
        if type(scopes) is not list or not all(type(scope) is str for scope in scopes):
            fail("", name, "expected a list of scope strings")
    return SecurityRequirement(schemes={name: tuple(scopes) for name, scopes in d.items()})
