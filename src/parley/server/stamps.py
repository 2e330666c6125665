"""The ids and timestamps the server puts on what it creates: a new task's and context's
ids, an agent message's and an artifact's, and status timestamps.

Ids are random UUIDs (version 4: 122 random bits from `os.urandom`, the operating
system's CSPRNG, as `uuid.uuid4` takes them), written out directly: the same text as
`str(uuid.uuid4())` for about a third of its cost (no `UUID` object, no integer
arithmetic). A task id is all that names a task to the callers of one scope, so ids stay
unguessable: no counter, no per-process prefix.

Timestamps are UTC, to the millisecond (the precision the wire carries), and never go
back within the process: a clock stepped back keeps the last timestamp given until it
catches up, so a task's status timestamps are in the order of its states. Within one
millisecond the same `datetime` is handed out again (one clock read and no new object
for the several timestamps of a quick run).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from os import urandom
from time import time_ns

_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}
"""A random hex digit -> the variant digit (10xx) that keeps its two low bits."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def new_id() -> str:
    """A random UUID (version 4), as text: `str(uuid.uuid4())`, made cheaper."""
    h = urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


def millisecond_clock() -> Callable[[], datetime]:
    """A clock: now, in UTC, to the millisecond, never before a timestamp it gave earlier."""
    millis, last = 0, _EPOCH

    def utc_now() -> datetime:
        nonlocal millis, last
        now = time_ns() // 1_000_000
        if now <= millis:
            return last  # the same millisecond, or the clock went back
        millis, last = now, _EPOCH + timedelta(milliseconds=now)
        return last

    return utc_now


utc_now = millisecond_clock()
"""The server's clock (`millisecond_clock`)."""
