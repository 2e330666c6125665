"""The servers the server benchmark runs side by side, each a module exposing an ASGI `app`:

- `parley_echo`: the echo agent (plus a 100-chunk streamer and a waiter) on Parley;
- `sdk_echo`: the same three agents on the official a2a-sdk server;
- `raw_asgi`: the ceiling — a bare ASGI app that parses the same JSON-RPC body and answers
  a same-sized Task (or 100 same-sized SSE events) with no A2A machinery.

Run one with `uvicorn benchmarks.servers.X:app --loop uvloop --http httptools --workers 1`.
Every agent is chosen by message metadata `{"skill": "echo" | "stream" | "wait"}`.

With `BENCH_GC_STATS=1` in the environment, `app` also answers `GET /_bench/gc` with the
garbage collector's figures (the benchmark turns it on for its memory and profile runs
only, so the timed runs serve the bare app).
"""

from __future__ import annotations

import gc
import json
import os
import time
from typing import Any

STREAM_CHUNKS = 100
"""How many chunks the streaming agent yields."""

SKILLS = ("echo", "stream", "wait")

GC_STATS_PATH = "/_bench/gc"


def instrumented(app: Any) -> Any:
    """`app`, or with BENCH_GC_STATS=1, `app` plus GET /_bench/gc: collections, seconds
    spent and longest pause per generation since start, and the GC-tracked objects now."""
    if not os.environ.get("BENCH_GC_STATS"):
        return app
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

    async def probe(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == GC_STATS_PATH:
            figures = {"generations": stats, "tracked_objects": len(gc.get_objects())}
            body = json.dumps(figures).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return probe
