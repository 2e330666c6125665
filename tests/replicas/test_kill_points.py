"""Kill points across replicas (issue: many replicas, one agent): two `parley serve --bus`
replicas over one PostgreSQL schema; clients send, stream and answer questions through
one of them, which is killed with SIGKILL at a random moment and started again, round
after round. After each kill, within the lease and 10 s, no task is left running (the
survivor fails the victim's, saying why), and everything acknowledged is stored and
consistent — checked through the survivor.

`PARLEY_KILL_POINTS` sets the number of kills (default 8; the issue's campaign is 50);
`PARLEY_CRASH_SEED` repeats a run.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from parley.server.failover import REPLICA_LOST
from tests.crash.load import ACTIVE, Ledger
from tests.crash.test_sigkill import SEED, _list_all, _round, _verify, postgres_url
from tests.replicas.test_serve_replicas import bus, replica

__all__ = ["bus", "postgres_url"]  # fixtures: a bus prefix and a PostgreSQL schema, cleaned

KILLS = int(os.environ.get("PARLEY_KILL_POINTS", "8"))
LEASE = 2.0
"""The replicas' lease (`?lease=2` in the bus fixture)."""


async def _settled(url: str, killed_at: float, context: str) -> float:
    """Wait until no task is running; how long after the kill (at most lease + 10 s)."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        while True:
            listed: dict[str, Any] = await _list_all(client)
            running = [t["id"] for t in listed.values() if t["status"]["state"] in ACTIVE]
            waited = time.monotonic() - killed_at
            if not running:
                return waited
            assert waited < LEASE + 10, f"{context}: still running: {running}"
            await asyncio.sleep(0.2)


def test_replicas_survive_kill_points(tmp_path: Path, postgres_url: str, bus: str) -> None:
    rng = random.Random(SEED)
    ledger = Ledger()
    log = tmp_path / "replicas.log"
    waits: list[float] = []
    with replica(postgres_url, bus, log) as survivor:
        for number in range(KILLS):
            context = f"seed {SEED}, kill {number}"
            processes: list[subprocess.Popen[bytes]] = []
            with replica(postgres_url, bus, log, processes) as victim:
                asyncio.run(_round(victim, processes[0], ledger, rng.uniform(0.15, 1.2)))
                killed_at = time.monotonic()
            waits.append(asyncio.run(_settled(survivor, killed_at, context)))
            asyncio.run(_verify(survivor, ledger, context, REPLICA_LOST))
    assert ledger.acknowledged_events > KILLS * 10, "the clients barely ran"
    assert {seen.kind for seen in ledger.tasks.values()} == {"quick", "stream", "ask"}
    print(f"kills {KILLS}, settled within {max(waits):.1f} s of a kill at most")
