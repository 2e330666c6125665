"""The app around the bindings: health, lifespan, other scopes, the last-resort error
path, a client leaving while its body is read, and `build_app`'s arguments."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import parley.asgi
from parley.asgi import build_app
from parley.asgi.http import Message
from parley.protocol.negotiation import Version
from tests.asgi.fakes import FakeHandler
from tests.asgi.helpers import V1, rpc, send_params
from tests.asgi.live import running

pytestmark = pytest.mark.anyio


class Recorder:
    """A scripted `receive` and a recording `send`."""

    def __init__(self, *incoming: Message) -> None:
        self.incoming = list(incoming)
        self.sent: list[Message] = []

    async def receive(self) -> Message:
        return self.incoming.pop(0)

    async def send(self, message: Message) -> None:
        self.sent.append(message)


def http_scope(method: str, path: str, headers: list[tuple[bytes, bytes]] | None = None) -> Any:
    return {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": headers or [],
    }


async def test_health(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert (await client.post("/healthz")).status_code == 405


async def test_lifespan_calls_the_handler_hooks(handler: FakeHandler) -> None:
    app = build_app(handler)
    io = Recorder({"type": "lifespan.startup"}, {"type": "lifespan.shutdown"})
    await app({"type": "lifespan"}, io.receive, io.send)
    assert [m["type"] for m in io.sent] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]
    assert handler.started
    assert handler.stopped


async def test_lifespan_without_hooks() -> None:
    class Bare(FakeHandler):
        startup = None  # type: ignore[assignment]
        shutdown = None  # type: ignore[assignment]

    io = Recorder({"type": "lifespan.startup"}, {"type": "lifespan.shutdown"})
    await build_app(Bare())({"type": "lifespan"}, io.receive, io.send)
    assert [m["type"] for m in io.sent][-1] == "lifespan.shutdown.complete"


async def test_failing_startup_is_reported(handler: FakeHandler) -> None:
    class Broken(FakeHandler):
        async def startup(self) -> None:
            raise OSError("database unreachable")

    io = Recorder({"type": "lifespan.startup"})
    await build_app(Broken())({"type": "lifespan"}, io.receive, io.send)
    assert io.sent[0]["type"] == "lifespan.startup.failed"
    assert "database unreachable" in io.sent[0]["message"]


def test_lifespan_with_uvicorn(handler: FakeHandler) -> None:
    with running(build_app(handler)):
        assert handler.started
        assert not handler.stopped
    assert handler.stopped


async def test_websocket_is_closed(handler: FakeHandler) -> None:
    io = Recorder({"type": "websocket.connect"})
    await build_app(handler)({"type": "websocket", "path": "/"}, io.receive, io.send)
    assert io.sent == [{"type": "websocket.close", "code": 1000}]


async def test_client_leaving_during_the_body_gets_nothing(handler: FakeHandler) -> None:
    io = Recorder(
        {"type": "http.request", "body": b'{"jsonrpc"', "more_body": True},
        {"type": "http.disconnect"},
    )
    await build_app(handler)(http_scope("POST", "/"), io.receive, io.send)
    assert io.sent == []
    assert not handler.calls


async def test_a_bug_outside_the_handler_is_a_bare_500(handler: FakeHandler) -> None:
    """The last resort: no traceback, no half-written response."""

    app = build_app(handler)
    handler.card = None  # type: ignore[assignment]  # broken after the app is built
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        response = await client.post(
            "/", json=rpc("SendMessage", send_params(Version.V1_0)), headers=V1
        )
    assert response.status_code == 500
    assert response.json()["error"]["message"] == "Internal error"
    assert "secret" not in response.text


def test_build_app_checks_its_arguments(handler: FakeHandler) -> None:
    with pytest.raises(ValueError, match="served_versions"):
        build_app(handler, served_versions=())
    with pytest.raises(ValueError, match="jsonrpc_path"):
        build_app(handler, jsonrpc_path="a2a")
    with pytest.raises(ValueError, match="card_mode"):
        build_app(handler, card_mode="v2")  # type: ignore[arg-type]


def test_public_api() -> None:
    assert parley.asgi.__all__ == sorted(parley.asgi.__all__)
    for name in parley.asgi.__all__:
        assert hasattr(parley.asgi, name)
