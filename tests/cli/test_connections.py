"""`parley serve`'s guard against slow and greedy HTTP clients: slow headers and bodies are
answered 408, oversized headers 431, and at the connection cap idle or slow connections
make room for new ones, while requests being answered (streams) are never cut."""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from parley.asgi import build_app
from parley.cli.connection_guard import Guard
from parley.cli.connections import (
    ConnectionLimits,
    connection_cap,
    connection_limits,
    connection_options,
)
from parley.cli.main import build_parser
from parley.cli.serve import make_handler
from parley.cli.tls import http_protocol
from parley.server.agent import Agent
from parley.server.task_context import TaskContext
from tests.cli.runner import start
from tests.cli.test_serve_config import configured
from tests.cli.test_serve_hosts import SEND, V1, _wait_until_up
from tests.ports import free_port

QUICK = ConnectionLimits(max_header_bytes=8192, header_timeout=0.3, body_timeout=0.3)
PROTOCOLS = [pytest.param(HttpToolsProtocol, id="httptools"), pytest.param(H11Protocol, id="h11")]
TICK = 0.25


def ticking_agent() -> Agent:
    agent = Agent("Ticks", description="Streams a chunk every quarter second, as many as asked.")

    @agent.skill()
    async def ticks(task: TaskContext) -> AsyncIterator[str]:
        """Stream N chunks for the message N; anything else is echoed."""
        if not task.text.isdigit():
            yield task.text
            return
        for number in range(int(task.text)):
            await asyncio.sleep(TICK)
            yield f"{number} "

    return agent


@contextmanager
def serving(limits: ConnectionLimits, protocol: type[Any] = HttpToolsProtocol) -> Iterator[int]:
    """The ticking agent behind uvicorn with `protocol` guarded by `limits`; its port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    handler = make_handler(ticking_agent(), f"http://127.0.0.1:{port}", store="memory")
    config = uvicorn.Config(
        build_app(handler),
        log_config=None,
        log_level="warning",
        timeout_graceful_shutdown=1,
        **connection_options(limits, protocol),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive(), "the server did not start"
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """What the server sends until it closes (a reset counts as closed)."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def read_response(sock: socket.socket) -> bytes:
    """One response with a Content-Length."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += sock.recv(65536)
    return head


def post(body: dict[str, Any], *, method: str = "SendMessage") -> bytes:
    data = json.dumps({**body, "method": method}).encode()
    head = "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    head += f"a2a-version: 1.0\r\ncontent-length: {len(data)}\r\n\r\n"
    return head.encode() + data


def streaming(ticks: int) -> bytes:
    message = {"messageId": f"m-{ticks}", "role": "ROLE_USER", "parts": [{"text": str(ticks)}]}
    body = {"jsonrpc": "2.0", "id": 1, "params": {"message": message}}
    return post(body, method="SendStreamingMessage")


def trickle_until_answered(sock: socket.socket, line: bytes, most: int = 100) -> tuple[int, bytes]:
    """Send `line` whenever a tenth of a second passes with nothing received, until the
    server answers: (lines sent, what it sends until it closes)."""
    sock.settimeout(0.1)
    for sent in range(most):
        try:
            first = sock.recv(65536)
        except TimeoutError:
            sock.sendall(line)
            continue
        sock.settimeout(5)
        return sent, first + read_until_closed(sock)
    raise AssertionError(f"no answer after {most} lines: the trickle kept the request alive")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_headers_that_trickle_are_answered_408_and_closed(protocol: type[Any]) -> None:
    """The header timeout runs from the request's first byte: header lines that keep
    coming do not extend it."""
    with serving(QUICK, protocol) as port, connect(port) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        assert read_response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # the next request, on the same connection
        sent, answer = trickle_until_answered(sock, b"x-slow: 1\r\n")
        assert sent >= 1  # not answered at once: it waited, taking the lines
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["code"] == 408


def test_a_body_that_trickles_is_answered_408_and_the_app_sees_a_disconnect() -> None:
    """The body timeout: a body that stops short is answered 408 (not left waiting)."""
    with serving(QUICK) as port, connect(port) as sock:
        whole = post(SEND)
        sock.sendall(whole[:-10])
        answer = read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 408 ")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_oversized_headers_are_answered_431_and_closed(protocol: type[Any]) -> None:
    with serving(QUICK, protocol) as port:
        with connect(port) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: " + b"a" * 6000)
            sock.sendall(b"\r\n\r\n")
            assert read_response(sock).startswith(b"HTTP/1.1 200")
        with connect(port) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: " + b"a" * 100_000)
            answer = read_until_closed(sock)
            assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")


def test_at_the_cap_idle_and_half_sent_connections_make_room(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limits = ConnectionLimits(header_timeout=30, body_timeout=30, max_connections=20)
    with serving(limits) as port:
        held = [connect(port) for _ in range(20)]
        for number, sock in enumerate(held):
            if number % 2 == 0:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: ")  # half sent
        time.sleep(0.2)
        with caplog.at_level(logging.WARNING, "parley"):
            url = f"http://127.0.0.1:{port}"
            assert httpx.get(url + "/healthz", timeout=5).status_code == 200
            answer = httpx.post(url, json=SEND, headers=V1, timeout=5)
            assert answer.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert read_until_closed(held[0]).startswith(b"HTTP/1.1 503 ")  # the oldest
        for sock in held:
            sock.close()
    assert "1 closed at the cap" in caplog.text


def test_when_every_connection_is_answering_a_new_one_is_refused_and_streams_run_on() -> None:
    limits = ConnectionLimits(header_timeout=0.5, body_timeout=0.5, max_connections=3)
    with serving(limits) as port:
        streams = [connect(port) for _ in range(3)]
        for sock in streams:
            sock.sendall(streaming(8))  # 2 s, longer than either timeout
        for sock in streams:
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        with connect(port) as extra:
            extra.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            refused = read_until_closed(extra)
        assert refused.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        assert b"\r\nretry-after: 1\r\n" in refused
        for sock in streams:
            with sock:
                rest = read_until_closed_or_final(sock)
                assert b"7 " in rest
                assert b"TASK_STATE_COMPLETED" in rest


def read_until_closed_or_final(sock: socket.socket) -> bytes:
    """A stream's events until the terminal chunk of its chunked response."""
    received = b""
    while not received.endswith(b"0\r\n\r\n"):
        chunk = sock.recv(65536)
        assert chunk, "the stream was cut"
        received += chunk
    return received


