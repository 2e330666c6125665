"""Who is calling, for which tenant, in which protocol version: the CallContext that
every operation receives and every store key is scoped by (DESIGN 8).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from parley.protocol.negotiation import Version

if TYPE_CHECKING:
    from parley.server.quotas import Allowance

ANONYMOUS = "anonymous"


class Caller(msgspec.Struct, frozen=True):
    """An authenticated (or anonymous) principal."""

    id: str = ANONYMOUS
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, object] = msgspec.field(default_factory=dict)


class CallContext(msgspec.Struct, frozen=True, kw_only=True):
    """One call: the caller, the tenant, the negotiated version and extensions, and
    where a resumed subscription picks up.

    `scope` is the key prefix of everything the call may read or write: two calls
    with different scopes can never see each other's tasks. (A struct rather than a
    dataclass: one is built per call, five times faster; `msgspec.structs.replace`
    copies one with changes.)
    """

    caller: Caller = Caller()
    tenant: str = ""
    version: Version = Version.V1_0
    requested_extensions: tuple[str, ...] = ()
    activated_extensions: tuple[str, ...] = ()
    headers: Mapping[str, str] = msgspec.field(default_factory=dict)
    resume_after: int | None = None
    """The sequence number of the last task event the client received (SSE
    `Last-Event-ID`): SubscribeToTask then resumes after it (DESIGN 5)."""
    client: str | None = None
    """The caller's network address (`host:port`), when the binding knows it: anonymous
    callers' rate limits and caps are counted per address (`parley.server.quotas`)."""
    quota: Allowance | None = None
    """What is left of the caller's rate limit after this call (None: no rate applies)."""

    @property
    def scope(self) -> tuple[str, str]:
        return (self.tenant, self.caller.id)


class AuthRequest(msgspec.Struct, frozen=True):
    """What an authenticator may look at: the whole request but its body.

    `transport` is "http", "grpc" or "memory" (`InMemoryTransport`); `method` the HTTP verb
    or the gRPC method; `path` the HTTP path or the gRPC method's full name; `headers` have
    lower-case names (gRPC text metadata as headers); `query` keeps repeated keys;
    `peer_certificate` is the verified TLS client certificate as `ssl.getpeercert()` gives
    it (None without mutual TLS); `client` the peer's address, when known.
    """

    transport: str
    method: str
    path: str
    headers: Mapping[str, str]
    query: tuple[tuple[str, str], ...] = ()
    peer_certificate: Mapping[str, Any] | None = None
    client: str | None = None

    def cookie(self, name: str) -> str | None:
        """A cookie's value (RFC 6265 `Cookie` header), or None."""
        header = self.headers.get("cookie")
        if not header:
            return None
        for pair in header.split(";"):
            key, sep, value = pair.strip().partition("=")
            if sep and key == name:
                return value.strip().strip('"')
        return None

    def query_value(self, name: str) -> str | None:
        return next((value for key, value in self.query if key == name), None)


class Authenticator(Protocol):
    """Turns a request into a Caller before any handler runs (DESIGN 14), or raises
    UnauthenticatedError (no acceptable credentials: 401) or PermissionDeniedError (403).
    `parley.server.auth.Security` is the built-in one; any object with this method can
    replace it."""

    async def authenticate(self, request: AuthRequest) -> Caller: ...


ANONYMOUS_CALLER = Caller()


class AnonymousAuthenticator:
    """The default: every caller is the same anonymous principal."""

    async def authenticate(self, request: AuthRequest) -> Caller:
        return ANONYMOUS_CALLER


ANONYMOUS_AUTHENTICATOR = AnonymousAuthenticator()


def authenticator_of(handler: object, given: Authenticator | None = None) -> Authenticator:
    """The authenticator a binding uses: the one it was given, else the handler's own
    (`AgentService.authenticator`, built from its `Security`), else anonymous."""
    if given is not None:
        return given
    own: Authenticator | None = getattr(handler, "authenticator", None)
    return own if own is not None else ANONYMOUS_AUTHENTICATOR
