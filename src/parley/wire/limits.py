"""Input limits enforced while parsing: every decoder runs under one of these."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one request body (DESIGN 9: limits are on by default).

    `max_value_depth` bounds the nesting of free-form JSON (metadata, data parts,
    extension params); the typed structure around it is bounded by the schema.
    """

    max_body_bytes: int = 10 * 1024 * 1024
    max_value_depth: int = 32
    max_parts: int = 1000
    max_string_bytes: int = 8 * 1024 * 1024


DEFAULT_LIMITS = Limits()
