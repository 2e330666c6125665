"""Credentials for outgoing calls: the `Auth` protocol (headers to add to each request),
an API key and a bearer token. An OAuth2 flow plugs in as another `Auth` that fetches and
refreshes its token inside `headers`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Literal, Protocol

from parley.model import APIKeySecurityScheme

TokenSource = str | Callable[[], str | Awaitable[str]]
"""A fixed token, or a function (sync or async) asked for the current one on every call."""


class Auth(Protocol):
    """Credentials: the headers (or gRPC metadata) to add to the next request."""

    async def headers(self) -> Mapping[str, str]: ...


class APIKeyAuth:
    """An API key in a header (default `X-API-Key`) or a cookie.

    Query-string keys are not offered: they end up in access logs.
    """

    def __init__(
        self, key: str, *, name: str = "X-API-Key", location: Literal["header", "cookie"] = "header"
    ) -> None:
        if location not in ("header", "cookie"):
            raise ValueError(f"API key location must be 'header' or 'cookie', not {location!r}")
        self.key = key
        self.name = name
        self.location = location

    @classmethod
    def for_scheme(cls, scheme: APIKeySecurityScheme, key: str) -> APIKeyAuth:
        """The key placed where the agent card's scheme says (`name`, `location`)."""
        location = scheme.location.lower()
        if location == "header":
            return cls(key, name=scheme.name, location="header")
        if location == "cookie":
            return cls(key, name=scheme.name, location="cookie")
        raise ValueError(f"API keys in the {scheme.location!r} are not supported")

    async def headers(self) -> Mapping[str, str]:
        if self.location == "cookie":
            return {"Cookie": f"{self.name}={self.key}"}
        return {self.name: self.key}

    def __repr__(self) -> str:
        return f"APIKeyAuth(name={self.name!r}, location={self.location!r})"  # never the key


class BearerAuth:
    """`Authorization: Bearer <token>`; the token may come from a function (refresh)."""

    def __init__(self, token: TokenSource) -> None:
        self._token = token

    async def token(self) -> str:
        """The current token (asks the function when one was given)."""
        if isinstance(self._token, str):
            return self._token
        value = self._token()
        if inspect.isawaitable(value):
            return await value
        return value

    async def headers(self) -> Mapping[str, str]:
        return {"Authorization": f"Bearer {await self.token()}"}

    def __repr__(self) -> str:
        return "BearerAuth(…)"  # never the token
