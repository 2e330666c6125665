"""The servers the server benchmark runs side by side, each a module exposing an ASGI `app`:

- `parley_echo`: the echo agent (plus a 100-chunk streamer and a waiter) on Parley;
- `sdk_echo`: the same three agents on the official a2a-sdk server;
- `raw_asgi`: the ceiling — a bare ASGI app that parses the same JSON-RPC body and answers
  a same-sized Task (or 100 same-sized SSE events) with no A2A machinery.

Run one with `uvicorn benchmarks.servers.X:app --loop uvloop --http httptools --workers 1`.
Every agent is chosen by message metadata `{"skill": "echo" | "stream" | "wait"}`.

With `BENCH_GC_STATS=1` in the environment, `app` also answers `GET /_bench/gc` with the
garbage collector's figures (the benchmark turns it on for its memory and profile runs
only, so the timed runs serve the bare app). With `BENCH_TRACEMALLOC=1` as well, tracemalloc
runs from start and `GET /_bench/mark` remembers the heap, `GET /_bench/since?per=N` answers
what was allocated since (by line, and the GC-tracked objects by type), divided by N.
"""

from __future__ import annotations

import gc
import json
import os
import time
import tracemalloc
from collections import Counter
from typing import Any

STREAM_CHUNKS = 100
"""How many chunks the streaming agent yields."""

SKILLS = ("echo", "stream", "wait")

GC_STATS_PATH = "/_bench/gc"
MARK_PATH, SINCE_PATH = "/_bench/mark", "/_bench/since"


class HeapMark:
    """The heap at a mark (tracemalloc snapshot, GC-tracked objects by type), and what
    was added since, per unit (a stream, a task)."""

    def __init__(self) -> None:
        self.snapshot: tracemalloc.Snapshot | None = None
        self.types: Counter[str] = Counter()

    @staticmethod
    def _state() -> tuple[tracemalloc.Snapshot, Counter[str]]:
        gc.collect()
        types = Counter(type(item).__qualname__ for item in gc.get_objects())
        snapshot = tracemalloc.take_snapshot().filter_traces(
            (tracemalloc.Filter(False, tracemalloc.__file__),)
        )
        return snapshot, types

    def mark(self) -> dict[str, Any]:
        self.snapshot, self.types = self._state()
        return {"marked": True}

    def since(self, per: int, limit: int = 25) -> dict[str, Any]:
        assert self.snapshot is not None, "GET /_bench/mark first"
        snapshot, types = self._state()
        lines = snapshot.compare_to(self.snapshot, "lineno")
        added = sum(line.size_diff for line in lines)
        top = [
            {
                "where": f"{line.traceback[0].filename}:{line.traceback[0].lineno}",
                "bytes": line.size_diff / per,
                "blocks": line.count_diff / per,
            }
            for line in sorted(lines, key=lambda line: -line.size_diff)[:limit]
        ]
        grown = (types - self.types).most_common(limit)
        return {
            "bytes": added / per,
            "top": top,
            "objects": {name: count / per for name, count in grown},
        }


def instrumented(app: Any) -> Any:
    """`app`, or with BENCH_GC_STATS=1, `app` plus GET /_bench/gc: collections, seconds
    spent and longest pause per generation since start, and the GC-tracked objects now."""
    if not os.environ.get("BENCH_GC_STATS"):
        return app
    heap = HeapMark()
    if os.environ.get("BENCH_TRACEMALLOC"):
        tracemalloc.start(1)
    stats = {
        generation: {"collections": 0, "seconds": 0.0, "max_pause_ms": 0.0}
        for generation in range(3)
    }
    started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
            return
        spent = time.perf_counter() - started[0]
        entry = stats[info["generation"]]
        entry["collections"] += 1
        entry["seconds"] += spent
        entry["max_pause_ms"] = max(entry["max_pause_ms"], spent * 1000)

    gc.callbacks.append(on_gc)

    def figures(scope: dict[str, Any]) -> dict[str, Any]:
        if scope["path"] == GC_STATS_PATH:
            return {"generations": stats, "tracked_objects": len(gc.get_objects())}
        if scope["path"] == MARK_PATH:
            return heap.mark()
        query = dict(pair.partition("=")[::2] for pair in scope["query_string"].decode().split("&"))
        return heap.since(int(query.get("per") or 1), int(query.get("limit") or 25))

    async def probe(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] not in (GC_STATS_PATH, MARK_PATH, SINCE_PATH):
            await app(scope, receive, send)
            return
        body = json.dumps(figures(scope)).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return probe
