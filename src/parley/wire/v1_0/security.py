"""The 1.0 wire form of security: the `SecurityScheme` oneof wrapper and its five schemes,
`OAuthFlows` (exactly one flow on the wire) and `SecurityRequirement`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parley.model import (
    APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    DeviceCodeOAuthFlow,
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
from parley.protocol.errors import InternalError
from parley.wire.protojson.fields import (
    obj,
    one_of,
    required,
)
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

# ---------------------------------------------------------------- schemes


def encode_api_key(scheme: APIKeySecurityScheme) -> Obj:
    return _described({"location": scheme.location, "name": scheme.name}, scheme.description)


def decode_api_key(value: Any) -> APIKeySecurityScheme:
    d = obj(value)
    return APIKeySecurityScheme(
        location=req_str(d, "location", ""),
        name=req_str(d, "name", ""),
        description=opt_str(d, "description", ""),
    )


def encode_http_auth(scheme: HTTPAuthSecurityScheme) -> Obj:
    out: Obj = {"scheme": scheme.scheme}
    if scheme.bearer_format:
        out["bearerFormat"] = scheme.bearer_format
    return _described(out, scheme.description)


def decode_http_auth(value: Any) -> HTTPAuthSecurityScheme:
    d = obj(value)
    return HTTPAuthSecurityScheme(
        scheme=req_str(d, "scheme", ""),
        bearer_format=opt_str(d, "bearerFormat", "", "bearer_format"),
        description=opt_str(d, "description", ""),
    )


def encode_oauth2(scheme: OAuth2SecurityScheme) -> Obj:
    out: Obj = {"flows": encode_flows(scheme.flows)}
    if scheme.oauth2_metadata_url:
        out["oauth2MetadataUrl"] = scheme.oauth2_metadata_url
    return _described(out, scheme.description)


def decode_oauth2(value: Any) -> OAuth2SecurityScheme:
    d = obj(value)
    return OAuth2SecurityScheme(
        flows=required("flows", decode_flows, d.get("flows")),
        oauth2_metadata_url=opt_str(d, "oauth2MetadataUrl", "", "oauth2_metadata_url"),
        description=opt_str(d, "description", ""),
    )


def encode_open_id(scheme: OpenIdConnectSecurityScheme) -> Obj:
    return _described({"openIdConnectUrl": scheme.open_id_connect_url}, scheme.description)


def decode_open_id(value: Any) -> OpenIdConnectSecurityScheme:
    d = obj(value)
    return OpenIdConnectSecurityScheme(
        open_id_connect_url=req_str(d, "openIdConnectUrl", "", "open_id_connect_url"),
        description=opt_str(d, "description", ""),
    )


def encode_mtls(scheme: MutualTlsSecurityScheme) -> Obj:
    return _described({}, scheme.description)


def decode_mtls(value: Any) -> MutualTlsSecurityScheme:
    return MutualTlsSecurityScheme(description=opt_str(obj(value), "description", ""))


def _described(out: Obj, description: str) -> Obj:
    if description:
        out["description"] = description
    return out


_SCHEME_ENCODERS: dict[type[Any], tuple[str, Callable[[Any], Obj]]] = {
    APIKeySecurityScheme: ("apiKeySecurityScheme", encode_api_key),
    HTTPAuthSecurityScheme: ("httpAuthSecurityScheme", encode_http_auth),
    OAuth2SecurityScheme: ("oauth2SecurityScheme", encode_oauth2),
    OpenIdConnectSecurityScheme: ("openIdConnectSecurityScheme", encode_open_id),
    MutualTlsSecurityScheme: ("mtlsSecurityScheme", encode_mtls),
}
_SCHEME_MEMBERS = (
    ("apiKeySecurityScheme", "api_key_security_scheme"),
    ("httpAuthSecurityScheme", "http_auth_security_scheme"),
    ("oauth2SecurityScheme", "oauth2_security_scheme"),
    ("openIdConnectSecurityScheme", "open_id_connect_security_scheme"),
    ("mtlsSecurityScheme", "mtls_security_scheme"),
)
_SCHEME_DECODERS: dict[str, Callable[[Any], SecurityScheme]] = {
    "apiKeySecurityScheme": decode_api_key,
    "httpAuthSecurityScheme": decode_http_auth,
    "oauth2SecurityScheme": decode_oauth2,
    "openIdConnectSecurityScheme": decode_open_id,
    "mtlsSecurityScheme": decode_mtls,
}


def encode_scheme(scheme: SecurityScheme) -> Obj:
    """The `SecurityScheme` wrapper: `{"<kind>SecurityScheme": {...}}`."""
    entry = _SCHEME_ENCODERS.get(type(scheme))
    if entry is None:
        raise InternalError(f"Not a security scheme: {type(scheme).__name__}")
    key, encode = entry
    return {key: encode(scheme)}


def decode_scheme(value: Any) -> SecurityScheme:
    key, inner = one_of(obj(value), _SCHEME_MEMBERS)
    return nested(key, _SCHEME_DECODERS[key], inner)


# ---------------------------------------------------------------- OAuth flows


def encode_authorization_code(flow: AuthorizationCodeOAuthFlow) -> Obj:
    out: Obj = {"authorizationUrl": flow.authorization_url, "tokenUrl": flow.token_url}
    if flow.refresh_url:
        out["refreshUrl"] = flow.refresh_url
    out["scopes"] = dict(flow.scopes)
    if flow.pkce_required:
        out["pkceRequired"] = True
    return out


def decode_authorization_code(value: Any) -> AuthorizationCodeOAuthFlow:
    d = obj(value)
    return AuthorizationCodeOAuthFlow(
        authorization_url=req_str(d, "authorizationUrl", "", "authorization_url"),
        token_url=req_str(d, "tokenUrl", "", "token_url"),
        scopes=str_map(d, "scopes", ""),
        refresh_url=opt_str(d, "refreshUrl", "", "refresh_url"),
        pkce_required=bool(opt_bool(d, "pkceRequired", "", "pkce_required")),
    )


def encode_client_credentials(flow: ClientCredentialsOAuthFlow) -> Obj:
    return _refreshable({"tokenUrl": flow.token_url}, flow.refresh_url, flow.scopes, True)


def decode_client_credentials(value: Any) -> ClientCredentialsOAuthFlow:
    d = obj(value)
    return ClientCredentialsOAuthFlow(
        token_url=req_str(d, "tokenUrl", "", "token_url"),
        scopes=str_map(d, "scopes", ""),
        refresh_url=opt_str(d, "refreshUrl", "", "refresh_url"),
    )


def encode_device_code(flow: DeviceCodeOAuthFlow) -> Obj:
    out = {"deviceAuthorizationUrl": flow.device_authorization_url, "tokenUrl": flow.token_url}
    return _refreshable(out, flow.refresh_url, flow.scopes, True)


def decode_device_code(value: Any) -> DeviceCodeOAuthFlow:
    d = obj(value)
    return DeviceCodeOAuthFlow(
        device_authorization_url=req_str(
            d, "deviceAuthorizationUrl", "", "device_authorization_url"
        ),
        token_url=req_str(d, "tokenUrl", "", "token_url"),
        scopes=str_map(d, "scopes", ""),
        refresh_url=opt_str(d, "refreshUrl", "", "refresh_url"),
    )


def encode_implicit(flow: ImplicitOAuthFlow) -> Obj:
    out: Obj = {"authorizationUrl": flow.authorization_url} if flow.authorization_url else {}
    return _refreshable(out, flow.refresh_url, flow.scopes, False)


def decode_implicit(value: Any) -> ImplicitOAuthFlow:
    d = obj(value)
    return ImplicitOAuthFlow(
        authorization_url=opt_str(d, "authorizationUrl", "", "authorization_url"),
        scopes=str_map(d, "scopes", ""),
        refresh_url=opt_str(d, "refreshUrl", "", "refresh_url"),
    )


def encode_password(flow: PasswordOAuthFlow) -> Obj:
    out: Obj = {"tokenUrl": flow.token_url} if flow.token_url else {}
    return _refreshable(out, flow.refresh_url, flow.scopes, False)


def decode_password(value: Any) -> PasswordOAuthFlow:
    d = obj(value)
    return PasswordOAuthFlow(
        token_url=opt_str(d, "tokenUrl", "", "token_url"),
        scopes=str_map(d, "scopes", ""),
        refresh_url=opt_str(d, "refreshUrl", "", "refresh_url"),
    )


def _refreshable(out: Obj, refresh_url: str, scopes: Any, scopes_required: bool) -> Obj:
    if refresh_url:
        out["refreshUrl"] = refresh_url
    if scopes or scopes_required:  # REQUIRED maps are emitted even when empty
        out["scopes"] = dict(scopes)
    return out


def encode_flows(flows: OAuthFlows) -> Obj:
    """Exactly one flow, as 1.0 requires: the first set of authorizationCode,
    clientCredentials, deviceCode, implicit, password (a 0.3 scheme may hold several).
    """
    if flows.authorization_code is not None:
        return {"authorizationCode": encode_authorization_code(flows.authorization_code)}
    if flows.client_credentials is not None:
        return {"clientCredentials": encode_client_credentials(flows.client_credentials)}
    if flows.device_code is not None:
        return {"deviceCode": encode_device_code(flows.device_code)}
    if flows.implicit is not None:
        return {"implicit": encode_implicit(flows.implicit)}
    if flows.password is not None:
        return {"password": encode_password(flows.password)}
    return {}


_FLOW_MEMBERS = (
    ("authorizationCode", "authorization_code"),
    ("clientCredentials", "client_credentials"),
    ("deviceCode", "device_code"),
    ("implicit", None),
    ("password", None),
)
_FLOW_DECODERS: dict[str, Callable[[Any], OAuthFlows]] = {
    "authorizationCode": lambda v: OAuthFlows(authorization_code=decode_authorization_code(v)),
    "clientCredentials": lambda v: OAuthFlows(client_credentials=decode_client_credentials(v)),
    "deviceCode": lambda v: OAuthFlows(device_code=decode_device_code(v)),
    "implicit": lambda v: OAuthFlows(implicit=decode_implicit(v)),
    "password": lambda v: OAuthFlows(password=decode_password(v)),
}


def decode_flows(value: Any) -> OAuthFlows:
    """`OAuthFlows`: a oneof, so exactly one flow."""
    key, inner = one_of(obj(value), _FLOW_MEMBERS)
    return nested(key, _FLOW_DECODERS[key], inner)


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
