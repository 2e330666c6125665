"""The cost of serving the A2A 1.1 draft (`parley serve --a2a-1.1-draft`) on the hot paths:
JSON-RPC `SendMessage` (blocking) and `SendStreamingMessage` (100 artifact chunks) straight
into the ASGI app (no HTTP server, the memory store), with the draft off, on (1.0
requests), and on with 1.1 requests, timed or counted in instructions under valgrind's
callgrind. Run it on two checkouts to compare with the code before it (`off` only there):

    python -m benchmarks.a2a_draft                     # µs per send / per stream
    python -m benchmarks.a2a_draft --callgrind         # instructions per send / per stream
    python -m benchmarks.a2a_draft --callgrind --src OTHER_CHECKOUT/src --modes off
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

from benchmarks.timing import callgrind_total

ROOT = Path(__file__).resolve().parent.parent
MODES = ("off", "on", "on-1.1")
PATHS = ("send", "stream")
CHUNKS = 100


async def _workload(mode: str, path: str, count: int) -> float:
    from parley.asgi import build_app  # noqa: PLC0415 - from whichever checkout --src names
    from parley.server.agent import Agent  # noqa: PLC0415
    from parley.server.service import AgentService  # noqa: PLC0415
    from parley.server.task_context import TaskContext  # noqa: PLC0415

    agent = Agent("Bench")

    @agent.skill()
    async def work(task: TaskContext) -> str | None:
        if task.text == "stream":
            for number in range(CHUNKS):
                await task.artifact(f"chunk {number}", artifact_id="s", append=number > 0)
            return None
        return "done"

    options: dict[str, Any] = {"keepalive_seconds": 0}
    if mode != "off":
        from parley.protocol.negotiation import Version  # noqa: PLC0415

        options["served_versions"] = (Version.V1_0, Version.V1_1, Version.V0_3)
    service = AgentService(agent.executor(), agent.card("http://bench"))
    app = build_app(service, **options)
    await service.startup()
    version = b"1.1" if mode == "on-1.1" else b"1.0"
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"a2a-version", version),
    ]
    call = _caller(app, headers, path)
    await call(0)  # warm-up: first-call imports and caches
    started = time.perf_counter()
    for number in range(1, count + 1):
        await call(number)
    elapsed = time.perf_counter() - started
    await service.shutdown()
    return elapsed / max(count, 1)


def _caller(app: Any, headers: list[tuple[bytes, bytes]], path: str) -> Callable[[int], Any]:
    method, text = (
        (b"SendStreamingMessage", b"stream") if path == "stream" else (b"SendMessage", b"hi")
    )

    async def call(number: int) -> None:
        body = (
            b'{"jsonrpc":"2.0","id":1,"method":"%s","params":{"message":'
            b'{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"%s"}]}}}'
            % (method, number, text)
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
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
        }
        sent: list[MutableMapping[str, Any]] = []
        incoming = [{"type": "http.request", "body": body, "more_body": False}]
        done = asyncio.Event()

        async def receive() -> MutableMapping[str, Any]:
            if incoming:
                return incoming.pop()
            await done.wait()
            return {"type": "http.disconnect"}

        async def reply(message: MutableMapping[str, Any]) -> None:
            sent.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                done.set()

        await app(scope, receive, reply)
        received = b"".join(m.get("body", b"") for m in sent[1:])
        if sent[0]["status"] != 200 or b'"result"' not in received:
            raise RuntimeError(f"call failed: {sent[:3]}")
        if path == "stream" and received.count(b"artifactUpdate") != CHUNKS:
            raise RuntimeError("a stream lost events")

    return call


def _callgrind(src: str, mode: str, path: str, count: int) -> int:
    """Instructions of one run doing `count` calls of `path` in `mode`."""
    return callgrind_total(
        "benchmarks.a2a_draft", src,
        "--modes", mode, "--paths", path, "--count", str(count), "--quiet",
    )  # fmt: skip


COUNTS = {"send": 200, "stream": 20}
"""Calls of the smaller callgrind run per path (the larger makes twice as many)."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src folder")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    parser.add_argument("--count", type=int, default=0, help="calls per path (timed runs)")
    parser.add_argument("--callgrind", action="store_true", help="count instructions")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, args.src)
    if not args.callgrind:
        for path in args.paths:
            for mode in args.modes:
                count = args.count or COUNTS[path] * 10
                seconds = asyncio.run(_workload(mode, path, count))
                if not args.quiet:
                    print(f"  {path:<6} {mode:<7} {seconds * 1e6:10.1f} µs per call", flush=True)
        return
    # Per call: the difference of two runs (n and 2n) leaves start-up out.
    for path in args.paths:
        base: float | None = None
        for mode in args.modes:
            n = COUNTS[path]
            per = (
                _callgrind(args.src, mode, path, 2 * n) - _callgrind(args.src, mode, path, n)
            ) / n
            base = per if base is None else base
            print(
                f"  {path:<6} {mode:<7} {per:12,.0f} instructions per call  ({per / base:.3f}x)",
                flush=True,
            )


if __name__ == "__main__":
    main()
