"""Authentication an agent card declares and every binding enforces (DESIGN 14):
`Security` combines schemes (`ApiKeys`, `BearerTokens`, `JwtBearer`, or any `Scheme`)
into the authenticator the bindings call and the card's security section."""

import importlib
from typing import TYPE_CHECKING, Any

from parley.server.auth.security import Scheme, Security

if TYPE_CHECKING:
    from parley.server.auth.jwt import JwtBearer
    from parley.server.auth.keys import ApiKeys, BearerTokens, Token, digest
    from parley.server.auth.mtls import MutualTls

_MODULES = {
    "ApiKeys": "parley.server.auth.keys",
    "BearerTokens": "parley.server.auth.keys",
    "JwtBearer": "parley.server.auth.jwt",
    "MutualTls": "parley.server.auth.mtls",
    "Token": "parley.server.auth.keys",
    "digest": "parley.server.auth.keys",
}
"""The schemes, loaded when named: an agent without JWT or keys does not load them."""


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ApiKeys",
    "BearerTokens",
    "JwtBearer",
    "MutualTls",
    "Scheme",
    "Security",
    "Token",
    "digest",
]
