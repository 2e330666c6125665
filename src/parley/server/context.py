"""Who is calling, for which tenant, in which protocol version: the CallContext that
every operation receives and every store key is scoped by (DESIGN 8).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from parley.protocol.negotiation import Version

ANONYMOUS = "anonymous"


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated (or anonymous) principal."""

    id: str = ANONYMOUS
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CallContext:
    """One call: the caller, the tenant, the negotiated version and extensions, and
    where a resumed subscription picks up.

    `scope` is the key prefix of everything the call may read or write: two calls
    with different scopes can never see each other's tasks.
    """

    caller: Caller = Caller()
    tenant: str = ""
    version: Version = Version.V1_0
    requested_extensions: tuple[str, ...] = ()
    activated_extensions: tuple[str, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    resume_after: int | None = None
    """The sequence number of the last task event the client received (SSE
    `Last-Event-ID`): SubscribeToTask then resumes after it (DESIGN 5)."""

    @property
    def scope(self) -> tuple[str, str]:
        return (self.tenant, self.caller.id)


class Authenticator(Protocol):
    """Turns request headers into a Caller, or raises (real schemes arrive later)."""

    async def authenticate(self, headers: Mapping[str, str]) -> Caller: ...


class AnonymousAuthenticator:
    """The default: every caller is the same anonymous principal."""

    async def authenticate(self, headers: Mapping[str, str]) -> Caller:
        return Caller()
