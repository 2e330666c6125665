"""Input limits enforced while parsing: every decoder runs under one of these.

A binding parses each request under its own `Limits` (`applied`): the decoders read the
active ones (`active()`), so the parts and nesting bounds a server is configured with hold
on every binding and in both versions' codecs. Outside a binding, the defaults apply.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one request body (DESIGN 9: limits are on by default).

    `max_value_depth` bounds the nesting of free-form JSON (metadata, data parts,
    extension params); the typed structure around it is bounded by the schema.
    `max_parts` bounds the parts of a message or an artifact. No string can be longer
    than the body that carries it (`max_body_bytes`).
    """

    max_body_bytes: int = 10 * 1024 * 1024
    max_value_depth: int = 32
    max_parts: int = 1000


DEFAULT_LIMITS = Limits()

ACTIVE: ContextVar[Limits] = ContextVar("parley_limits", default=DEFAULT_LIMITS)
"""The limits in force; `applied` (or a binding, inline: set and reset) changes them."""


active: Callable[[], Limits] = ACTIVE.get
"""The limits the request being parsed is under (the defaults outside a binding): the
context variable's own `get`, called with no frame of ours (each message's parts ask)."""


class applied:  # noqa: N801 - used as a function: `with applied(limits):`
    """Parse under `limits` (a binding, around its handling of a request). A class, not a
    generator: it is on every request's path."""

    __slots__ = ("_limits", "_token")

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._token: Token[Limits] | None = None

    def __enter__(self) -> None:
        if self._limits is not ACTIVE.get():
            self._token = ACTIVE.set(self._limits)

    def __exit__(self, *_: object) -> None:
        if self._token is not None:
            ACTIVE.reset(self._token)


def use(limits: Limits) -> None:
    """Parse the rest of this task's work under `limits` (a gRPC call: each runs in a
    task of its own, so nothing outlives it)."""
    if limits is not ACTIVE.get():
        ACTIVE.set(limits)
