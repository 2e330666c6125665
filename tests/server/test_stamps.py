"""The server's ids (random version-4 UUIDs, as text) and its clock (UTC, to the
millisecond, never going back)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

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


def test_the_clock_reads_utc_to_the_millisecond(monkeypatch: pytest.MonkeyPatch) -> None:
    real = stamps.utc_now()
    assert real.tzinfo is UTC
    assert real.microsecond % 1000 == 0
    assert abs((datetime.now(UTC) - real).total_seconds()) < 60
    monkeypatch.setattr(stamps, "time_ns", lambda: 1_700_000_000_123_456_789)
    now = stamps.millisecond_clock()()
    assert now == datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert now.tzinfo is UTC


def test_the_clock_never_goes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([5_000_000_000, 4_000_000_000, 5_000_400_000, 5_002_000_000])
    monkeypatch.setattr(stamps, "time_ns", lambda: next(readings))
    clock = stamps.millisecond_clock()
    first = clock()
    assert clock() is first  # stepped back a second: still the last timestamp given
    assert clock() is first  # the same millisecond
    later = clock()
    assert (later - first).total_seconds() == pytest.approx(0.002)
