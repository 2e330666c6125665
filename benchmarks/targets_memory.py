"""The memory figures of `benchmarks.targets`: per open stream and per stored task, as VmRSS
deltas (what `benchmarks.server` measures) and, on a second server started with
tracemalloc, what the heap gained per stream or task by allocating line and the
GC-tracked objects it gained by type (`benchmarks.servers.HeapMark`) — the accounting
that explains the RSS figure.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.server import ROOT, Config, Server, ServerSpec, _load, client, serving
from benchmarks.server import measure_open_streams as rss_per_stream
from benchmarks.server import measure_stored_tasks as rss_per_task


@dataclass(frozen=True)
class Levels:
    open_streams: int = 1000
    stored_tasks: int = 20_000
    traced_streams: int = 200
    traced_tasks: int = 2000

    @classmethod
    def quick(cls) -> Levels:
        return cls(open_streams=300, stored_tasks=4000, traced_streams=100, traced_tasks=1000)


def _get(server: Server, path: str) -> dict[str, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    try:
        connection.request("GET", path)
        answer: dict[str, Any] = json.loads(connection.getresponse().read())
        return answer
    finally:
        connection.close()


def _traced(spec: ServerSpec) -> ServerSpec:
    return replace(spec, env=(*spec.env, ("BENCH_TRACEMALLOC", "1")))


def trace_streams(spec: ServerSpec, count: int, log: Path) -> dict[str, Any]:
    """The heap gained per open `wait` stream (tracemalloc, GC-tracked objects)."""
    with serving(_traced(spec), log, gc_stats=True) as server:
        client(server.port, "send", 200)
        client(server.port, "ttfe", 5)
        _get(server, "/_bench/mark")
        args = [sys.executable, "-m", "benchmarks.server_load", "hold"]
        args += ["--port", str(server.port), "--count", str(count)]
        holder = subprocess.Popen(
            _load(*args), cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert holder.stdin is not None
        assert holder.stdout is not None
        opened = json.loads(holder.stdout.readline() or "{}")
        try:
            if opened.get("open") != count:
                raise RuntimeError(f"{spec.label}: could not hold the streams open: {opened}")
            return _get(server, f"/_bench/since?per={count}")
        finally:
            holder.stdin.close()
            holder.wait(timeout=60)


def trace_tasks(spec: ServerSpec, count: int, log: Path) -> dict[str, Any]:
    """The heap gained per stored task (`count` blocking sends)."""
    with serving(_traced(spec), log, gc_stats=True) as server:
        client(server.port, "send", 500)
        _get(server, "/_bench/mark")
        sent = client(server.port, "send", count, "--concurrency", "16")
        if sent["failures"]:
            raise RuntimeError(f"{spec.label}: {sent['failures']} sends failed")
        return _get(server, f"/_bench/since?per={count}")


def measure(spec: ServerSpec, levels: Levels, log: Path) -> dict[str, Any]:
    """VmRSS per open stream and per stored task, then the tracemalloc accounting."""
    config = Config(open_streams=levels.open_streams, stored_tasks=levels.stored_tasks)
    streams = rss_per_stream(spec, config, log)
    tasks = rss_per_task(spec, config, log)
    return {
        "kib_per_stream": streams["kib_per_stream"],
        "bytes_per_task": tasks["bytes_per_task"],
        "gc_objects_per_task": tasks["gc_objects_per_task"],
        "cold_start_ms": [streams["cold_start_ms"], tasks["cold_start_ms"]],
        "traced_stream": trace_streams(spec, levels.traced_streams, log),
        "traced_task": trace_tasks(spec, levels.traced_tasks, log),
    }


def _where(path: str) -> str:
    for marker in ("/site-packages/", "/src/", "/lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path.removeprefix(str(ROOT) + "/")


def breakdown(label: str, traced: dict[str, Any], unit: str, limit: int = 12) -> str:
    """A markdown table: the heap gained per `unit` by allocating line, then by type."""
    lines = [
        f"{label}: {traced['bytes']:,.0f} bytes of heap per {unit} (tracemalloc), by line:",
        "",
        "| bytes | blocks | allocated at |",
        "|---:|---:|---|",
    ]
    for entry in traced["top"][:limit]:
        lines.append(
            f"| {entry['bytes']:,.0f} | {entry['blocks']:.2f} | {_where(entry['where'])} |"
        )
    objects = [(name, count) for name, count in traced["objects"].items() if count >= 0.05]
    if objects:
        lines += ["", f"GC-tracked objects gained per {unit}: "]
        lines[-1] += ", ".join(f"{name} {count:.2f}" for name, count in objects[:limit])
    return "\n".join(lines)
