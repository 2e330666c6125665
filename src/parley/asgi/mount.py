"""`mount_agents`: several agents on one server, each under its own sub-path (DESIGN 15).

`/NAME/...` goes to agent NAME's app with `/NAME` added to the scope's `root_path`, so the
agent sees its usual routes: its card at `/NAME/.well-known/agent-card.json`, JSON-RPC at
`/NAME/`, HTTP+JSON under `/NAME/…`. Each agent's card names those URLs, so a client that
follows the card (R-CARD-5..8) reaches the right agent without anything else to know.
`GET /` lists the agents and their cards (a browser gets it as a page, `parley.asgi.root`);
`/healthz` answers for the server.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote

from parley.asgi.app import HEALTH_PATH, A2AApp, lifespan
from parley.asgi.guard import Refused, allowed_host_names, check_host
from parley.asgi.http import Receive, Request, Scope, Send
from parley.asgi.root import HTML_TYPE, PAGE_HEADERS, index_page, wants_page
from parley.wire.json_bytes import JSON, dumps

NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,62}")
"""An agent's name in its path: lower-case letters, digits, `_ . -`, at most 63."""


def check_name(name: str) -> str:
    """`name` if it can be a path segment of its own; ValueError naming the rule otherwise."""
    if not NAME.fullmatch(name) or name in (".", ".."):
        raise ValueError(
            f"agent name {name!r}: use lower-case letters, digits, '_', '.' or '-' "
            "(at most 63, starting with a letter or digit)"
        )
    return name


class Mounted:
    """An ASGI app routing `/NAME/…` to each named agent's app."""

    def __init__(
        self,
        apps: Mapping[str, A2AApp],
        base_url: str = "",
        allowed_hosts: Iterable[str] | None = None,
    ) -> None:
        if not apps:
            raise ValueError("mount at least one agent")
        self.apps = {check_name(name): app for name, app in apps.items()}
        self.base_url = base_url.rstrip("/")
        self.allowed_hosts = allowed_host_names(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await lifespan([app.settings.handler for app in self.apps.values()], receive, send)
            return
        if kind != "http":
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1000})
            return
        root = scope.get("root_path", "")
        raw = scope.get("raw_path") or quote(scope.get("path", "/")).encode()
        path = raw.decode("latin-1").split("?", 1)[0]
        if root and path.startswith(root):
            path = path[len(root) :]
        name, _, _ = path.lstrip("/").partition("/")
        app = self.apps.get(name)
        if app is not None:
            await app({**scope, "root_path": f"{root}/{name}"}, receive, send)
        elif path == HEALTH_PATH:
            await _json(send, 200, {"status": "ok"})
        elif not self._host_allowed(scope):
            await _json(
                send,
                400,
                {
                    "error": {
                        "code": 400,
                        "status": "INVALID_ARGUMENT",
                        "message": "This server does not answer to this host",
                    }
                },
            )
        elif path in ("", "/") and scope["method"] == "GET":
            if wants_page(Request.from_scope(scope)):
                await _page(send, index_page(self._index(), root))
            else:
                await _json(send, 200, self._index())
        else:
            message = f"No agent here: the agents are under /{', /'.join(self.apps)}"
            await _json(
                send, 404, {"error": {"code": 404, "status": "NOT_FOUND", "message": message}}
            )

    def _host_allowed(self, scope: Scope) -> bool:
        try:
            check_host(Request.from_scope(scope).headers, self.allowed_hosts)
        except Refused:
            return False
        return True

    def _index(self) -> JSON:
        agents = [
            {
                "name": name,
                "agentName": app.settings.handler.card.name,
                "card": f"{self.base_url}/{name}/.well-known/agent-card.json",
            }
            for name, app in self.apps.items()
        ]
        return {"agents": agents}


async def _page(send: Send, body: bytes) -> None:
    headers = [(k.lower().encode(), v.encode()) for k, v in PAGE_HEADERS]
    headers += [(b"content-type", HTML_TYPE.encode()), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _json(send: Send, status: int, value: JSON) -> None:
    body = dumps(value)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def mount_agents(
    apps: Mapping[str, A2AApp], base_url: str = "", allowed_hosts: Iterable[str] | None = None
) -> Mounted:
    """One ASGI app serving each of `apps` under `/NAME` (see the module's docstring);
    `base_url` (the server's public URL) makes the index's card links absolute;
    `allowed_hosts` guards the index as `build_app`'s guards an agent (each mounted app
    keeps its own)."""
    return Mounted(apps, base_url, allowed_hosts)