def test_the_options_and_the_config_file_set_the_limits(tmp_path: Any) -> None:
    arguments = build_parser().parse_args(
        ["serve", "x:y", "--max-header-bytes", "4096", "--header-timeout", "2.5"]
    )
    limits = connection_limits(arguments)
    assert (limits.max_header_bytes, limits.header_timeout, limits.body_timeout) == (4096, 2.5, 60)
    text = "body-timeout = 7\nmax-connections = 50\n"
    arguments = configured(tmp_path, text, "x:y")
    assert connection_limits(arguments).body_timeout == 7
    assert connection_limits(arguments).max_connections == 50
    bad = build_parser().parse_args(["serve", "x:y", "--max-header-bytes", "10"])
    with pytest.raises(SystemExit, match="at least 1024"):
        connection_limits(bad)


def test_the_cap_stays_under_the_descriptor_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resource, "getrlimit", lambda _: (1024, 4096))
    assert connection_cap(None) == 924
    assert connection_cap(500) == 500
    assert connection_cap(5000) == 924


def test_the_guard_keeps_the_certificate_protocol() -> None:
    guarded = connection_options(QUICK, http_protocol())["http"]
    assert issubclass(guarded, Guard)
    assert issubclass(guarded, http_protocol().__mro__[1])
    assert issubclass(connection_options(QUICK)["http"], HttpToolsProtocol)


def test_parley_serve_applies_the_limits() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    options = ("--port", str(port), "--header-timeout", "0.3", "--store", "memory")
    process = start("serve", "examples.echo:agent", *options)
    try:
        _wait_until_up(url, process)
        with connect(port) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            assert read_until_closed(sock).startswith(b"HTTP/1.1 408 ")
    finally:
        process.terminate()
        process.communicate(timeout=20)
