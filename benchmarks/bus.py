"""The Redis event bus (`--bus`) against the in-process broker, in one run: what an event
costs with each, and how long an event takes to reach a stream on another replica.

    python -m benchmarks.bus                 # 5 rounds
    python -m benchmarks.bus --rounds 1 --scale 0.2

- `events`: streamed sends through `AgentService` on one replica (an agent yielding
  `EVENTS` artifact chunks, one stream at a time and 8 at once), with the in-process
  broker and with the bus (Redis on 127.0.0.1); µs per streamed event, and blocking sends
  (a send's lease and three events) per send. The store is the memory store for the
  in-process broker; for the bus, one SQLite file (replicas need a shared store), and
  the in-process broker over the same SQLite, so the ratio is the bus's own cost.
- `latency`: two replicas (two services in this process, one SQLite file, one Redis), a
  stream opened on B to a task A runs; each event carries the time A committed it, and
  the figure is when B's stream yields it, minus that: p50, p90, p99 and max over
  `LATENCY_EVENTS` events, 5 ms apart.

Each variant runs in a fresh process, in turn, each round; the figures are the medians of
the rounds. The process runs on core 0; Redis is the machine's server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REDIS = "redis://127.0.0.1:6379/0"
EVENTS = 50
STREAMS = 200
SENDS = 1000
LATENCY_EVENTS = 400
VARIANTS = ("memory", "sqlite", "sqlite+bus")


def _service(store: str, bus: str | None, skill: Any) -> Any:
    from parley.server.agent import Agent  # noqa: PLC0415
    from parley.server.redis_bus import RedisBus  # noqa: PLC0415
    from parley.server.service import AgentService  # noqa: PLC0415
    from parley.server.stores.urls import open_store  # noqa: PLC0415

    agent = Agent("Bench")
    agent.skill(name="work")(skill)
    tasks, configs = open_store(store)
    broker = None if bus is None else RedisBus(REDIS, prefix=bus)
    card = agent.card("http://bench")
    return AgentService(
        agent.executor(), card, store=tasks, push_store=configs, broker=broker, push=False
    )


def _request(text: str, number: int, *, immediate: bool = False) -> Any:
    from parley.model import (  # noqa: PLC0415
        Message,
        Role,
        SendMessageConfiguration,
        SendMessageRequest,
        TextPart,
    )

    message = Message(message_id=f"m{number}", role=Role.USER, parts=(TextPart(text=text),))
    configuration = SendMessageConfiguration(return_immediately=immediate)
    return SendMessageRequest(message=message, configuration=configuration)


async def _stream(service: Any, ctx: Any, numbers: range) -> None:
    for number in numbers:
        async for _ in service.send_streaming_message(ctx, _request("stream", number)):
            pass


async def _work(task: Any) -> Any:
    if task.text == "stream":
        for number in range(EVENTS):
            await task.artifact(f"chunk {number}", artifact_id="a", append=number > 0)
        return None
    return "done"


async def _events(store: str, bus: str | None, scale: float) -> dict[str, float]:
    from parley.server.context import CallContext  # noqa: PLC0415

    service = _service(store, bus, _work)
    await service.startup()
    ctx = CallContext()
    streams, sends = max(1, round(STREAMS * scale)), max(1, round(SENDS * scale))
    await _stream(service, ctx, range(5))  # warm up
    started = time.perf_counter()
    await _stream(service, ctx, range(streams))
    one = (time.perf_counter() - started) / (streams * EVENTS)
    share = max(1, streams // 8)
    started = time.perf_counter()
    await asyncio.gather(
        *(_stream(service, ctx, range(i * share, (i + 1) * share)) for i in range(8))
    )
    eight = (time.perf_counter() - started) / (8 * share * EVENTS)
    started = time.perf_counter()
    for number in range(sends):
        await service.send_message(ctx, _request("hi", number))
    send = (time.perf_counter() - started) / sends
    await service.shutdown()
    return {"event_us": one * 1e6, "event_8_us": eight * 1e6, "send_us": send * 1e6}


async def _latency(store: str, bus: str) -> dict[str, float]:
    from parley.model import SubscribeToTaskRequest, Task, TaskArtifactUpdateEvent  # noqa: PLC0415
    from parley.server.context import CallContext  # noqa: PLC0415

    go = asyncio.Event()

    async def work(task: Any) -> Any:
        await go.wait()
        for number in range(LATENCY_EVENTS):
            await asyncio.sleep(0.005)
            await task.artifact(f"{time.time()}", artifact_id=f"a{number}")
        return None

    a, b = _service(store, bus, work), _service(store, bus, work)
    await a.startup()
    await b.startup()
    ctx = CallContext()
    task = await a.send_message(ctx, _request("go", 0, immediate=True))
    assert isinstance(task, Task)
    delays: list[float] = []
    stream = b.subscribe_to_task(ctx, SubscribeToTaskRequest(id=task.id))
    first = True
    async for event in stream:
        if first:
            go.set()
            first = False
        if isinstance(event, TaskArtifactUpdateEvent):
            sent = float(event.artifact.parts[0].text)
            delays.append(time.time() - sent)
    await a.shutdown()
    await b.shutdown()
    delays.sort()

    def pick(q: float) -> float:
        return delays[min(len(delays) - 1, int(q * len(delays)))] * 1e3

    return {
        "p50_ms": pick(0.5),
        "p90_ms": pick(0.9),
        "p99_ms": pick(0.99),
        "max_ms": delays[-1] * 1e3,
    }


def _run(spec: dict[str, Any]) -> dict[str, float]:
    if spec["part"] == "latency":
        return asyncio.run(_latency(spec["store"], spec["bus"]))
    return asyncio.run(_events(spec["store"], spec.get("bus"), spec["scale"]))


def _measure(spec: dict[str, Any]) -> dict[str, float]:
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    command = [*pin, sys.executable, "-m", "benchmarks.bus", "--run", json.dumps(spec)]
    done = subprocess.run(command, check=False, capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise RuntimeError(f"{spec}: {done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def clean(prefix: str) -> None:
    """Delete a run's Redis keys (its bus prefix)."""
    import redis  # noqa: PLC0415

    client = redis.Redis.from_url(REDIS)
    keys = list(client.scan_iter(match=f"{prefix}:*"))
    if keys:
        client.delete(*keys)
    client.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        print(json.dumps(_run(json.loads(args.run))))
        return
    folder = Path(tempfile.mkdtemp(prefix="parley-bus-bench-"))
    results: dict[str, list[dict[str, float]]] = {}
    try:
        for number in range(args.rounds):
            for variant in (*VARIANTS, "latency"):
                prefix = f"parley-bench-{uuid.uuid4().hex[:8]}"
                store = "memory" if variant == "memory" else f"sqlite:///{folder / prefix}.db"
                spec: dict[str, Any] = {"part": "latency" if variant == "latency" else "events"}
                spec |= {"store": store, "scale": args.scale}
                if variant in ("sqlite+bus", "latency"):
                    spec["bus"] = prefix
                try:
                    result = _measure(spec)
                finally:
                    clean(prefix)
                results.setdefault(variant, []).append(result)
                shown = ", ".join(f"{name} {value:,.1f}" for name, value in result.items())
                print(f"  round {number + 1} {variant:<11} {shown}", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\nmedians of {args.rounds} rounds\n")
    for variant, found in results.items():
        names = found[0].keys()
        shown = ", ".join(f"{n} {statistics.median(r[n] for r in found):,.1f}" for n in names)
        print(f"| {variant} | {shown} |")


if __name__ == "__main__":
    main()
