"""Replicas on this machine: blocking sends per second and streamed events per second
through `parley serve --workers N` (the echo agent of `benchmarks/servers/parley_echo.py`,
PostgreSQL as the shared store, Redis as the bus), N = 1, 2, 3, and one process without
the bus, in one run.

    python -m benchmarks.replicas                  # 3 rounds
    python -m benchmarks.replicas --rounds 1 --scale 0.2

Each variant starts a fresh server (its own PostgreSQL schema and bus prefix), warms it
up, then runs the load client of `benchmarks.server_load` (a bare asyncio HTTP/1.1 client,
16 connections): `send` (blocking SendMessage, `SENDS`) and `streams` (SendStreamingMessage
of 100 chunks each, `STREAMS`). Everything shares the machine's 2 cores: the workers, the
load client, PostgreSQL and Redis. The figures are the medians of the rounds.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

from benchmarks.bus import clean

ROOT = Path(__file__).resolve().parent.parent
POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
REDIS = "redis://127.0.0.1:6379/0"
SENDS = 4000
STREAMS = 200
VARIANTS = ("1, no bus", "1", "2", "3")


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _admin(statement: str) -> None:
    import asyncio  # noqa: PLC0415

    import asyncpg  # noqa: PLC0415

    async def run() -> None:
        connection = await asyncpg.connect(POSTGRES)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(run())


def _serve(variant: str, port: int, schema: str, prefix: str) -> subprocess.Popen[bytes]:
    workers = variant.split(",", maxsplit=1)[0]
    command = [sys.executable, "-m", "parley.cli", "serve"]
    command += ["benchmarks.servers.parley_echo:agent", "--port", str(port)]
    command += ["--store", f"{POSTGRES}?schema={schema}", "--workers", workers]
    command += ["--log-level", "warning", "--no-push"]
    if "no bus" not in variant:
        command += ["--bus", f"{REDIS}?prefix={prefix}"]
    return subprocess.Popen(command, cwd=ROOT)


def _load(command: str, port: int, count: int) -> dict[str, float]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.server_load",
            command,
            "--port",
            str(port),
            "--count",
            str(count),
            "--concurrency",
            "16",
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def _measure(variant: str, scale: float) -> dict[str, float]:
    port, name = _port(), uuid.uuid4().hex[:8]
    schema, prefix = f"bench_replicas_{name}", f"parley-bench-{name}"
    _admin(f'CREATE SCHEMA "{schema}"')
    server = _serve(variant, port, schema, prefix)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError(f"{variant}: the server did not start") from None
                time.sleep(0.1)
        _load("send", port, 200)  # warm up every worker
        sends = _load("send", port, max(16, round(SENDS * scale)))
        streams = _load("streams", port, max(16, round(STREAMS * scale)))
        return {"sends_per_s": sends["rps"], "events_per_s": streams["eps"]}
    finally:
        server.terminate()
        server.wait(30)
        clean(prefix)
        _admin(f'DROP SCHEMA "{schema}" CASCADE')


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args(argv)
    found: dict[str, list[dict[str, float]]] = {}
    for number in range(args.rounds):
        for variant in VARIANTS:
            result = _measure(variant, args.scale)
            found.setdefault(variant, []).append(result)
            print(
                f"  round {number + 1} workers {variant:<9} {result['sends_per_s']:8,.0f} sends/s"
                f" {result['events_per_s']:9,.0f} streamed events/s",
                flush=True,
            )
    print(f"\n| workers | blocking sends/s | streamed events/s |  (medians of {args.rounds})")
    print("|---|---|---|")
    for variant, results in found.items():
        sends = statistics.median(each["sends_per_s"] for each in results)
        events = statistics.median(each["events_per_s"] for each in results)
        print(f"| {variant} | {sends:,.0f} | {events:,.0f} |")


if __name__ == "__main__":
    main()
