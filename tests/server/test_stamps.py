"""The server's ids (random version-4 UUIDs, as text) and its clock (UTC, to the
millisecond, never going back)."""

from __future__ import annotations

import os
import random
import threading
import uuid
import warnings
from datetime import UTC, datetime, timedelta

import pytest

from parley.server import stamps


def test_ids_are_random_version_4_uuids_in_their_usual_text() -> None:
    ids = [stamps.new_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text  # lower-case, dashes where uuid puts them
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
    # every bit but the six fixed ones varies
    varying = 0
    for text in ids:
        varying |= uuid.UUID(ids[0]).int ^ uuid.UUID(text).int
    assert varying.bit_count() == 122


def test_ids_come_from_blocks_of_randomness_each_handed_out_once() -> None:
    source = stamps.random_ids(count=4)  # four ids a draw
    ids = [source() for _ in range(41)]
    assert len(set(ids)) == 41
    assert all(uuid.UUID(text).version == 4 for text in ids)
    drawn: list[str] = []
    threads = [
        threading.Thread(target=lambda: drawn.extend(source() for _ in range(500)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(drawn)) == 2000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_never_hands_out_its_parents_ids() -> None:
    stamps.new_id()  # a block drawn: ids waiting in the parent
    reading, writing = os.pipe()
    with warnings.catch_warnings():  # (3.12+: fork beside other threads; the child only writes)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child
        os.write(writing, " ".join(stamps.new_id() for _ in range(3)).encode())
        os._exit(0)
    os.close(writing)
    os.waitpid(pid, 0)
    with os.fdopen(reading) as pipe:
        child = set(pipe.read().split())
    parent = {stamps.new_id() for _ in range(600)}
    assert len(child) == 3
    assert not child & parent


def test_the_clock_reads_utc_to_the_millisecond(monkeypatch: pytest.MonkeyPatch) -> None:
    real = stamps.utc_now()
    assert real.tzinfo is UTC
    assert real.microsecond % 1000 == 0
    assert abs((datetime.now(UTC) - real).total_seconds()) < 60
    monkeypatch.setattr(stamps, "time_ns", lambda: 1_700_000_000_123_456_789)
    now = stamps.millisecond_clock()()
    assert now == datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert now.tzinfo is UTC


def test_the_clocks_milliseconds_are_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reading is the millisecond it was read in, exactly (no float rounding off)."""
    rng = random.Random(7)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    for millis in [0, 1, 999, 1_700_000_000_123, 4_102_444_800_000] + [
        rng.randrange(4_102_444_800_000) for _ in range(20_000)
    ]:
        monkeypatch.setattr(stamps, "time_ns", lambda m=millis: m * 1_000_000 + 999_999)
        assert stamps.millisecond_clock()() == epoch + timedelta(milliseconds=millis)


def test_the_clock_never_goes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([5_000_000_000, 4_000_000_000, 5_000_400_000, 5_002_000_000])
    monkeypatch.setattr(stamps, "time_ns", lambda: next(readings))
    clock = stamps.millisecond_clock()
    first = clock()
    assert clock() is first  # stepped back a second: still the last timestamp given
    assert clock() is first  # the same millisecond
    later = clock()
    assert (later - first).total_seconds() == pytest.approx(0.002)
