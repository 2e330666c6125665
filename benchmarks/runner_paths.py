"""The runner's own paths, in process (no HTTP, the memory store): blocking sends,
streamed events, send-then-cancel chains and question-then-reply turns (a skill that
awaits `task.ask`) through `AgentService`, timed, or counted in
instructions under valgrind's callgrind (which the machine's other work does not move).
Run it on two checkouts to compare a change with the code before it:

    python -m benchmarks.runner_paths                       # wall time per operation
    python -m benchmarks.runner_paths --callgrind           # instructions per operation
    python -m benchmarks.runner_paths --callgrind --src OTHER_CHECKOUT/src   # the same, there
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.timing import callgrind_total

ROOT = Path(__file__).resolve().parent.parent
EVENTS = 100
"""Artifact chunks per streamed task."""


def _bench_agent() -> Any:
    from parley.server.agent import Agent  # noqa: PLC0415 - from whichever checkout --src names
    from parley.server.task_context import TaskContext  # noqa: PLC0415

    agent = Agent("Bench")

    @agent.skill()
    async def work(task: TaskContext) -> str | None:
        text = task.text
        if text == "stream":
            artifact_id = "streamed"
            for number in range(EVENTS):
                await task.artifact(f"chunk {number}", artifact_id=artifact_id, append=number > 0)
            return None
        if text == "wait":
            await asyncio.sleep(60)
        if text == "ask":
            return (await task.ask("Who?")).parts[0].text
        return "done"

    return agent


async def _workload(sends: int, streams: int, chains: int, turns: int) -> dict[str, float]:
    from msgspec.structs import replace  # noqa: PLC0415

    from parley.model import (  # noqa: PLC0415 - from whichever checkout --src names
        CancelTaskRequest,
        Message,
        Role,
        SendMessageConfiguration,
        SendMessageRequest,
        Task,
        TextPart,
    )
    from parley.server.service import AgentService  # noqa: PLC0415

    agent = _bench_agent()
    service = AgentService(agent.executor(), agent.card("http://bench"))
    from parley.server.context import CallContext  # noqa: PLC0415

    ctx = CallContext()

    def request(text: str, number: int, *, immediate: bool = False) -> SendMessageRequest:
        message = Message(message_id=f"m{number}", role=Role.USER, parts=(TextPart(text=text),))
        configuration = SendMessageConfiguration(return_immediately=immediate)
        return SendMessageRequest(message=message, configuration=configuration)

    timings: dict[str, float] = {}
    started = time.perf_counter()
    for number in range(sends):
        await service.send_message(ctx, request("hi", number))
    timings["send"] = (time.perf_counter() - started) / max(sends, 1)
    started = time.perf_counter()
    for number in range(streams):
        async for _ in service.send_streaming_message(ctx, request("stream", number)):
            pass
    timings["streamed event"] = (time.perf_counter() - started) / max(streams * EVENTS, 1)
    started = time.perf_counter()
    for number in range(chains):
        task = await service.send_message(ctx, request("wait", number, immediate=True))
        assert isinstance(task, Task)
        await service.cancel_task(ctx, CancelTaskRequest(id=task.id))
    timings["send+cancel"] = (time.perf_counter() - started) / max(chains, 1)
    started = time.perf_counter()
    for number in range(turns):
        task = await service.send_message(ctx, request("ask", number))
        assert isinstance(task, Task)
        reply = request("Ada", number)
        reply = replace(reply, message=replace(reply.message, task_id=task.id))
        await service.send_message(ctx, reply)
    timings["ask+reply"] = (time.perf_counter() - started) / max(turns, 1)
    await service.shutdown()
    return timings


def _callgrind(src: str, kind: str, count: int) -> int:
    """Instructions of one run doing `count` of `kind` (and nothing of the others)."""
    counts = {"send": "0", "stream": "0", "cancel": "0", "turn": "0", kind: str(count)}
    return callgrind_total(
        "benchmarks.runner_paths", src,
        "--sends", counts["send"], "--streams", counts["stream"],
        "--chains", counts["cancel"], "--turns", counts["turn"], "--quiet",
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src folder")
    parser.add_argument("--sends", type=int, default=2000)
    parser.add_argument("--streams", type=int, default=40)
    parser.add_argument("--chains", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--callgrind", action="store_true", help="count instructions")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, args.src)
    if not args.callgrind:
        timings = asyncio.run(_workload(args.sends, args.streams, args.chains, args.turns))
        if not args.quiet:
            import parley  # noqa: PLC0415

            print(f"  parley from {Path(parley.__file__).parent.parent}")
            for name, seconds in timings.items():
                print(f"  {name:<15} {seconds * 1e6:8.1f} µs")
        return
    # Per operation: the difference of two runs (n and 2n) leaves start-up out.
    for kind, count in (("send", 400), ("stream", 8), ("cancel", 400), ("turn", 200)):
        once = _callgrind(args.src, kind, count)
        twice = _callgrind(args.src, kind, 2 * count)
        per = (twice - once) / (count * (EVENTS if kind == "stream" else 1))
        labels = {"send": "send", "stream": "streamed event", "cancel": "send+cancel"}
        label = labels.get(kind, "ask+reply")
        print(f"  {label:<15} {per:10,.0f} instructions", flush=True)


if __name__ == "__main__":
    main()
