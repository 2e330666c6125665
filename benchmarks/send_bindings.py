"""Instructions per blocking send, straight into the ASGI app (no HTTP server, the memory
store, the echo agent of `benchmarks/servers/parley_echo.py`), beside the bare ASGI app
(`benchmarks/servers/raw_asgi.py`, the ceiling) answering the same request, on every HTTP
binding and version, counted under valgrind's callgrind. The ratio of the two counts is
the in-process part of the "blocking send" target (uvicorn and httptools cost both the
same on top). The event loop is uvloop's, as the servers run. Run it on two checkouts to
compare a change with the code before it:

    python -m benchmarks.send_bindings                          # instructions per send
    python -m benchmarks.send_bindings --src OTHER_CHECKOUT/src
    python -m benchmarks.send_bindings --profile jsonrpc-1.0    # cProfile of Parley's
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import uvloop

from benchmarks.timing import callgrind_total

ROOT = Path(__file__).resolve().parent.parent
_MESSAGE = b'{"messageId":"m-%d","role":"ROLE_USER","parts":[{"text":"hello"}]}'
_MESSAGE_03 = (
    b'{"kind":"message","messageId":"m-%d","role":"user","parts":[{"kind":"text","text":"hello"}]}'
)
_MESSAGE_03_REST = b'{"messageId":"m-%d","role":"ROLE_USER","content":[{"text":"hello"}]}'
CALLS: dict[str, tuple[bytes, bytes, bytes]] = {
    # name: (path, A2A-Version, body with %s for the message)
    "jsonrpc-1.0": (
        b"/", b"1.0",
        b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":%s}}',
    ),
    "jsonrpc-0.3": (
        b"/", b"",
        b'{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":%s}}',
    ),
    "rest-1.0": (b"/message:send", b"1.0", b'{"message":%s}'),
    "rest-0.3": (b"/v1/message:send", b"", b'{"message":%s}'),
}  # fmt: skip
COUNT = 200
"""Sends of the smaller callgrind run (the larger makes twice as many)."""


def _app(server: str) -> Any:
    if server == "raw":
        from benchmarks.servers.raw_asgi import app  # noqa: PLC0415

        return app
    from benchmarks.servers.parley_echo import app  # noqa: PLC0415 - from --src's checkout

    return app


async def _workload(server: str, call: str, count: int) -> None:
    app = _app(server)
    startup = getattr(app, "router", None)
    service = getattr(sys.modules.get("benchmarks.servers.parley_echo"), "service", None)
    if service is not None:
        await service.startup()
    for number in range(count + 1):  # the first: warm-up
        await _send(app, call, number)
    if service is not None:
        await service.shutdown()
    del startup


def _message(call: str, number: int) -> bytes:
    if call == "jsonrpc-0.3":
        return _MESSAGE_03 % number
    return (_MESSAGE_03_REST if call == "rest-0.3" else _MESSAGE) % number


async def _send(app: Any, call: str, number: int) -> None:
    path, version, body = CALLS[call]
    body %= _message(call, number)
    headers = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
    if version:
        headers.append((b"a2a-version", version))
    headers.append((b"content-length", str(len(body)).encode()))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": path.decode(), "raw_path": path, "root_path": "",
        "query_string": b"", "headers": headers,
        "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 50000),
    }  # fmt: skip
    sent: list[MutableMapping[str, Any]] = []
    incoming = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> MutableMapping[str, Any]:
        return incoming.pop() if incoming else {"type": "http.disconnect"}

    async def reply(out: MutableMapping[str, Any]) -> None:
        sent.append(out)

    await app(scope, receive, reply)
    answer = b"".join(m.get("body", b"") for m in sent[1:])
    if sent[0]["status"] != 200 or b"hello" not in answer or b"rror" in answer:
        raise RuntimeError(f"{call} send failed: {sent[:2]}")


def _callgrind(src: str, server: str, call: str, count: int) -> int:
    return callgrind_total(
        "benchmarks.send_bindings", src, "--run", server, "--call", call, "--count", str(count)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src folder")
    parser.add_argument("--calls", nargs="+", choices=CALLS, default=list(CALLS))
    parser.add_argument("--profile", choices=CALLS, help="cProfile Parley's sends of one call")
    parser.add_argument("--run", choices=("parley", "raw"), help=argparse.SUPPRESS)
    parser.add_argument("--call", choices=CALLS, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=COUNT, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.run:
        uvloop.run(_workload(arguments.run, arguments.call, arguments.count))
        return
    if arguments.profile:
        sys.path.insert(0, arguments.src)
        profiler = cProfile.Profile()
        profiler.runcall(uvloop.run, _workload("parley", arguments.profile, 5000))
        pstats.Stats(profiler).sort_stats("tottime").print_stats(40)
        return
    print(f"Instructions per blocking send, in process ({arguments.src}):")
    for call in arguments.calls:
        counts = {}
        for server in ("parley", "raw"):
            small = _callgrind(arguments.src, server, call, COUNT)
            large = _callgrind(arguments.src, server, call, 2 * COUNT)
            counts[server] = (large - small) / COUNT
        ratio = counts["raw"] / counts["parley"]
        print(
            f"  {call:12} Parley {counts['parley']:>9,.0f}   raw {counts['raw']:>9,.0f}"
            f"   raw/Parley x{ratio:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
