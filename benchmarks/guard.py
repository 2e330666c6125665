"""The guard: Parley beside the raw ASGI ceiling in a few minutes, so a change can be
checked against the figures in docs/benchmarks.md (and the README's "Performance").

    python -m benchmarks.guard            # about a minute
    python -m benchmarks.guard --smoke    # seconds: does it still run? (the test's level)

It composes `benchmarks.server` (the same servers, pinned to core 0, spawned the same
way) and `benchmarks.server_load` (the asyncio load client, on core 1): no `wrk` needed.
Figures, each for Parley and the ceiling, then their ratio:

- cold start: spawn → first 200 on the agent card, median of `--spawns` spawns of each,
  interleaved (Parley, ceiling, Parley, …) so both see the same machine;
- blocking send req/s over 1 and 16 keep-alive connections;
- stream events/s (16 connections, 100-chunk streams) and time to first event (p50).

The load client is slower than `wrk`, so the throughput shares are lower than the full
benchmark's: compare a guard run with a guard run (the reference figures printed beside).
Each figure reports how much CPU other processes took meanwhile (`others`): on a busy
machine, rerun rather than believe a figure taken beside 0.5 of a core.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.server import (
    CARD_PATH,
    RESULTS,
    ROOT,
    SERVER_CORE,
    SERVERS,
    Monitor,
    ServerSpec,
    _free_port,
    _status,
    client,
    serving,
)

SPECS = {spec.key: spec for spec in SERVERS}
PARLEY, CEILING = SPECS["parley"], SPECS["raw"]
CLI = "parley-serve"
CLI_COMMAND = ("-m", "parley.cli", "serve", "examples.echo:agent", "--store", "memory")
"""What a user runs (`parley serve`, HTTP only), beside the same ceiling."""


@dataclass(frozen=True)
class Levels:
    spawns: int = 11
    sends: int = 20_000
    streams: int = 1_000
    ttfe: int = 200
    warmup: int = 1_000

    @classmethod
    def smoke(cls) -> Levels:
        return cls(spawns=1, sends=20, streams=4, ttfe=3, warmup=5)


REFERENCE_DATE = "2026-11-27"
REFERENCE: dict[str, float] = {
    "cold_start_ratio": 1.32,
    "cli_cold_start_ratio": 1.28,
    "send_c1_share": 0.74,
    "send_c16_share": 0.61,
    "stream_share": 0.84,
    "ttfe_ratio": 4.76,
}
"""A guard run on REFERENCE_DATE, when the README's figures were taken (ratios)."""


def cli_cold_start(log: Path, timeout: float = 60) -> float:
    """Spawn `parley serve` (pinned like the other servers) → first 200 on its card, in ms."""
    port = _free_port()
    command = ["taskset", "-c", SERVER_CORE, sys.executable, *CLI_COMMAND, "--port", str(port)]
    with log.open("ab") as output:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=output, stderr=output, stdin=subprocess.DEVNULL
        )
        try:
            while time.perf_counter() - started < timeout:
                if process.poll() is not None:
                    raise RuntimeError(f"parley serve exited: see {log}")
                if _status(port, CARD_PATH) == 200:
                    return (time.perf_counter() - started) * 1000
                time.sleep(0.002)
            raise RuntimeError(f"parley serve not ready after {timeout} s")
        finally:
            process.terminate()
            process.wait(timeout=10)


def compiled() -> None:
    """Byte-compile Parley and the servers first: with PYTHONDONTWRITEBYTECODE set, a
    changed module would otherwise be compiled again by every spawn (and the cold start
    would measure the compiler)."""
    import compileall  # noqa: PLC0415
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.find_spec("parley")
    assert spec is not None
    for folder in [*(spec.submodule_search_locations or ()), ROOT / "benchmarks"]:
        compileall.compile_dir(os.fspath(folder), quiet=1)


def cold_starts(spawns: int, log: Path) -> dict[str, list[float]]:
    """Spawn → first 200 on the card, `spawns` times each, interleaved."""
    compiled()
    times: dict[str, list[float]] = {PARLEY.key: [], CLI: [], CEILING.key: []}
    for _ in range(spawns):
        for spec in (PARLEY, CEILING):
            with serving(spec, log) as server:
                times[spec.key].append(server.cold_start_ms)
        times[CLI].append(cli_cold_start(log))
    return times


