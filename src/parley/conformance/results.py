"""The checker's vocabulary: a check (id, REFERENCE line, level, function), the registry
every check module adds itself to, and a check's result. No I/O here."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.conformance.context import CardContext, InterfaceContext


class Level(enum.Enum):
    """How strongly the REFERENCE line binds (RFC 2119); MUST NOT counts as MUST."""

    MUST = "MUST"
    SHOULD = "SHOULD"


class Status(enum.Enum):
    PASS = "pass"  # noqa: S105 - a status, not a password
    FAIL = "fail"
    SKIP = "skip"


class CheckFailedError(Exception):
    """Raised by a check: the rule is broken; the message says how."""


class CheckSkippedError(Exception):
    """Raised by a check: the rule cannot be checked here; the message says why."""


class Scope(enum.Enum):
    CARD = "card"
    """Run once, on the card."""
    INTERFACE = "interface"
    """Run on each HTTP interface (binding, version) the card lists."""


CardCheck = Callable[["CardContext"], Awaitable[str]]
InterfaceCheck = Callable[["InterfaceContext"], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Check:
    """One rule. `run` returns the detail of a pass, or raises CheckFailedError or
    CheckSkippedError."""

    id: str
    requirement: str
    level: Level
    title: str
    scope: Scope
    run: Callable[..., Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Result:
    check: Check
    status: Status
    detail: str
    interface: str = ""
    """`BINDING VERSION URL` for an interface check, empty for a card check."""

    @property
    def must_failed(self) -> bool:
        return self.status is Status.FAIL and self.check.level is Level.MUST


class Registry:
    """The checks, in the order they run (registration order)."""

    def __init__(self) -> None:
        self.checks: list[Check] = []

    def card(
        self, id: str, requirement: str, level: Level, title: str
    ) -> Callable[[CardCheck], CardCheck]:
        return self._adder(id, requirement, level, title, Scope.CARD)

    def interface(
        self, id: str, requirement: str, level: Level, title: str
    ) -> Callable[[InterfaceCheck], InterfaceCheck]:
        return self._adder(id, requirement, level, title, Scope.INTERFACE)

    def _adder(
        self, id: str, requirement: str, level: Level, title: str, scope: Scope
    ) -> Callable[[Callable[..., Awaitable[str]]], Callable[..., Awaitable[str]]]:
        def add(run: Callable[..., Awaitable[str]]) -> Callable[..., Awaitable[str]]:
            if any(c.id == id for c in self.checks):
                raise ValueError(f"duplicate check id {id}")
            self.checks.append(Check(id, requirement, level, title, scope, run))
            return run

        return add

    def of(self, scope: Scope) -> list[Check]:
        return [c for c in self.checks if c.scope is scope]
