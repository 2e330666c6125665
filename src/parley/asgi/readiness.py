"""`Readiness`: pure-ASGI middleware answering `GET /readyz` for load balancers — 200
`{"status": "ready", "checks": {...}}` when every probe of `parley.server.readiness`
succeeds, else 503 `{"status": "unready", "checks": {...}}` naming what failed — and
passing every other request to the app. (`/healthz`, the app's own, only says the process
answers.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from parley.asgi.http import Receive, Scope, Send
from parley.server.readiness import DEFAULT_TIMEOUT, Probe, check

READY_PATH = "/readyz"


class Readiness:
    """`app`, and `/readyz` answered from `probes` (each within `timeout` seconds)."""

    def __init__(
        self, app: Any, probes: Mapping[str, Probe], timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.app = app
        self.probes = dict(probes)
        self.timeout = timeout

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != READY_PATH:
            await self.app(scope, receive, send)
            return
        if scope.get("method") not in ("GET", "HEAD"):
            await _respond(send, 405, {"status": "method not allowed"}, [(b"allow", b"GET")])
            return
        checks = await check(self.probes, self.timeout)
        ready = all(outcome == "ok" for outcome in checks.values())
        body = {"status": "ready" if ready else "unready", "checks": checks}
        await _respond(send, 200 if ready else 503, body)


async def _respond(
    send: Send, status: int, body: object, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    content = orjson.dumps(body)
    head = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(content)).encode()),
        (b"cache-control", b"no-store"),
        *(headers or ()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": content})
