"""Retention: durations, and the optional timer that purges old terminal tasks while a
store is open (`?retention=`)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from parley.model import TaskState
from parley.server.stores.retention import parse_duration
from tests.contracts.support import ALICE, T0, Clock, make_task, opened, run


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", timedelta(seconds=90)),
        ("15m", timedelta(minutes=15)),
        ("12h", timedelta(hours=12)),
        ("30d", timedelta(days=30)),
        ("2w", timedelta(weeks=2)),
        ("1d12h", timedelta(days=1, hours=12)),
        (" 7D ", timedelta(days=7)),
    ],
)
def test_durations(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "30", "d", "1y", "-1d", "0s", "1.5h", "30 days"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_the_timer_purges_while_the_store_is_open(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'parley.db'}"

    async def main() -> None:
        clock = Clock()
        async with opened(url, clock) as (store, _):
            await store.create(ALICE, make_task("old", state=TaskState.COMPLETED))
            await store.create(ALICE, make_task("running"))
        clock.advance(timedelta(days=2))
        async with opened(url + "?retention=1d&purge_every=1h", clock) as (store, _):
            while await store.get(ALICE, "old") is not None:  # purged at once, then hourly
                await asyncio.sleep(0.01)
            assert await store.get(ALICE, "running") is not None
        assert clock.now == T0 + timedelta(days=2)

    run(main(), timeout=10)
