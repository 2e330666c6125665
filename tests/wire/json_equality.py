"""Comparing our JSON with what the official protobuf messages print back."""

from __future__ import annotations

from typing import Any


def same(theirs: Any, ours: Any) -> bool:
    """JSON equality where numbers compare numerically (Struct numbers come back as
    floats) but booleans stay booleans."""
    if type(theirs) is bool or type(ours) is bool:
        return type(theirs) is type(ours) and theirs == ours
    if type(theirs) in (int, float) and type(ours) in (int, float):
        return bool(theirs == ours)
    if type(theirs) is dict and type(ours) is dict:
        return theirs.keys() == ours.keys() and all(same(theirs[k], ours[k]) for k in theirs)
    if type(theirs) is list and type(ours) is list:
        return len(theirs) == len(ours) and all(map(same, theirs, ours))
    return type(theirs) is type(ours) and bool(theirs == ours)
