"""The ids and timestamps the server puts on what it creates: a new task's and context's
ids, an agent message's and an artifact's, and status timestamps.

Ids are random UUIDs (version 4: 122 random bits from `os.urandom`, the operating
system's CSPRNG, as `uuid.uuid4` takes them), the same text as `str(uuid.uuid4())`. The
random bytes are drawn 4 KiB at a time and the 256 ids of a draw written out together, by
a few operations over all of them (about a fifth of the instructions of one id at a time,
and one system call instead of 256); each is handed out once. A task id is all that names
a task to the callers of one scope, so ids stay unguessable: no counter, no per-process
prefix; a forked child drops the ids its parent drew, so no two processes share one.

Timestamps are UTC, to the millisecond (the precision the wire carries), and never go
back within the process: a clock stepped back keeps the last timestamp given until it
catches up, so a task's status timestamps are in the order of its states. Within one
millisecond the same `datetime` is handed out again (one clock read and no new object
for the several timestamps of a quick run).
"""

from __future__ import annotations

import os
from binascii import hexlify
from collections.abc import Callable
from datetime import UTC, datetime
from time import time_ns

_VARIANT = bytes.maketrans(b"0123456789abcdef", b"89ab89ab89ab89ab")
"""A random hex digit -> the variant digit (10xx) that keeps its two low bits."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FROM_TIMESTAMP = datetime.fromtimestamp


def random_ids(count: int = 256) -> Callable[[], str]:
    """An id source: random UUIDs (version 4) as text, the same as `str(uuid.uuid4())`,
    written out `count` at a time from one draw of `16 * count` random bytes."""
    ready: list[str] = []
    pop = ready.pop
    dots, fours, spaces = b"." * count, b"4" * count, b" " * count

    def draw() -> None:
        # The hex of each id's 16 bytes, a dash every 4 digits, 40 characters an id:
        # `aaaa-bbbb-cccc-dddd-eeee-ffff-gggg-hhhh-`. Drop the 1st, 6th and 7th dashes,
        # end each id with a space, put the version (4) and the variant (10xx) in, and
        # the text of them all splits into the ids: no Python step per id.
        text = bytearray(hexlify(os.urandom(16 * count), b"-", 2))
        text += b"-"
        text[4::40] = text[29::40] = text[34::40] = dots
        text[39::40] = spaces
        text[15::40] = fours
        text[20::40] = text[20::40].translate(_VARIANT)
        ready.extend(text.translate(None, b".").decode().split())

    def new_id() -> str:
        try:
            return pop()  # (atomic: no id handed out twice, even across threads)
        except IndexError:
            draw()
            return pop()

    if hasattr(os, "register_at_fork"):  # a forked child draws its own
        os.register_at_fork(after_in_child=ready.clear)
    return new_id


new_id = random_ids()
"""A random UUID (version 4), as text (`random_ids`): the server's id source."""


def millisecond_clock() -> Callable[[], datetime]:
    """A clock: now, in UTC, to the millisecond, never before a timestamp it gave earlier."""
    millis, last = 0, _EPOCH

    def utc_now() -> datetime:
        nonlocal millis, last
        now = time_ns() // 1_000_000
        if now <= millis:
            return last  # the same millisecond, or the clock went back
        # (exact: the float's error is far below the microsecond `fromtimestamp` rounds to)
        millis, last = now, _FROM_TIMESTAMP(now / 1000, UTC)
        return last

    return utc_now


utc_now = millisecond_clock()
"""The server's clock (`millisecond_clock`)."""
