"""The performance targets in one run: Parley beside the bare ASGI app (the ceiling) on
every HTTP binding and version, beside a bare grpc.aio server over gRPC, and beside the
official a2a-sdk where it serves the same call; medians of interleaved rounds.

    python -m benchmarks.targets            # about 11 minutes
    python -m benchmarks.targets --quick    # 2 s runs, fewer streams

Each round runs every workload on a fresh server of each kind, one after the other (the
order of the servers turns each round), so a slow spell of the machine hits one round of
every server rather than one server. Servers on core 0, the load (wrk, the asyncio client
of `benchmarks.server_load`, the gRPC client) on core 1, as in `benchmarks.server`.

- blocking send and streaming (100 chunks, 103 events) at 16 connections, JSON-RPC and
  HTTP+JSON, A2A 0.3 and 1.0, each server answering the same bytes (`raw_asgi`'s dialects);
- send + get: a non-blocking send, then GetTask of its task (1.0 JSON-RPC, `sendget.lua`);
- KiB per open stream, bytes per stored task (VmRSS), with the tracemalloc accounting;
- cold start: spawn to the first answer, every spawn of the run (and `parley serve`);
- gRPC blocking send and streaming against `raw_grpc` (h2load when installed, else the
  Python client of `benchmarks.grpc`, which limits the ceiling: the shares are then high).

The table is printed and written with the raw figures to benchmarks/results/targets-*.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import server as bench
from benchmarks import targets_memory as memory
from benchmarks.guard import CLI, cli_cold_start, compiled
from benchmarks.server import RESULTS, Monitor, ServerSpec, parse_wrk, serving

SPECS = {spec.key: spec for spec in bench.SERVERS}
PARLEY, CEILING, SDK = SPECS["parley"], SPECS["raw"], SPECS["sdk"]
EVENTS = 103
"""Events in one stream of the `stream` skill: the task, working, 100 chunks, completed."""


def _message(version: str, rest: bool, skill: str | None) -> dict[str, Any]:
    if version == "0.3" and not rest:
        message: dict[str, Any] = {"kind": "message", "messageId": "m-1", "role": "user"}
        message["parts"] = [{"kind": "text", "text": "hello"}]
    else:
        message = {"messageId": "m-1", "role": "ROLE_USER"}
        message["content" if version == "0.3" else "parts"] = [{"text": "hello"}]
    if skill is not None:
        message["metadata"] = {"skill": skill}
    return message


@dataclass(frozen=True)
class Workload:
    key: str
    label: str
    path: str
    version: str
    body: str
    stream: bool
    script: str = "a2a.lua"
    sdk: bool = False

    @property
    def env(self) -> dict[str, str]:
        version = self.version if self.version != "0.3" else ""
        return {"BENCH_PATH": self.path, "BENCH_BODY": self.body, "BENCH_VERSION": version}


def _workload(binding: str, version: str, stream: bool) -> Workload:
    rest = binding == "REST"
    params: dict[str, Any] = {"message": _message(version, rest, "stream" if stream else None)}
    body: dict[str, Any]
    if rest:
        prefix = "/v1" if version == "0.3" else ""
        path, body = f"{prefix}/message:{'stream' if stream else 'send'}", params
    else:
        names = ("message/stream", "message/send") if version == "0.3" else (
            "SendStreamingMessage", "SendMessage")  # fmt: skip
        method = names[0] if stream else names[1]
        path, body = "/", {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    kind = "streaming" if stream else "blocking send"
    return Workload(
        key=f"{'stream' if stream else 'send'} {binding} {version}",
        label=f"{kind}, {'HTTP+JSON' if rest else 'JSON-RPC'} {version}",
        path=path,
        version=version,
        body=json.dumps(body, separators=(",", ":")),
        stream=stream,
        sdk=not rest and version == "1.0",
    )


WORKLOADS = (
    *(_workload(b, v, False) for b in ("JSON-RPC", "REST") for v in ("1.0", "0.3")),
    *(_workload(b, v, True) for b in ("JSON-RPC", "REST") for v in ("1.0", "0.3")),
    Workload("send+get", "send + get, JSON-RPC 1.0", "/", "1.0", "", False, "sendget.lua"),
)


@dataclass(frozen=True)
class Config:
    rounds: int = 3
    duration: int = 5
    warmup: int = 1
    connections: int = 16
    cli_spawns: int = 3
    grpc_duration: float = 5.0
    memory: memory.Levels = field(default_factory=memory.Levels)

    @classmethod
    def quick(cls) -> Config:
        return cls(duration=2, cli_spawns=1, grpc_duration=2.0, memory=memory.Levels.quick())


# ------------------------------------------------------------------------------ HTTP


def check(port: int, workload: Workload) -> None:
    """One request: the answer is a success of the right shape (wrk counts any 200)."""
    if workload.script == "sendget.lua":
        return  # its sends are checked by wrk's script (a GetTask follows each answered id)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"}
    if workload.version != "0.3":
        headers["A2A-Version"] = workload.version
    try:
        connection.request("POST", workload.path, workload.body, headers)
        answer = connection.getresponse()
        body = answer.read()
    finally:
        connection.close()
    events = body.count(b"\ndata: ") + body.startswith(b"data: ")
    wrong = answer.status != 200 or b'"error"' in body or b'"code"' in body[:20]
    if wrong or (workload.stream and events != EVENTS):
        raise RuntimeError(f"{workload.key}: HTTP {answer.status}, {events} events: {body[:300]!r}")


def wrk(url: str, workload: Workload, connections: int, seconds: int) -> dict[str, Any]:
    command = bench.wrk_command(url, workload.script, connections, seconds)
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, env={**os.environ, **workload.env}
    )
    return parse_wrk(done.stdout)


def http_once(spec: ServerSpec, workload: Workload, config: Config, log: Path) -> dict[str, Any]:
    """A fresh server: check, warm up, then the timed wrk run."""
    with serving(spec, log) as server:
        check(server.port, workload)
        wrk(server.url, workload, config.connections, config.warmup)
        with Monitor(server.process.pid) as monitor:
            figures = wrk(server.url, workload, config.connections, config.duration)
    if figures["non_2xx"] or figures["socket_errors"]:
        raise RuntimeError(f"{spec.label} {workload.key}: errors under load: {figures}")
    rate = figures["rps"] * (EVENTS if workload.stream else 1)
    if workload.script == "sendget.lua":
        rate = figures["rps"] / 2
    return {"rate": rate, **figures, **monitor.figures, "cold_start_ms": server.cold_start_ms}


# ------------------------------------------------------------------------------ gRPC


def grpc_once(key: str, duration: float, bodies: dict[str, Path] | None) -> dict[str, float]:
    """Calls/s and events/s of one fresh gRPC server (h2load, or the Python client)."""
    if bodies is not None:
        from benchmarks import grpc_h2load  # noqa: PLC0415

        figures = grpc_h2load.run(key, duration, 16, bodies)
        return {"send": figures["send_per_s"], "stream": figures["events_per_s"]}
    from benchmarks import grpc  # noqa: PLC0415

    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {int(bench.LOAD_CORE)})
    try:
        result = grpc.run_server(key, duration, 16)
    finally:
        os.sched_setaffinity(0, affinity)
    return {"send": result.send_per_s, "stream": result.stream_events_per_s}


# ---------------------------------------------------------------------------- the run


@dataclass
class Run:
    config: Config
    log: Path
    http: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    grpc: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    cold: dict[str, list[float]] = field(default_factory=dict)
    memory: dict[str, dict[str, Any]] = field(default_factory=dict)
    grpc_load: str = "h2load" if shutil.which("h2load") else "Python grpc.aio client"

    def _turned(self, keys: list[str], number: int) -> list[str]:
        return keys[number % len(keys) :] + keys[: number % len(keys)]

    def http_round(self, number: int) -> None:
        for workload in WORKLOADS:
            keys = [PARLEY.key, CEILING.key] + ([SDK.key] if workload.sdk else [])
            for key in self._turned(keys, number):
                figures = http_once(SPECS[key], workload, self.config, self.log)
                self.cold.setdefault(key, []).append(figures.pop("cold_start_ms"))
                self.http.setdefault(workload.key, {}).setdefault(key, []).append(figures)
                print(
                    f"  {workload.key:<18} {SPECS[key].label:<9} {figures['rate']:>9.0f}/s"
                    f"  (others {figures['foreign_cores']:.2f} cores)",
                    flush=True,
                )
        for _ in range(self.config.cli_spawns):
            self.cold.setdefault(CLI, []).append(cli_cold_start(self.log))

    def grpc_round(self, number: int, bodies: dict[str, Path] | None) -> None:
        for key in self._turned(["parley", "raw", "sdk"], number):
            figures = grpc_once(key, self.config.grpc_duration, bodies)
            self.grpc.setdefault(key, []).append(figures)
            send, stream = figures["send"], figures["stream"]
            print(
                f"  gRPC {key:<7} send {send:>7.0f}/s  stream {stream:>7.0f} events/s", flush=True
            )

    def memory_round(self) -> None:
        for spec in (PARLEY, CEILING):
            figures = memory.measure(spec, self.config.memory, self.log)
            self.cold.setdefault(spec.key, []).extend(figures.pop("cold_start_ms"))
            self.memory[spec.key] = figures
            print(f"  memory {spec.label}: {figures['kib_per_stream']:.1f} KiB/stream,"
                  f" {figures['bytes_per_task']:.0f} B/task", flush=True)  # fmt: skip


def execute(config: Config, log: Path, parts: set[str]) -> Run:
    run = Run(config, log)
    compiled()
    bench.QUIET_WAIT = 5.0  # a busy machine is reported (`others`), not waited out
    with tempfile.TemporaryDirectory() as directory:
        bodies = None
        if run.grpc_load == "h2load":
            from benchmarks import grpc_h2load  # noqa: PLC0415

            bodies = grpc_h2load.write_bodies(Path(directory))
        for number in range(config.rounds):
            print(f"round {number + 1} of {config.rounds}", flush=True)
            if "http" in parts:
                run.http_round(number)
            if "grpc" in parts:
                run.grpc_round(number, bodies)
    if "memory" in parts:
        run.memory_round()
    return run


# ------------------------------------------------------------------------------ report

Row = tuple[str, float, float, float | None, str, bool | None, str]
"""(figure, Parley, ceiling, Parley/SDK or None, ratio text, met or None, target text)"""


def _ratio_row(
    label: str, figures: dict[str, list[dict[str, Any]]], name: str, target: float
) -> Row:
    ours = statistics.median(f[name] for f in figures[PARLEY.key])
    ceiling = statistics.median(f[name] for f in figures[CEILING.key])
    rounds = [
        p[name] / c[name] for p, c in zip(figures[PARLEY.key], figures[CEILING.key], strict=True)
    ]
    sdk = None
    if SDK.key in figures:  # none when no SDK stream ended within a run: no ratio
        sdk = ours / max(statistics.median(f[name] for f in figures[SDK.key]), 1e-9)
    text = f"x{ours / ceiling:.2f} ({min(rounds):.2f}-{max(rounds):.2f})"
    return label, ours, ceiling, sdk, text, ours / ceiling >= target, f">= x{target:.2f}"


def rows(run: Run) -> list[Row]:
    table: list[Row] = []
    for workload in WORKLOADS if run.http else ():
        target = 0.75 if workload.stream else 0.45 if workload.key == "send+get" else 0.60
        unit = (
            " events/s"
            if workload.stream
            else " pairs/s"
            if workload.key == "send+get"
            else " req/s"
        )
        table.append(_ratio_row(workload.label + unit, run.http[workload.key], "rate", target))
    if run.memory:
        parley, bare = run.memory[PARLEY.key], run.memory[CEILING.key]
        stream, task = float(parley["kib_per_stream"]), float(parley["bytes_per_task"])
        ceiling_stream, ceiling_task = float(bare["kib_per_stream"]), float(bare["bytes_per_task"])
        table.append(("KiB per open stream", stream, ceiling_stream, None,
                      f"x{stream / ceiling_stream:.2f}", stream <= 20, "<= 20 KiB"))  # fmt: skip
        table.append(("bytes per stored task", task, ceiling_task, None,
                      f"x{task / ceiling_task:.2f}", task <= 1024, "<= 1 KiB"))  # fmt: skip
    if run.cold:
        spawned = statistics.median(run.cold[CEILING.key])
        for key, label in (
            (PARLEY.key, "cold start ms, app"),
            (CLI, "cold start ms, parley serve"),
        ):
            if key in run.cold:
                start = statistics.median(run.cold[key])
                table.append((label, start, spawned, None, f"x{start / spawned:.2f}",
                              start / spawned <= 1.5, "<= x1.50"))  # fmt: skip
    if run.grpc:
        table.append(_ratio_row("gRPC blocking send calls/s", run.grpc, "send", 0.80))
        table.append(_ratio_row("gRPC streaming events/s", run.grpc, "stream", 0.90))
    return table


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def render(run: Run) -> str:
    lines = [
        "| Figure | Parley | ceiling | Parley / ceiling (rounds) | target | | Parley / SDK |",
        "|---|---:|---:|---|---|---|---:|",
    ]
    for label, ours, ceiling, sdk, ratio, met, target in rows(run):
        verdict = "met" if met else "**missed**"
        sdk_text = f"x{sdk:.1f}" if sdk is not None and sdk < 1e6 else ""
        cells = [label, _fmt(ours), _fmt(ceiling), ratio, target, verdict, sdk_text]
        lines.append("| " + " | ".join(cells) + " |")
    others = [f["foreign_cores"] for by in run.http.values() for fs in by.values() for f in fs]
    config = run.config
    notes = [
        f"\nMedians of {config.rounds} interleaved rounds, {config.duration} s per run,"
        f" {config.connections} connections; gRPC load: {run.grpc_load}."
    ]
    if others:
        notes.append(f"Other processes took up to {max(others):.2f} cores during a timed HTTP run"
                     f" (median {statistics.median(others):.2f}).")  # fmt: skip
    for key, unit in (("traced_stream", "open stream"), ("traced_task", "stored task")):
        for spec in (PARLEY, CEILING):
            if spec.key in run.memory:
                notes.append("\n" + memory.breakdown(spec.label, run.memory[spec.key][key], unit))
    return "\n".join(lines + notes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="2 s runs, fewer streams and tasks")
    parser.add_argument("--rounds", type=int, help="rounds (at least 3 for the acceptance)")
    parser.add_argument(
        "--only", nargs="+", choices=("http", "grpc", "memory"), default=("http", "grpc", "memory")
    )
    parser.add_argument("--src", help="serve Parley from this src/ (another checkout)")
    args = parser.parse_args(argv)
    if args.src:  # the servers are children: they import Parley from here first
        os.environ["PYTHONPATH"] = str(Path(args.src).resolve())
    config = Config.quick() if args.quick else Config()
    if args.rounds:
        config = Config(**{**config.__dict__, "rounds": args.rounds})
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    log = RESULTS / f"targets-{stamp}.log"
    run = execute(config, log, set(args.only))
    table = render(run)
    machine = bench._machine()
    changed = machine["uncommitted_src_changes"]
    header = f"Targets run {stamp}{' (quick)' if args.quick else ''}"
    header += f", commit {machine['commit'][:10]} ({changed} uncommitted files under src/)"
    header += f", {machine['cpu']}"
    if args.src:
        served = subprocess.run(
            ["git", "-C", args.src, "rev-parse", "--short", "HEAD"],
            check=False,
            capture_output=True,
            text=True,
        )
        header += f"; Parley served from another checkout at {served.stdout.strip() or '?'}"
    print("\n" + header + "\n\n" + table)
    (RESULTS / f"targets-{stamp}.md").write_text(header + "\n\n" + table + "\n")
    raw = {"config": repr(config), "machine": machine, "http": run.http, "grpc": run.grpc,
           "cold_start_ms": run.cold, "memory": run.memory}  # fmt: skip
    (RESULTS / f"targets-{stamp}.json").write_text(json.dumps(raw, indent=1))
    print(f"\nwritten: benchmarks/results/targets-{stamp}.md (and .json, .log)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
