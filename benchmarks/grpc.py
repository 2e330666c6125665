"""The gRPC benchmark: the same echo agent on Parley's gRPC server and on the official
a2a-sdk's (`benchmarks/servers/parley_grpc.py`, `sdk_grpc.py`), side by side in one run,
each server pinned to core 0 and this load generator (a `grpc.aio` client with the SDK's
generated 1.0 stubs, the same for both) to core 1.

    python -m benchmarks.grpc                   # 10 s per figure, 16 concurrent calls
    python -m benchmarks.grpc --duration 2      # a quick look
    python -m benchmarks.grpc codec             # the protobuf codec's two routes

Figures per server: blocking send (`SendMessage`, echo → COMPLETED task) calls/s with
p50/p99 latency; streaming (`SendStreamingMessage`, 100 artifact chunks) events/s. Then
the ratios Parley/SDK. `codec`: microseconds per call of the direct route and of the
reference route (JSON codec + `json_format`) for what a server does on every call.
Raw numbers go to benchmarks/results/ (git-ignored) as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
SERVER_CORE, LOAD_CORE = "0", "1"
SERVERS = {
    "parley": ("parley_grpc", "Parley"),
    "sdk": ("sdk_grpc", "a2a-sdk"),
    "raw": ("raw_grpc", "ceiling"),
}
"""The servers: Parley, the official SDK, and the ceiling (bare grpc.aio, no A2A)."""


@dataclass
class Figures:
    server: str
    send_per_s: float
    send_p50_ms: float
    send_p99_ms: float
    stream_events_per_s: float


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Served:
    """A running server: its address, and the CPU time its process (all threads) used."""

    address: str
    pid: int

    def cpu_seconds(self) -> float:
        """User + system CPU seconds so far (Linux /proc; 0 elsewhere)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def _server(module: str) -> Iterator[Served]:
    """A server subprocess on a free port, pinned to the server core when taskset exists
    (taskset execs the server: the pid is the server's)."""
    port = _free_port()
    command = [sys.executable, "-m", f"benchmarks.servers.{module}", str(port)]
    if (os.cpu_count() or 1) > 1 and not subprocess.call(
        ["which", "taskset"], stdout=subprocess.DEVNULL
    ):
        command = ["taskset", "-c", SERVER_CORE, *command]
    process = subprocess.Popen(command, cwd=ROOT)
    try:
        yield Served(f"127.0.0.1:{port}", process.pid)
    finally:
        process.terminate()
        process.wait(10)


def _request(skill: str) -> Any:
    from a2a.types import a2a_pb2 as pb  # noqa: PLC0415 - the bench extra

    message = pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text="hello")]
    )
    message.metadata.update({"skill": skill})
    return pb.SendMessageRequest(message=message)


_METADATA = (("a2a-version", "1.0"),)


async def _sends(stub: Any, deadline: float, latencies: list[float]) -> None:
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        answer = await stub.SendMessage(_request("echo"), metadata=_METADATA)
        latencies.append(time.perf_counter() - start)
        assert answer.task.status.state == 3, answer  # TASK_STATE_COMPLETED


async def _streams(stub: Any, deadline: float, counts: list[int]) -> None:
    while time.perf_counter() < deadline:
        events = 0
        async for _ in stub.SendStreamingMessage(_request("stream"), metadata=_METADATA):
            events += 1
        counts.append(events)


async def _measure(address: str, duration: float, concurrency: int) -> tuple[Any, ...]:
    import grpc  # noqa: PLC0415 - the bench extra
    from a2a.types import a2a_pb2_grpc  # noqa: PLC0415

    async with grpc.aio.insecure_channel(address) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        await stub.SendMessage(_request("echo"), metadata=_METADATA, wait_for_ready=True)
        for phase in ("warmup", "run"):
            latencies: list[float] = []
            span = min(1.0, duration) if phase == "warmup" else duration
            start = time.perf_counter()
            await asyncio.gather(
                *(_sends(stub, start + span, latencies) for _ in range(concurrency))
            )
            send_time = time.perf_counter() - start
        counts: list[int] = []
        start = time.perf_counter()
        await asyncio.gather(
            *(_streams(stub, start + duration, counts) for _ in range(concurrency))
        )
        stream_time = time.perf_counter() - start
    return latencies, send_time, counts, stream_time


