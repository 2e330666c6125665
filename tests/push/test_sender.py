"""How a delivery reaches a webhook (`parley.server.push.sender`), against a scripted TCP
receiver on 127.0.0.1: the request as sent (method, Host, Content-Length, body), only a
bounded prefix of the answer read, informational answers skipped, the deadline for the
answer's head (R-PUSH-15), and each way of failing as a SendError that names no header
value (R-OPS-13)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from ipaddress import ip_address

import pytest

from parley.server.push.sender import Answer, SendError, send_pinned, webhook_client
from parley.server.push.ssrf import Allow, CheckedTarget, check_url
from tests.server.support import run

Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
LOCAL = Allow(["127.0.0.1"])


def pinned(port: int, path: str = "/hook?x=1") -> CheckedTarget:
    target = check_url(f"http://127.0.0.1:{port}{path}", allow=LOCAL)
    return CheckedTarget(target, ip_address("127.0.0.1"), port)


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return head, await reader.readexactly(length)


class Receiver:
    """Runs `serve` for each connection; keeps what it read."""

    def __init__(self, serve: Serve) -> None:
        self.serve = serve
        self.port = 0
        self.handlers: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Receiver:
        self._server = await asyncio.start_server(self._run, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        for handler in self.handlers:  # a handler still going is this test's to end
            handler.cancel()
        await asyncio.gather(*self.handlers, return_exceptions=True)
        await self._server.wait_closed()

    async def _run(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = asyncio.current_task()
        assert handler is not None
        self.handlers.add(handler)
        try:
            await self.serve(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


def answering(answer: bytes, receiver_requests: list[tuple[bytes, bytes]]) -> Serve:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        receiver_requests.append(await read_request(reader))
        writer.write(answer)
        await writer.drain()

    return serve


def exchange(answer: bytes, **kwargs: object) -> tuple[Answer, list[tuple[bytes, bytes]]]:
    """One request to a receiver answering `answer`; the answer and what it read."""
    seen: list[tuple[bytes, bytes]] = []

    async def main() -> Answer:
        async with Receiver(answering(answer, seen)) as receiver, webhook_client() as client:
            return await send_pinned(client, pinned(receiver.port), **kwargs)  # type: ignore[arg-type]

    return run(main()), seen


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"


def test_the_request_carries_host_length_headers_and_body() -> None:
    answer, seen = exchange(OK, content=b'{"task":1}', headers={"X-A2A-Notification-Token": "tok"})
    assert answer.status == 200
    assert answer.is_success
    [(head, body)] = seen
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /hook?x=1 HTTP/1.1"
    port = lines[1].removeprefix("Host: 127.0.0.1:")
    assert port.isdigit()
    assert "X-A2A-Notification-Token: tok" in lines
    assert "Content-Length: 10" in lines
    assert body == b'{"task":1}'


def test_another_method_and_an_empty_body() -> None:
    _, seen = exchange(OK, content=b"", method="PUT")
    [(head, body)] = seen
    assert head.startswith(b"PUT /hook?x=1 HTTP/1.1\r\n")
    assert b"Content-Length: 0\r\n" in head
    assert body == b""


@pytest.mark.parametrize(("read", "body"), [(0, b""), (3, b"hel"), (5, b"hello"), (99, b"hello")])
def test_only_the_asked_prefix_of_the_body_is_returned(read: int, body: bytes) -> None:
    answer, _ = exchange(OK, content=b"{}", read=read)
    assert answer.body == body


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_any_2xx_is_a_success(status: int) -> None:
    """R-PUSH-10: the receiver acknowledges with any 2xx."""
    raw = f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()
    answer, _ = exchange(raw, content=b"{}")
    assert (answer.status, answer.is_success) == (status, True)


@pytest.mark.parametrize("status", [301, 400, 410, 429, 500, 503])
def test_any_other_status_is_not_a_success_and_is_returned(status: int) -> None:
    raw = f"HTTP/1.1 {status} X\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n".encode()
    answer, _ = exchange(raw, content=b"{}")
    assert (answer.status, answer.is_success) == (status, False)
    assert (b"retry-after", b"7") in answer.headers


def test_informational_answers_are_skipped() -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n" + OK
    answer, _ = exchange(raw, content=b"{}", read=5)
    assert (answer.status, answer.body) == (200, b"hello")


def test_an_endless_body_costs_no_more_than_the_prefix() -> None:
    """A receiver streaming forever: the answer comes back with the prefix read."""

    async def endless(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        with contextlib.suppress(ConnectionError):
            while True:
                writer.write(b"400\r\n" + b"x" * 1024 + b"\r\n")
                await writer.drain()

    async def main() -> Answer:
        async with Receiver(endless) as receiver, webhook_client() as client:
            return await send_pinned(client, pinned(receiver.port), content=b"{}", read=10)

    answer = run(main())
    assert (answer.status, answer.body) == (200, b"x" * 10)


def test_no_answer_by_the_deadline_is_a_timeout() -> None:
    """R-PUSH-15: a receiver that never answers holds a delivery only until the deadline."""
    hold = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await hold.wait()

    async def main() -> None:
        async with Receiver(silent) as receiver, webhook_client(timeout=0.05) as client:
            try:
                with pytest.raises(TimeoutError):
                    await send_pinned(client, pinned(receiver.port), content=b"{}")
            finally:
                hold.set()

    run(main())


def test_a_receiver_that_closes_without_answering_is_a_send_error() -> None:
    async def rude(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    async def main() -> None:
        async with Receiver(rude) as receiver, webhook_client() as client:
            with pytest.raises(SendError):
                await send_pinned(client, pinned(receiver.port), content=b"{}")

    run(main())


def test_a_malformed_answer_is_a_send_error() -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"SMTP READY\r\n\r\n")
        await writer.drain()

    async def main() -> None:
        async with Receiver(garbage) as receiver, webhook_client() as client:
            with pytest.raises(SendError):
                await send_pinned(client, pinned(receiver.port), content=b"{}")

    run(main())


def test_nothing_listening_is_a_send_error() -> None:
    async def main() -> None:
        async with Receiver(answering(OK, [])) as receiver:
            port = receiver.port
        async with webhook_client() as client:  # the port is closed now
            with pytest.raises(SendError, match="Error"):
                await send_pinned(client, pinned(port), content=b"{}")

    run(main())


@pytest.mark.parametrize(
    "headers",
    [{"X-Token": "bad\r\nInjected: yes"}, {"Bad Name": "x"}, {"X-Token": "trailing\n"}],
)
def test_a_malformed_header_is_refused_without_quoting_it(headers: dict[str, str]) -> None:
    """Nothing is sent, and the error names no value (it may be a credential)."""
    seen: list[tuple[bytes, bytes]] = []

    async def main() -> None:
        async with Receiver(answering(OK, seen)) as receiver, webhook_client() as client:
            with pytest.raises(SendError) as caught:
                await send_pinned(client, pinned(receiver.port), content=b"{}", headers=headers)
            value = next(iter(headers.values()))
            assert value.strip() not in str(caught.value)

    run(main())
    assert seen == []


def test_the_default_tls_context_verifies_certificates() -> None:
    client = webhook_client()
    tls = client.tls
    assert tls is client.tls  # made once
    assert tls.check_hostname
    assert tls.verify_mode.name == "CERT_REQUIRED"
