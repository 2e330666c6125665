"""The cost of `parley serve`'s connection guard (`parley.cli.connection_guard`): requests
per second of one keep-alive client sending, one after another, blocking JSON-RPC
SendMessage calls and GET /healthz to the echo agent (memory store), served by uvicorn
with uvloop + httptools, with the guard and with uvicorn's plain httptools protocol,
side by side in alternating rounds; both servers pinned to core 0, the client to core 1.

    python -m benchmarks.connections                     # 20 pairs of 2,000 requests
    python -m benchmarks.connections --rounds 5 --requests 1000
    python -m benchmarks.connections --serve PORT [--plain]   # one server (used above)
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator

SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}
HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}
SERVER_CORE, CLIENT_CORE = 0, 1


def serve(port: int, *, plain: bool) -> None:
    """The echo agent as `parley serve` builds it; `plain`: uvicorn's own protocol."""
    import uvicorn  # noqa: PLC0415 - the server extra
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # noqa: PLC0415

    from parley.cli.connections import DEFAULT_CONNECTION_LIMITS, connection_options  # noqa: PLC0415
    from parley.cli.serve import make_app  # noqa: PLC0415
    from parley.cli.targets import load_target  # noqa: PLC0415

    _pin(SERVER_CORE)
    url = f"http://127.0.0.1:{port}"
    app = make_app(load_target("examples.echo:agent"), url, "hybrid", store="memory")
    options = connection_options(DEFAULT_CONNECTION_LIMITS, HttpToolsProtocol)
    if plain:
        options = {"http": HttpToolsProtocol}
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", **options)


def _pin(core: int) -> None:
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {core})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def server(*, plain: bool) -> Iterator[int]:
    port = _free_port()
    command = [sys.executable, "-m", "benchmarks.connections", "--serve", str(port)]
    process = subprocess.Popen([*command, *(["--plain"] * plain)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                connection.request("GET", "/healthz")
                connection.getresponse().read()
                connection.close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(20)


def rate(port: int, requests: int, *, send: bool) -> float:
    """Requests per second, one after another over one keep-alive connection."""
    body = json.dumps(SEND)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    began = time.perf_counter()
    for _ in range(requests):
        if send:
            connection.request("POST", "/", body, HEADERS)
        else:
            connection.request("GET", "/healthz")
        response = connection.getresponse()
        response.read()
        assert response.status == 200, response.status
    elapsed = time.perf_counter() - began
    connection.close()
    return requests / elapsed


def compare(rounds: int, requests: int) -> None:
    """Pairs of rounds, one on each server, in alternating order; the median of each
    server's rates and of the pairs' ratios (the machine's load drifts between pairs)."""
    _pin(CLIENT_CORE)
    with server(plain=True) as plain, server(plain=False) as guarded:
        for what, send in (("SendMessage", True), ("GET /healthz", False)):
            for port in (plain, guarded):
                rate(port, requests // 4, send=send)  # warm up
            pairs = []
            for number in range(rounds):
                order = (plain, guarded) if number % 2 else (guarded, plain)
                measured = {port: rate(port, requests, send=send) for port in order}
                pairs.append((measured[plain], measured[guarded]))
            ratio = statistics.median(g / p for p, g in pairs)
            print(f"{what}: {rounds} pairs of rounds of {requests} requests")
            print(f"  plain httptools  {statistics.median(p for p, _ in pairs):>9,.0f} requests/s")
            print(f"  guarded          {statistics.median(g for _, g in pairs):>9,.0f} requests/s")
            print(f"  guarded vs plain, median of the pairs: {ratio - 1:+.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve is not None:
        serve(arguments.serve, plain=arguments.plain)
    else:
        compare(arguments.rounds, arguments.requests)


if __name__ == "__main__":
    main()
