"""The gRPC servicer's own paths, in process (no grpcio transport, the memory store): the
echo agent of `benchmarks.servers.parley_echo` behind `parley.grpc`'s servicer, its
`SendMessage` and `SendStreamingMessage` handlers called with the request bytes h2load
sends and a stand-in for grpc.aio's servicer context (metadata, peer, writes collected),
timed, or counted in instructions under valgrind's callgrind. What the binding adds to
the runner (metadata, negotiation, decoding, encoding, the write loop), without the
socket and grpcio's threads, which `benchmarks.grpc_instructions` counts as well.

    python -m benchmarks.grpc_paths                       # wall time per call / event
    python -m benchmarks.grpc_paths --callgrind           # instructions per call / event
    python -m benchmarks.grpc_paths --callgrind --src OTHER_CHECKOUT/src   # the same, there
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
METADATA = (
    ("user-agent", "h2load nghttp2/1.52.0"),
    ("a2a-version", "1.0"),
    ("content-length", "75"),
)
"""What h2load's calls carry, as grpc.aio hands it over."""


class _Context:
    """The parts of `grpc.aio.ServicerContext` the servicer uses on a successful call."""

    def __init__(self) -> None:
        self.written = 0

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return METADATA

    def peer(self) -> str:
        return "ipv4:127.0.0.1:50000"

    async def send_initial_metadata(self, metadata: object) -> None:
        pass

    async def write(self, message: bytes) -> None:
        self.written += 1

    async def abort_with_status(self, status: object) -> None:
        raise AssertionError(f"the call failed: {status}")


def _handlers() -> tuple[Any, Any, Any]:
    from benchmarks.servers.parley_echo import agent  # noqa: PLC0415
    from parley.grpc.servicer import A2AServicer, Settings  # noqa: PLC0415 - --src's
    from parley.protocol.negotiation import Version  # noqa: PLC0415
    from parley.server.context import authenticator_of  # noqa: PLC0415
    from parley.server.service import AgentService  # noqa: PLC0415

    service = AgentService(agent.executor(), agent.card("http://127.0.0.1:1/"))
    settings = Settings(service, authenticator_of(service, None), (Version.V1_0, Version.V0_3))
    handler = A2AServicer(settings, Version.V1_0).rpc_handler()

    def method(name: str) -> Any:
        call = type("Call", (), {"method": f"/lf.a2a.v1.A2AService/{name}"})()
        return handler.service(call)

    send = method("SendMessage").unary_unary
    stream = method("SendStreamingMessage").unary_stream
    return service, send, stream


async def _workload(sends: int, streams: int) -> dict[str, float]:
    from benchmarks.grpc import _request  # noqa: PLC0415

    service, send, stream = _handlers()
    echo = _request("echo").SerializeToString()
    streamed = _request("stream").SerializeToString()
    timings = {}
    await send(echo, _Context())  # warm-up
    started = time.perf_counter()
    for _ in range(sends):
        await send(echo, _Context())
    timings["send"] = (time.perf_counter() - started) / max(sends, 1)
    context = _Context()
    await stream(streamed, context)
    events, context.written = context.written, 0
    started = time.perf_counter()
    for _ in range(streams):
        await stream(streamed, context)
    assert context.written == events * streams, (context.written, events)
    timings["streamed event"] = (time.perf_counter() - started) / max(streams * events, 1)
    await service.shutdown()
    return timings


def _callgrind(src: str, sends: int, streams: int) -> int:
    """Instructions of one run doing `sends` sends and `streams` streams."""
    return callgrind_total(
        "benchmarks.grpc_paths", src, "--sends", str(sends), "--streams", str(streams), "--quiet"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src folder")
    parser.add_argument("--sends", type=int, default=2000)
    parser.add_argument("--streams", type=int, default=40)
    parser.add_argument("--callgrind", action="store_true", help="count instructions")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, args.src)
    if not args.callgrind:
        timings = asyncio.run(_workload(args.sends, args.streams))
        if not args.quiet:
            import parley  # noqa: PLC0415

            print(f"  parley from {Path(parley.__file__).parent.parent}")
            for name, seconds in timings.items():
                print(f"  {name:<15} {seconds * 1e6:8.1f} µs")
        return
    # Per call: the difference of two runs (n and 2n) leaves start-up out.
    for kind, count, per in (("send", 400, 1), ("streamed event", 8, 103)):
        sends, streams = (count, 0) if kind == "send" else (0, count)
        once = _callgrind(args.src, sends, streams)
        twice = _callgrind(args.src, 2 * sends, 2 * streams)
        print(f"  {kind:<15} {(twice - once) / (count * per):10,.0f} instructions", flush=True)


if __name__ == "__main__":
    main()
