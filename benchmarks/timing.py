"""A tiny timer: best of several repeats, in microseconds per call."""

from __future__ import annotations

import timeit
from collections.abc import Callable


def per_call_us(function: Callable[[], object], *, budget_s: float = 0.4, repeat: int = 5) -> float:
    """Best-of-`repeat` time per call, each repeat running about `budget_s` seconds."""
    timer = timeit.Timer(function)
    number, _ = timer.autorange()
    number = max(1, int(number * budget_s / 0.2))
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6