def run_server(key: str, duration: float, concurrency: int) -> Figures:
    module, label = SERVERS[key]
    with _server(module) as served:
        latencies, send_time, counts, stream_time = asyncio.run(
            asyncio.wait_for(_measure(served.address, duration, concurrency), duration * 4 + 30)
        )
    ordered = sorted(latencies)
    return Figures(
        server=label,
        send_per_s=len(latencies) / send_time,
        send_p50_ms=statistics.median(ordered) * 1e3,
        send_p99_ms=ordered[int(len(ordered) * 0.99) - 1] * 1e3,
        stream_events_per_s=sum(counts) / stream_time,
    )


def servers(arguments: argparse.Namespace) -> None:
    if (os.cpu_count() or 1) > 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(LOAD_CORE)})
    results = [run_server(key, arguments.duration, arguments.concurrency) for key in arguments.only]
    print(f"{'server':<10} {'send/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'stream ev/s':>12}")
    for f in results:
        print(
            f"{f.server:<10} {f.send_per_s:>9.0f} {f.send_p50_ms:>8.2f} {f.send_p99_ms:>8.2f} "
            f"{f.stream_events_per_s:>12.0f}"
        )
    by_key = dict(zip(arguments.only, results, strict=True))
    for other, name in (("sdk", "Parley/SDK"), ("raw", "Parley/ceiling")):
        if "parley" in by_key and other in by_key:
            parley, them = by_key["parley"], by_key[other]
            print(
                f"{name}: blocking send {parley.send_per_s / them.send_per_s:.2f}x, "
                f"streaming {parley.stream_events_per_s / them.stream_events_per_s:.2f}x"
            )
    RESULTS.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = RESULTS / f"grpc-{stamp}.json"
    path.write_text(json.dumps([asdict(f) for f in results], indent=2))
    print(f"raw numbers: {path.relative_to(ROOT)}")


def codec() -> None:
    """Direct route vs reference route, per call, for a server's hot paths."""
    from benchmarks.timing import per_call_us  # noqa: PLC0415
    from parley import model as m  # noqa: PLC0415
    from parley.protocol.operations import Operation  # noqa: PLC0415
    from parley.wire.protobuf import from_json, to_json  # noqa: PLC0415
    from parley.wire.v1_0 import protobuf_codec as v10  # noqa: PLC0415

    codec, json_codec, schema = v10.CODEC, v10.SCHEMA.json, v10.SCHEMA
    user = m.Message(
        message_id="m-1", role=m.Role.USER, parts=(m.TextPart(text="hello"),), metadata={"a": 1}
    )
    reply = m.Message(message_id="m-2", role=m.Role.AGENT, parts=(m.TextPart(text="hi"),))
    now = datetime.now(UTC)
    task = m.Task(
        id="t-1",
        context_id="c-1",
        status=m.TaskStatus(state=m.TaskState.COMPLETED, message=reply, timestamp=now),
        artifacts=(m.Artifact(artifact_id="a-1", parts=(m.TextPart(text="hello"),)),),
        history=(user, reply),
    )
    event = m.TaskStatusUpdateEvent(
        task_id="t-1", context_id="c-1", status=m.TaskStatus(state=m.TaskState.WORKING)
    )
    request = m.SendMessageRequest(message=user)
    data = codec.encode_request(Operation.SEND_MESSAGE, request).SerializeToString()
    kind = schema.requests[Operation.SEND_MESSAGE]
    send = Operation.SEND_MESSAGE
    cases: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "SendMessage result (Task) → bytes": (
            lambda: codec.encode_response(send, task).SerializeToString(),
            lambda: from_json(
                json_codec.encode_response(send, task), schema.send_response
            ).SerializeToString(),
        ),
        "stream event (status) → bytes": (
            lambda: codec.encode_event(event).SerializeToString(),
            lambda: from_json(
                json_codec.encode_event(event), schema.stream_response
            ).SerializeToString(),
        ),
        "bytes → SendMessageRequest": (
            lambda: codec.decode_request(send, kind.FromString(data)),
            lambda: json_codec.decode_request(send, to_json(kind.FromString(data))),
        ),
    }
    print(f"{'1.0 protobuf codec, µs per call':<38} {'direct':>8} {'reference':>10} {'ratio':>6}")
    for name, (direct, reference) in cases.items():
        fast, slow = per_call_us(direct), per_call_us(reference)
        print(f"{name:<38} {fast:>8.1f} {slow:>10.1f} {slow / fast:>5.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", choices=["servers", "codec"], default="servers")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per figure")
    parser.add_argument("--concurrency", type=int, default=16, help="calls in flight")
    parser.add_argument("--only", nargs="+", choices=list(SERVERS), default=list(SERVERS))
    arguments = parser.parse_args()
    if arguments.what == "codec":
        codec()
    else:
        servers(arguments)


if __name__ == "__main__":
    main()
