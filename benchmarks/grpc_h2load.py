"""The gRPC benchmark with a native load generator: `h2load` (nghttp2) sends the same
gRPC-framed SendMessage / SendStreamingMessage bytes to Parley's and the official SDK's gRPC
servers and to the ceiling, a bare grpc.aio server (server on core 0, h2load on core 1), so
the load generator is not the limit the Python client of `benchmarks.grpc` is for a fast
server.

    python -m benchmarks.grpc_h2load               # 3 rounds, 10 s per figure, 16 connections
    python -m benchmarks.grpc_h2load --duration 3 --rounds 1

Each round starts every server afresh, one after the other, so a slow spell of the machine
hits one round rather than one server; the report gives medians over the rounds, the
ratios of the medians and the range of the same-round ratios. Besides calls/s it gives the
server's CPU time per call or event (all its threads, from /proc), which a busy neighbour
disturbs less than throughput.

h2load counts HTTP/2 responses; a gRPC error also answers HTTP 200, so every run first makes
one call of each kind with the Python client and checks its answer (a completed task; the
stream's events, whose number converts streams/s into events/s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.grpc import _METADATA, LOAD_CORE, RESULTS, ROOT, SERVERS, _request, _server

SERVICE = "/lf.a2a.v1.A2AService/"
WARM_UP = 2.0
"""Seconds of load before each measured run (not measured)."""


def frame(message: Any) -> bytes:
    """A gRPC length-prefixed message (uncompressed)."""
    body: bytes = message.SerializeToString()
    return b"\x00" + len(body).to_bytes(4, "big") + body


def write_bodies(directory: Path) -> dict[str, Path]:
    """The gRPC-framed request of each skill (`echo`, `stream`), as files for h2load."""
    bodies = {}
    for skill in ("echo", "stream"):
        bodies[skill] = directory / f"{skill}.bin"
        bodies[skill].write_bytes(frame(_request(skill)))
    return bodies


async def _check(address: str) -> int:
    """One send and one stream with the Python client: the answers are right; the number
    of events in a stream."""
    import grpc  # noqa: PLC0415 - the bench extra
    from a2a.types import a2a_pb2_grpc  # noqa: PLC0415

    async with grpc.aio.insecure_channel(address) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        first = stub.SendMessage(_request("echo"), metadata=_METADATA, wait_for_ready=True)
        answer = await first
        assert answer.task.status.state == 3, answer  # TASK_STATE_COMPLETED
        stream = stub.SendStreamingMessage(_request("stream"), metadata=_METADATA)
        events = [event async for event in stream]
        assert events[-1].status_update.status.state == 3, events[-1]
        return len(events)


def h2load(
    address: str, method: str, body: Path, duration: float, connections: int
) -> dict[str, float]:
    command = [
        "taskset", "-c", LOAD_CORE, "h2load", "-t1", f"-c{connections}", "-m1",
        f"-D{duration:g}",
        "-H", "content-type: application/grpc", "-H", "te: trailers",
        "-H", "a2a-version: 1.0", "-d", str(body), f"http://{address}{SERVICE}{method}",
    ]  # fmt: skip
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rate = re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", output)
    done = re.search(r"requests: .* (\d+) succeeded, (\d+) failed", output)
    latency = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)", output)
    assert rate is not None, output
    assert done is not None, output
    assert latency is not None, output
    assert int(done.group(2)) == 0, output
    return {"per_s": float(rate.group(1)), "mean_latency": _ms(latency.group(3))}


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    """h2load's "812us" / "2.31ms" / "1.02s" in milliseconds."""
    match = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    assert match is not None, text
    return float(match.group(1)) * _UNITS_MS[match.group(2)]


def run(key: str, duration: float, connections: int, bodies: dict[str, Path]) -> dict[str, Any]:
    """One server, fresh: its blocking sends and streams, and its CPU time per call."""
    module, label = SERVERS[key]
    with _server(module) as served:
        events = asyncio.run(asyncio.wait_for(_check(served.address), 60))
        figures = []
        for method, body in (("SendMessage", "echo"), ("SendStreamingMessage", "stream")):
            h2load(served.address, method, bodies[body], WARM_UP, connections)
            before = served.cpu_seconds()
            figures.append(h2load(served.address, method, bodies[body], duration, connections))
            figures[-1]["cpu"] = served.cpu_seconds() - before
    send, stream = figures
    calls, streams = send["per_s"] * duration, stream["per_s"] * duration
    nothing = float("nan")  # no call ended within the run (a very slow server): no figure
    return {
        "server": label,
        "send_per_s": send["per_s"],
        "send_mean_ms": send["mean_latency"],
        "send_cpu_us": send["cpu"] * 1e6 / calls if calls else nothing,
        "streams_per_s": stream["per_s"],
        "events_per_stream": events,
        "events_per_s": stream["per_s"] * events,
        "event_cpu_us": stream["cpu"] * 1e6 / (streams * events) if streams else nothing,
    }


def _median(rounds: list[dict[str, Any]], label: str, figure: str) -> float:
    return float(statistics.median(r[figure] for r in rounds if r["server"] == label))


def report(results: list[dict[str, Any]], keys: list[str]) -> None:
    """Medians over the rounds per server, then Parley's ratios (of medians, and the
    range of the same-round ratios)."""
    labels = [SERVERS[key][1] for key in keys]
    print(f"\nmedians of {len(results) // len(keys)} rounds")
    print(f"{'server':<10} {'send/s':>8} {'µs CPU/send':>12} {'events/s':>9} {'µs CPU/event':>13}")
    for label in labels:
        print(
            f"{label:<10} {_median(results, label, 'send_per_s'):>8.0f}"
            f" {_median(results, label, 'send_cpu_us'):>12.0f}"
            f" {_median(results, label, 'events_per_s'):>9.0f}"
            f" {_median(results, label, 'event_cpu_us'):>13.1f}"
        )
    rounds = [results[i : i + len(keys)] for i in range(0, len(results), len(keys))]
    for other, name in (("a2a-sdk", "Parley/SDK"), ("ceiling", "Parley/ceiling")):
        if other not in labels or "Parley" not in labels:
            continue
        line = []
        for figure in ("send_per_s", "events_per_s"):
            median = _median(results, "Parley", figure) / _median(results, other, figure)
            each = [
                next(r for r in batch if r["server"] == "Parley")[figure]
                / next(r for r in batch if r["server"] == other)[figure]
                for batch in rounds
            ]
            line.append(f"{median:.2f}x (rounds {min(each):.2f}-{max(each):.2f})")
        print(f"{name}: blocking send {line[0]}, streaming {line[1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per figure")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="each server once per round")
    parser.add_argument("--only", nargs="+", choices=list(SERVERS), default=list(SERVERS))
    arguments = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as directory:
        bodies = write_bodies(Path(directory))
        for number in range(1, arguments.rounds + 1):
            print(f"round {number}", flush=True)
            for key in arguments.only:
                figures = run(key, arguments.duration, arguments.connections, bodies)
                print(
                    f"  {figures['server']:<8} send {figures['send_per_s']:>7.0f}/s"
                    f" ({figures['send_cpu_us']:.0f} µs CPU)"
                    f"  stream {figures['events_per_s']:>7.0f} events/s"
                    f" ({figures['event_cpu_us']:.1f} µs CPU)",
                    flush=True,
                )
                results.append(figures)
    report(results, arguments.only)
    RESULTS.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = RESULTS / f"grpc-h2load-{stamp}.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"raw numbers: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
