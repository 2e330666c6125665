"""Authentication an agent card declares and every binding enforces (DESIGN 14):
`Security` combines schemes (`ApiKeys`, `BearerTokens`, `JwtBearer`, or any `Scheme`)
into the authenticator the bindings call and the card's security section."""

from parley.server.auth.jwt import JwtBearer
from parley.server.auth.keys import ApiKeys, BearerTokens, Token, digest
from parley.server.auth.mtls import MutualTls
from parley.server.auth.security import Scheme, Security

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
