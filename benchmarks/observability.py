"""The cost of observability on the hot paths: JSON-RPC `SendMessage` (blocking) and
`SendStreamingMessage` (100 artifact chunks over SSE) straight into the ASGI app (no HTTP
server, the memory store), timed or counted in instructions under valgrind's callgrind.

Modes: `plain` — the app `build_app` returns (what a checkout before observability can
run); `off` — the app `parley serve` serves without `--otel` and `--metrics` (only
`/readyz` in front); `on` — `parley serve --otel --metrics` with a no-op span exporter:
every span recorded and handed to an exporter that drops it, every metric aggregated.

    python -m benchmarks.observability                       # µs per operation, every mode
    python -m benchmarks.observability --callgrind           # instructions per operation
    python -m benchmarks.observability --callgrind --src OTHER_CHECKOUT/src --modes plain
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.timing import callgrind_total

ROOT = Path(__file__).resolve().parent.parent
MODES = ("plain", "off", "on")
EVENTS = 100
"""Artifact chunks per streamed task."""
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"a2a-version", b"1.0"),
]


def _app(mode: str, service: Any) -> Any:
    from parley.asgi import build_app  # noqa: PLC0415 - from whichever checkout --src names

    app = build_app(service)
    if mode == "plain":
        return app
    from parley.asgi.readiness import Readiness  # noqa: PLC0415
    from parley.server.readiness import store_probe  # noqa: PLC0415

    if mode == "on":
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: PLC0415
        from opentelemetry.sdk.trace.export import (  # noqa: PLC0415
            SimpleSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )

        from parley.observability import build, observe_app  # noqa: PLC0415

        class Dropped(SpanExporter):
            def export(self, spans: Sequence[Any]) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        telemetry = build([SimpleSpanProcessor(Dropped())], [InMemoryMetricReader()])
        app = observe_app(app, telemetry)
    return Readiness(app, {"store": store_probe(service.store)})


def _service() -> Any:
    from parley.server.agent import Agent  # noqa: PLC0415 - from whichever checkout --src names
    from parley.server.service import AgentService  # noqa: PLC0415
    from parley.server.task_context import TaskContext  # noqa: PLC0415

    agent = Agent("Bench")

    @agent.skill()
    async def work(task: TaskContext) -> str | None:
        if task.text == "stream":
            for number in range(EVENTS):
                await task.artifact(f"chunk {number}", artifact_id="s", append=number > 0)
            return None
        return task.text

    return AgentService(agent.executor(), agent.card("http://bench"))


def _caller(app: Any) -> Callable[[str, int], Any]:
    async def call(method: str, number: int) -> list[MutableMapping[str, Any]]:
        text = b"stream" if method == "SendStreamingMessage" else b"hi"
        body = (
            b'{"jsonrpc":"2.0","id":1,"method":"%s","params":{"message":'
            b'{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"%s"}]}}}'
            % (method.encode(), number, text)
        )
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/",
            "raw_path": b"/",
            "root_path": "",
            "query_string": b"",
            "headers": [*HEADERS, (b"content-length", str(len(body)).encode())],
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
        }
        sent: list[MutableMapping[str, Any]] = []
        incoming = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> MutableMapping[str, Any]:
            if incoming:
                return incoming.pop()
            await asyncio.Event().wait()  # the client stays until the response ends
            return {"type": "http.disconnect"}

        async def reply(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, reply)
        if sent[0]["status"] != 200:
            raise RuntimeError(f"{method} failed: {sent}")
        return sent

    return call


async def _workload(mode: str, sends: int, streams: int) -> dict[str, float]:
    service = _service()
    call = _caller(_app(mode, service))
    await service.startup()
    await call("SendMessage", 0)  # warm-up: first-call imports and caches
    await call("SendStreamingMessage", 0)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    for number in range(1, sends + 1):
        await call("SendMessage", number)
    timings["send"] = (time.perf_counter() - started) / max(sends, 1)
    started = time.perf_counter()
    for number in range(1, streams + 1):
        await call("SendStreamingMessage", number)
    timings["streamed event"] = (time.perf_counter() - started) / max(streams * EVENTS, 1)
    await service.shutdown()
    return timings


def _callgrind(src: str, mode: str, sends: int, streams: int) -> int:
    """Instructions of one run doing `sends` blocking sends and `streams` streams."""
    return callgrind_total(
        "benchmarks.observability", src, "--modes", mode,
        "--sends", str(sends), "--streams", str(streams), "--quiet",
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src folder")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--sends", type=int, default=2000)
    parser.add_argument("--streams", type=int, default=40)
    parser.add_argument("--callgrind", action="store_true", help="count instructions")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, args.src)
    if not args.callgrind:
        for mode in args.modes:
            timings = asyncio.run(_workload(mode, args.sends, args.streams))
            if not args.quiet:
                for name, seconds in timings.items():
                    print(f"  {mode:<6} {name:<15} {seconds * 1e6:8.1f} µs", flush=True)
        return
    # Per operation: the difference of two runs (n and 2n) leaves start-up out.
    base: dict[str, float] = {}
    for mode in args.modes:
        for name, (sends, streams) in {"send": (200, 0), "streamed event": (0, 8)}.items():
            once = _callgrind(args.src, mode, sends, streams)
            twice = _callgrind(args.src, mode, 2 * sends, 2 * streams)
            per = (twice - once) / (sends or streams * EVENTS)
            ratio = per / base.setdefault(name, per)
            print(f"  {mode:<6} {name:<15} {per:10,.0f} instructions  ({ratio:.3f}x)", flush=True)


if __name__ == "__main__":
    main()
