"""Security schemes (OpenAPI style, `type` discriminator), OAuth flows and security
requirements (`{scheme: [scopes]}`) of a 0.3 agent card.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from parley.model import (
    APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    MutualTlsSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    PasswordOAuthFlow,
    SecurityRequirement,
    SecurityScheme,
)
from parley.protocol.errors import InternalError, InvalidParamsError
from parley.wire.reader import fail, under
from parley.wire.v0_3.fields import Obj, ident, nested, obj, optional_text, text

# --- OAuth flows ---------------------------------------------------------------------------


def _scopes(d: Obj) -> dict[str, str]:
    value = d.get("scopes")
    if type(value) is dict and all(type(v) is str for v in value.values()):
        return value
    fail("", "scopes", "is required" if value is None else "expected an object of strings")


def _with_refresh(out: Obj, refresh_url: str) -> Obj:
    if refresh_url:
        out["refreshUrl"] = refresh_url
    return out


def _authorization_code(value: Any) -> AuthorizationCodeOAuthFlow:
    d = obj(value)
    return AuthorizationCodeOAuthFlow(
        authorization_url=text(d, "authorizationUrl"),
        token_url=text(d, "tokenUrl"),
        scopes=_scopes(d),
        refresh_url=optional_text(d.get("refreshUrl"), "refreshUrl"),
    )


def _client_credentials(value: Any) -> ClientCredentialsOAuthFlow:
    d = obj(value)
    return ClientCredentialsOAuthFlow(
        token_url=text(d, "tokenUrl"),
        scopes=_scopes(d),
        refresh_url=optional_text(d.get("refreshUrl"), "refreshUrl"),
    )


def _implicit(value: Any) -> ImplicitOAuthFlow:
    d = obj(value)
    return ImplicitOAuthFlow(
        authorization_url=text(d, "authorizationUrl"),
        scopes=_scopes(d),
        refresh_url=optional_text(d.get("refreshUrl"), "refreshUrl"),
    )


def _password(value: Any) -> PasswordOAuthFlow:
    d = obj(value)
    return PasswordOAuthFlow(
        token_url=text(d, "tokenUrl"),
        scopes=_scopes(d),
        refresh_url=optional_text(d.get("refreshUrl"), "refreshUrl"),
    )


def _optional(d: Obj, key: str, decoder: Callable[[Any], Any]) -> Any:
    value = d.get(key)
    return None if value is None else nested(value, decoder, key)


def decode_flows(value: Any) -> OAuthFlows:
    """Any subset of the four 0.3 flows (0.3 allows several in one scheme)."""
    d = obj(value)
    return OAuthFlows(
        authorization_code=_optional(d, "authorizationCode", _authorization_code),
        client_credentials=_optional(d, "clientCredentials", _client_credentials),
        implicit=_optional(d, "implicit", _implicit),
        password=_optional(d, "password", _password),
    )


def encode_flows(flows: OAuthFlows) -> Obj:
    """The 1.0-only device code flow and `pkce_required` have no 0.3 form: dropped."""
    out: Obj = {}
    code = flows.authorization_code
    if code is not None:
        out["authorizationCode"] = _with_refresh(
            {
                "authorizationUrl": code.authorization_url,
                "tokenUrl": code.token_url,
                "scopes": dict(code.scopes),
            },
            code.refresh_url,
        )
    client = flows.client_credentials
    if client is not None:
        out["clientCredentials"] = _with_refresh(
            {"tokenUrl": client.token_url, "scopes": dict(client.scopes)}, client.refresh_url
        )
    implicit = flows.implicit
    if implicit is not None:
        out["implicit"] = _with_refresh(
            {"authorizationUrl": implicit.authorization_url, "scopes": dict(implicit.scopes)},
            implicit.refresh_url,
        )
    password = flows.password
    if password is not None:
        out["password"] = _with_refresh(
            {"tokenUrl": password.token_url, "scopes": dict(password.scopes)},
            password.refresh_url,
        )
    return out


# --- schemes -------------------------------------------------------------------------------


def _described(out: Obj, description: str) -> Obj:
    if description:
        out["description"] = description
    return out


def encode_scheme(scheme: SecurityScheme) -> Obj:
    if type(scheme) is APIKeySecurityScheme:
        out: Obj = {"type": "apiKey", "in": scheme.location, "name": scheme.name}
    elif type(scheme) is HTTPAuthSecurityScheme:
        out = {"type": "http", "scheme": scheme.scheme}
        if scheme.bearer_format:
            out["bearerFormat"] = scheme.bearer_format
    elif type(scheme) is OAuth2SecurityScheme:
        out = {"type": "oauth2", "flows": encode_flows(scheme.flows)}
        if scheme.oauth2_metadata_url:
            out["oauth2MetadataUrl"] = scheme.oauth2_metadata_url
    elif type(scheme) is OpenIdConnectSecurityScheme:
        out = {"type": "openIdConnect", "openIdConnectUrl": scheme.open_id_connect_url}
    elif type(scheme) is MutualTlsSecurityScheme:
        out = {"type": "mutualTLS"}
    else:
        raise InternalError(f"Not a security scheme: {type(scheme).__name__}")
    return _described(out, scheme.description)


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
