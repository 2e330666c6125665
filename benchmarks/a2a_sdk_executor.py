"""One a2a-sdk executor on two servers (issue 18): `benchmarks.servers.sdk_echo`'s
`EchoExecutor` on the official a2a-sdk server and, unchanged, on Parley through
`from_executor`; Parley's own echo agent beside them for reference. Blocking-send
throughput (JSON-RPC `SendMessage`, 1.0, memory stores), in one run: each server in turn,
round after round, each on uvicorn with uvloop + httptools, one worker, pinned to core 0,
the load client (`benchmarks.server_load send`) pinned to core 1.

    python -m benchmarks.a2a_sdk_executor                  # 3 rounds of 5,000 sends
    python -m benchmarks.a2a_sdk_executor --rounds 1 --count 2000

Each figure is the median of the rounds; `others` is the CPU other processes on the
machine took meanwhile (in cores): a run beside a busy machine reads lower for everyone.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.server import RESULTS, Monitor, ServerSpec, client, serving

SERVERS = (
    ServerSpec("sdk", "sdk_echo", "the executor on the a2a-sdk server"),
    ServerSpec("parley-sdk", "parley_sdk_echo", "the executor on Parley (from_executor)"),
    ServerSpec("parley", "parley_echo", "Parley's own echo agent"),
)


def once(spec: ServerSpec, count: int, concurrency: int, log: Path) -> dict[str, Any]:
    """A fresh server: a warm-up of a tenth of `count` sends, then `count` timed ones."""
    load = ("--concurrency", str(concurrency))
    with serving(spec, log) as server:
        client(server.port, "send", max(count // 10, concurrency), *load)
        with Monitor(server.process.pid) as monitor:
            figures = client(server.port, "send", count, *load)
    if figures["failures"]:
        raise RuntimeError(f"{spec.label}: {figures['failures']} sends failed")
    return {**figures, **monitor.figures}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    log = RESULTS / "a2a_sdk_executor.log"
    runs: dict[str, list[dict[str, Any]]] = {spec.key: [] for spec in SERVERS}
    for round_ in range(1, args.rounds + 1):
        for spec in SERVERS:
            figures = once(spec, args.count, args.concurrency, log)
            runs[spec.key].append(figures)
            print(
                f"round {round_}  {spec.label:<40} {figures['rps']:>8.0f} sends/s"
                f"  (server CPU {figures['server_cpu_share']:.0%},"
                f" others {figures['foreign_cores']:.2f} cores)",
                flush=True,
            )
    rps = {key: statistics.median(run["rps"] for run in runs[key]) for key in runs}
    print(f"\nblocking sends/s, median of {args.rounds}, concurrency {args.concurrency}:")
    for spec in SERVERS:
        ratio = rps[spec.key] / rps["sdk"]
        print(f"  {spec.label:<40} {rps[spec.key]:>8.0f}  ({ratio:.1f} times the SDK server)")


if __name__ == "__main__":
    main()
