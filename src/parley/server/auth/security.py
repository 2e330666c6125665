"""`Security`: the schemes an agent accepts and how they combine, as one object that is
both the authenticator the bindings call and the source of the card's `securitySchemes`
and `securityRequirements` — so the card never declares what the server does not check
(DESIGN 14).

A scheme (`Scheme`) reads its own credential from the request: None when the request
carries none of its kind, a Caller when it is valid, UnauthenticatedError when it is
present but wrong. Requirements follow the card's semantics (REFERENCE §4.5): a list of
alternatives (any one suffices), each naming schemes that must all pass together.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from msgspec.structs import replace

from parley.model import AgentCard, SecurityRequirement, SecurityScheme
from parley.protocol.errors import PermissionDeniedError, UnauthenticatedError
from parley.server.context import ANONYMOUS, AuthRequest, Caller

logger = logging.getLogger("parley.auth")

SHARED_OWNER = "\x1fshared"
"""The owner of a shared agent's tasks: no principal can be named so (a control character)."""


class Scheme(Protocol):
    """One way to authenticate, named as the card names it."""

    name: str

    def declaration(self) -> SecurityScheme:
        """The scheme as the card declares it."""
        ...

    def challenge(self) -> str | None:
        """Its `WWW-Authenticate` challenge (e.g. `Bearer realm="a2a"`), if HTTP has one."""
        ...

    async def verify(self, request: AuthRequest) -> Caller | None:
        """The caller its credential names; None when the request has no credential of
        this kind; UnauthenticatedError when it has one that is not valid."""
        ...


Requirement = Mapping[str, Sequence[str]] | Sequence[str]
"""One alternative: scheme names (with the OAuth scopes each needs, as a mapping)."""


class Security:
    """The schemes an agent accepts.

    `require`: the alternatives, each a list of scheme names (or a mapping of names to
    required scopes) that must all pass; default: any one scheme. `anonymous=True` lets
    callers without any credential in as the anonymous principal (declared as an empty
    requirement); a credential that is present but wrong is refused all the same.
    `shared_tasks=True`: every authenticated caller sees every task of the agent (in its
    tenant), as one team would; anonymous callers still see only their own.
    """

    def __init__(
        self,
        *schemes: Scheme,
        require: Iterable[Requirement] | None = None,
        anonymous: bool = False,
        shared_tasks: bool = False,
    ) -> None:
        if not schemes:
            raise ValueError("Security needs at least one scheme")
        self.schemes: dict[str, Scheme] = {}
        for scheme in schemes:
            if scheme.name in self.schemes:
                raise ValueError(f"two schemes are named {scheme.name!r}")
            self.schemes[scheme.name] = scheme
        alternatives = (
            [{name: ()} for name in self.schemes]
            if require is None
            else [_alternative(r) for r in require]
        )
        for alternative in alternatives:
            unknown = [name for name in alternative if name not in self.schemes]
            if unknown or not alternative:
                raise ValueError(f"a requirement names no known scheme: {unknown or '{}'}")
        self.alternatives: tuple[Mapping[str, tuple[str, ...]], ...] = tuple(alternatives)
        self.anonymous = anonymous
        self.shared_tasks = shared_tasks
        self._challenges = tuple(
            (name, challenge)
            for name, s in self.schemes.items()
            if (challenge := s.challenge()) is not None
        )

    def apply(self, card: AgentCard) -> AgentCard:
        """`card` declaring these schemes and requirements (replacing any it had)."""
        requirements = [SecurityRequirement(schemes=dict(a)) for a in self.alternatives]
        if self.anonymous:
            requirements.append(SecurityRequirement(schemes={}))
        return replace(
            card,
            security_schemes={name: s.declaration() for name, s in self.schemes.items()},
            security_requirements=tuple(requirements),
        )

    def owner(self, caller: Caller) -> str:
        """Whose tasks `caller` reads and writes (the store scope's owner): its own, or
        with `shared_tasks` the one owner all authenticated callers share."""
        return SHARED_OWNER if self.shared_tasks and caller.id != ANONYMOUS else caller.id

    async def authenticate(self, request: AuthRequest) -> Caller:
        """The caller of the first alternative whose schemes all pass with the scopes it
        names (the first scheme names the principal; scopes are pooled). Otherwise:
        PermissionDeniedError if valid credentials lack scopes; the anonymous caller if
        allowed and no credential was wrong; else UnauthenticatedError with every
        scheme's challenge."""
        verified: dict[str, Caller | None] = {}
        refused: UnauthenticatedError | None = None
        refuser = ""
        lacking: set[str] = set()
        for alternative in self.alternatives:
            callers: list[Caller] = []
            for name in alternative:
                if name not in verified:
                    try:
                        verified[name] = await self.schemes[name].verify(request)
                    except UnauthenticatedError as wrong:
                        verified[name] = None
                        if refused is None:
                            refused, refuser = wrong, name
                caller = verified[name]
                if caller is None:
                    break
                if not set(alternative[name]) <= caller.scopes:
                    lacking.update(set(alternative[name]) - caller.scopes)
                    break
                callers.append(caller)
            else:
                return callers[0] if len(callers) == 1 else _combine(callers)
        if refused is None and lacking:
            denied = PermissionDeniedError(f"Missing scopes: {', '.join(sorted(lacking))}")
            logger.info(
                "denied %s %s %s: %s", request.transport, request.method, request.path, denied
            )
            raise denied
        if refused is None and self.anonymous:
            return Caller()
        error = refused or UnauthenticatedError(
            "This agent requires authentication: " + _describe(self.alternatives)
        )
        error.challenges = self._challenges_after(refuser, error.challenges)
        logger.info("refused %s %s %s: %s", request.transport, request.method, request.path, error)
        raise error

    def _challenges_after(self, refuser: str, own: tuple[str, ...]) -> tuple[str, ...]:
        """Every scheme's challenge, the refusing scheme's replaced by the one its refusal
        carries, if any (e.g. RFC 6750's `error="invalid_token"`)."""
        return tuple(
            challenge
            for name, static in self._challenges
            for challenge in (own if name == refuser and own else (static,))
        )


def _alternative(requirement: Requirement) -> dict[str, tuple[str, ...]]:
    if isinstance(requirement, Mapping):
        return {name: tuple(scopes) for name, scopes in requirement.items()}
    if isinstance(requirement, str):
        return {requirement: ()}
    return {name: () for name in requirement}


def _combine(callers: list[Caller]) -> Caller:
    first = callers[0]
    scopes = frozenset().union(*(c.scopes for c in callers))
    claims: dict[str, object] = {}
    for caller in reversed(callers):
        claims.update(caller.claims)
    return Caller(id=first.id, scopes=scopes, claims=claims)


def _describe(alternatives: Sequence[Mapping[str, tuple[str, ...]]]) -> str:
    return " or ".join(" and ".join(a) for a in alternatives)
