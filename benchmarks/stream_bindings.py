"""Instructions per streamed event over JSON-RPC and over HTTP+JSON (REST), straight into
the ASGI app (no HTTP server, the memory store, `SendStreamingMessage` of 100 artifact
chunks), counted under valgrind's callgrind. Run it on two checkouts to compare:

    python -m benchmarks.stream_bindings                        # instructions per event
    python -m benchmarks.stream_bindings --src OTHER_CHECKOUT/src
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from benchmarks.timing import callgrind_total

ROOT = Path(__file__).resolve().parent.parent
BINDINGS = ("jsonrpc", "rest")
CHUNKS = 100
COUNT = 10
"""Streams of the smaller callgrind run (the larger makes twice as many)."""


async def _workload(binding: str, count: int, version: str) -> None:
    from parley.asgi import build_app  # noqa: PLC0415 - from whichever checkout --src names
    from parley.server.agent import Agent  # noqa: PLC0415
    from parley.server.service import AgentService  # noqa: PLC0415
    from parley.server.task_context import TaskContext  # noqa: PLC0415

    agent = Agent("Bench")

    @agent.skill()
    async def work(task: TaskContext) -> None:
        for number in range(CHUNKS):
            await task.artifact(f"chunk {number}", artifact_id="s", append=number > 0)

    service = AgentService(agent.executor(), agent.card("http://bench"))
    app = build_app(service, keepalive_seconds=0)
    await service.startup()
    for number in range(count + 1):  # the first: warm-up
        await _call(app, binding, number, version.encode())
    await service.shutdown()


async def _call(app: Any, binding: str, number: int, version: bytes) -> None:
    message = b'{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"go"}]}' % number
    if binding == "jsonrpc":
        path = b"/"
        body = (
            b'{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":%s}}'
            % message
        )
    else:
        path = b"/message:stream"
        body = b'{"message":%s}' % message
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path.decode(),
        "raw_path": path,
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"a2a-version", version),
            (b"content-length", str(len(body)).encode()),
        ],
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

    async def reply(out: MutableMapping[str, Any]) -> None:
        sent.append(out)
        if out["type"] == "http.response.body" and not out.get("more_body"):
            done.set()

    await app(scope, receive, reply)
    received = b"".join(m.get("body", b"") for m in sent[1:])
    if sent[0]["status"] != 200 or received.count(b"artifactUpdate") != CHUNKS:
        raise RuntimeError(f"{binding} stream failed: {sent[:3]}")


def _callgrind(src: str, binding: str, count: int, version: str) -> int:
    return callgrind_total(
        "benchmarks.stream_bindings", src,
        "--run", binding, "--count", str(count), "--version", version,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src folder")
    parser.add_argument("--bindings", nargs="+", choices=BINDINGS, default=list(BINDINGS))
    parser.add_argument("--version", default="1.0", help="the A2A-Version header")
    parser.add_argument("--run", choices=BINDINGS, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=COUNT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, args.src)
    if args.run:
        asyncio.run(_workload(args.run, args.count, args.version))
        return
    # Per event: the difference of two runs (n and 2n streams) leaves start-up out.
    results: dict[str, float] = {}
    for binding in args.bindings:
        once = _callgrind(args.src, binding, COUNT, args.version)
        twice = _callgrind(args.src, binding, 2 * COUNT, args.version)
        results[binding] = (twice - once) / (COUNT * (CHUNKS + 3))
        print(f"  {binding:<8} {results[binding]:10,.0f} instructions per event", flush=True)
    if len(results) == 2:
        print(f"  jsonrpc / rest {results['jsonrpc'] / results['rest']:.3f}")


if __name__ == "__main__":
    main()
