"""What the 0.3 and 1.0 security codecs spell alike, as tables: each scheme's string
fields and each OAuth flow's URLs, in wire order, with which of them are REQUIRED.

The versions differ in the wrapping (1.0 a oneof member, 0.3 a `type` discriminator), in
how many flows one scheme holds and in how strictly a field is read; those stay in
`v1_0/security.py` and `v0_3/security.py`, which walk these tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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
    OpenIdConnectSecurityScheme,
    PasswordOAuthFlow,
)
from parley.protocol.errors import InternalError
from parley.wire.reader import Obj


def camel(name: str) -> str:
    """The JSON name of a proto field name: `open_id_connect_url` is `openIdConnectUrl`."""
    first, *rest = name.split("_")
    return first + "".join(part.capitalize() for part in rest)


@dataclass(frozen=True, slots=True)
class Scheme:
    """One security scheme: its model, its 1.0 oneof member, its 0.3 `type`, and its string
    fields as (attribute, JSON name, REQUIRED) in wire order (the OAuth flows aside)."""

    model: type[Any]
    member: str
    kind: str
    fields: tuple[tuple[str, str, bool], ...]
    key: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", camel(self.member))


def _strings(*fields: tuple[str, bool]) -> tuple[tuple[str, str, bool], ...]:
    return tuple((name, camel(name), required) for name, required in fields)


SCHEMES = (
    Scheme(
        APIKeySecurityScheme,
        "api_key_security_scheme",
        "apiKey",
        _strings(("location", True), ("name", True)),
    ),
    Scheme(
        HTTPAuthSecurityScheme,
        "http_auth_security_scheme",
        "http",
        _strings(("scheme", True), ("bearer_format", False)),
    ),
    Scheme(
        OAuth2SecurityScheme,
        "oauth2_security_scheme",
        "oauth2",
        _strings(("oauth2_metadata_url", False)),
    ),
    Scheme(
        OpenIdConnectSecurityScheme,
        "open_id_connect_security_scheme",
        "openIdConnect",
        _strings(("open_id_connect_url", True)),
    ),
    Scheme(MutualTlsSecurityScheme, "mtls_security_scheme", "mutualTLS", ()),
)
SCHEME_OF: dict[type[Any], Scheme] = {scheme.model: scheme for scheme in SCHEMES}


def scheme_of(scheme: Any) -> Scheme:
    spec = SCHEME_OF.get(type(scheme))
    if spec is None:
        raise InternalError(f"Not a security scheme: {type(scheme).__name__}")
    return spec


def encode_fields(
    scheme: Any, out: Obj, encode_flows: Callable[[Any], Obj], names: Mapping[str, str]
) -> Obj:
    """Into `out`: an OAuth 2 scheme's flows, the scheme's string fields (an optional one
    only when set), then its description; `names` renames a JSON name (0.3 spells
    `location` as `in`)."""
    spec = SCHEME_OF[type(scheme)]
    if spec.model is OAuth2SecurityScheme:
        out["flows"] = encode_flows(scheme.flows)
    for name, key, required in spec.fields:
        value = getattr(scheme, name)
        if required or value:
            out[names.get(key, key)] = value
    return described(out, scheme.description)


def described(out: Obj, description: str) -> Obj:
    if description:
        out["description"] = description
    return out


@dataclass(frozen=True, slots=True)
class Flow:
    """One OAuth flow: its `OAuthFlows` attribute and JSON name, its model, its URLs as
    (attribute, JSON name) in wire order; `strict`: 1.0 REQUIRES the URLs and the scopes
    (the deprecated implicit and password flows leave them optional)."""

    attr: str
    model: type[Any]
    urls: tuple[tuple[str, str], ...]
    strict: bool = True
    pkce: bool = False
    legacy: bool = True  # 0.3 has the flow too
    key: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", camel(self.attr))


def _urls(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((name, camel(name)) for name in names)


FLOWS = (
    Flow(
        "authorization_code",
        AuthorizationCodeOAuthFlow,
        _urls("authorization_url", "token_url"),
        pkce=True,
    ),
    Flow("client_credentials", ClientCredentialsOAuthFlow, _urls("token_url")),
    Flow(
        "device_code",
        DeviceCodeOAuthFlow,
        _urls("device_authorization_url", "token_url"),
        legacy=False,
    ),
    Flow("implicit", ImplicitOAuthFlow, _urls("authorization_url"), strict=False),
    Flow("password", PasswordOAuthFlow, _urls("token_url"), strict=False),
)
"""In the order 1.0 picks the one flow it sends."""