def _timed(run: Callable[[], dict[str, Any]], pid: int) -> dict[str, Any]:
    with Monitor(pid) as monitor:
        figures = run()
    return {**figures, "others": monitor.figures["foreign_cores"]}


def throughput(spec: ServerSpec, levels: Levels, log: Path) -> dict[str, Any]:
    """Blocking sends at 1 and 16 connections, streams at 16, time to first event."""
    with serving(spec, log) as server:
        port, pid = server.port, server.process.pid
        client(port, "send", levels.warmup, "--concurrency", "16")
        result = {
            f"send_c{c}": _timed(
                functools.partial(client, port, "send", levels.sends, "--concurrency", str(c)),
                pid,
            )
            for c in (1, 16)
        }
        result["stream"] = _timed(lambda: client(port, "streams", levels.streams), pid)
        result["ttfe"] = _timed(lambda: client(port, "ttfe", levels.ttfe), pid)
    for key in ("send_c1", "send_c16"):
        if result[key]["failures"]:
            raise RuntimeError(f"{spec.label}: {result[key]['failures']} sends failed")
    return result


def run(levels: Levels, *, cold_only: bool = False) -> dict[str, Any]:
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    log = RESULTS / f"guard-{stamp}.log"
    starts = cold_starts(levels.spawns, log)
    result = {"time": stamp, "levels": levels.__dict__, "cold_start_ms": starts}
    if not cold_only:
        result |= {spec.key: throughput(spec, levels, log) for spec in (PARLEY, CEILING)}
    return result


def rows(result: dict[str, Any]) -> list[tuple[str, float, float, float, float]]:
    """(figure, Parley, ceiling, ratio, reference ratio): shares for throughput (higher is
    better), Parley ÷ ceiling for times (lower is better)."""
    starts = result["cold_start_ms"]
    cold = statistics.median(starts[PARLEY.key]), statistics.median(starts[CEILING.key])
    cli = statistics.median(starts[CLI])
    table = [
        ("cold start ms", *cold, cold[0] / cold[1], REFERENCE["cold_start_ratio"]),
        ("  parley serve", cli, cold[1], cli / cold[1], REFERENCE["cli_cold_start_ratio"]),
    ]
    if PARLEY.key not in result:  # --cold-only
        return table
    parley, raw = result[PARLEY.key], result[CEILING.key]
    for key, label in (("send_c1", "send c=1 req/s"), ("send_c16", "send c=16 req/s")):
        ours, ceiling = parley[key]["rps"], raw[key]["rps"]
        table.append((label, ours, ceiling, ours / ceiling, REFERENCE[f"{key}_share"]))
    ours, ceiling = parley["stream"]["eps"], raw["stream"]["eps"]
    table.append(("stream events/s", ours, ceiling, ours / ceiling, REFERENCE["stream_share"]))
    ours, ceiling = parley["ttfe"]["ttfe_ms_p50"], raw["ttfe"]["ttfe_ms_p50"]
    table.append(("stream 1st event ms", ours, ceiling, ours / ceiling, REFERENCE["ttfe_ratio"]))
    return table


def report(result: dict[str, Any]) -> str:
    lines = [f"{'':<22}{'Parley':>10}{'ceiling':>10}{'ratio':>8}{'ref ' + REFERENCE_DATE:>16}"]
    for label, ours, ceiling, ratio, reference in rows(result):
        lines.append(f"{label:<22}{ours:>10.1f}{ceiling:>10.1f}{ratio:>8.2f}{reference:>16.2f}")
    others = max(
        (figures["others"] for key in SPECS if key in result for figures in result[key].values()),
        default=None,
    )
    if others is not None:
        lines.append(f"(other processes took up to {others:.2f} of a core during a figure)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--smoke", action="store_true", help="minimal levels: does it run?")
    parser.add_argument("--spawns", type=int, help="cold starts of each server")
    parser.add_argument("--cold-only", action="store_true", help="only the cold starts")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args(argv)
    levels = Levels.smoke() if args.smoke else Levels()
    if args.spawns:
        levels = Levels(**{**levels.__dict__, "spawns": args.spawns})
    result = run(levels, cold_only=args.cold_only)
    print(json.dumps(result) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
