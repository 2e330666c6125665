"""Security schemes and requirements an agent card declares (OpenAPI-like, both versions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

from parley.model._base import Model


class APIKeySecurityScheme(Model, frozen=True, kw_only=True):
    """An API key sent in a header, query parameter or cookie."""

    name: str
    location: str
    description: str = ""


class HTTPAuthSecurityScheme(Model, frozen=True, kw_only=True):
    """HTTP authentication (RFC 7235), e.g. `Bearer` or `Basic`."""

    scheme: str
    bearer_format: str = ""
    description: str = ""


class AuthorizationCodeOAuthFlow(Model, frozen=True, kw_only=True):
    """OAuth 2.0 authorization code flow."""

    authorization_url: str
    token_url: str
    scopes: Mapping[str, str]
    refresh_url: str = ""
    pkce_required: bool = False


class ClientCredentialsOAuthFlow(Model, frozen=True, kw_only=True):
    """OAuth 2.0 client credentials flow."""

    token_url: str
    scopes: Mapping[str, str]
    refresh_url: str = ""


class DeviceCodeOAuthFlow(Model, frozen=True, kw_only=True):
    """OAuth 2.0 device authorization flow (RFC 8628; 1.0 only)."""

    device_authorization_url: str
    token_url: str
    scopes: Mapping[str, str]
    refresh_url: str = ""


class ImplicitOAuthFlow(Model, frozen=True, kw_only=True):
    """OAuth 2.0 implicit flow (deprecated in 1.0)."""

    authorization_url: str = ""
    scopes: Mapping[str, str] = {}
    refresh_url: str = ""


class PasswordOAuthFlow(Model, frozen=True, kw_only=True):
    """OAuth 2.0 resource owner password flow (deprecated in 1.0)."""

    token_url: str = ""
    scopes: Mapping[str, str] = {}
    refresh_url: str = ""


class OAuthFlows(Model, frozen=True, kw_only=True):
    """The flows of one OAuth 2.0 scheme.

    0.3 allows several flows in one scheme; 1.0 allows exactly one (see docs/decisions.md).
    """

    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None
    device_code: DeviceCodeOAuthFlow | None = None
    implicit: ImplicitOAuthFlow | None = None
    password: PasswordOAuthFlow | None = None


class OAuth2SecurityScheme(Model, frozen=True, kw_only=True):
    """OAuth 2.0."""

    flows: OAuthFlows
    oauth2_metadata_url: str = ""
    description: str = ""


class OpenIdConnectSecurityScheme(Model, frozen=True, kw_only=True):
    """OpenID Connect discovery."""

    open_id_connect_url: str
    description: str = ""


class MutualTlsSecurityScheme(Model, frozen=True, kw_only=True):
    """Mutual TLS (client certificates)."""

    description: str = ""


SecurityScheme: TypeAlias = (
    APIKeySecurityScheme
    | HTTPAuthSecurityScheme
    | OAuth2SecurityScheme
    | OpenIdConnectSecurityScheme
    | MutualTlsSecurityScheme
)
"""One security scheme of an agent card."""


class SecurityRequirement(Model, frozen=True, kw_only=True):
    """Schemes that must all be satisfied together (with scopes); a list of these is an OR."""

    schemes: Mapping[str, tuple[str, ...]]
