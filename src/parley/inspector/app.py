"""`with_inspector`: an agent's app that also serves the inspector, a page under
`/inspector/` (plain HTML, JavaScript and CSS shipped in the package: no CDN, no build
step) that talks to the agent through its own endpoints from the browser, and a small
JSON API beside it for what no A2A operation tells (the caller's push deliveries).

Only an app built with it has these routes: an agent served without the inspector pays
nothing for it. A browser at the root is sent to the page. The page's files are the same
for everyone (they hold no data); everything the page shows comes from calls that carry
the credentials the user gives it, checked by the agent's own authenticator.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from parley.asgi.app import A2AApp
from parley.asgi.calls import answer_version, authenticate, error_headers, to_a2a_error
from parley.asgi.guard import check_host
from parley.asgi.http import Exchange
from parley.asgi.root import wants_page
from parley.protocol.errors import A2AError, MethodNotFoundError
from parley.server.context import CallContext
from parley.server.push.outbox import BEHIND, DEAD, PENDING, Delivery
from parley.wire.errors import rest_error
from parley.wire.json_bytes import JSON

PREFIX = "/inspector"
ASSETS = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/inspector.css": ("inspector.css", "text/css; charset=utf-8"),
    "/a2a.js": ("a2a.js", "text/javascript; charset=utf-8"),
    "/checks.js": ("checks.js", "text/javascript; charset=utf-8"),
    "/inspector.js": ("inspector.js", "text/javascript; charset=utf-8"),
}
"""The page's files, by their path under PREFIX."""

PAGE_HEADERS = [
    ("Cache-Control", "no-cache"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    (
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; "
        "base-uri 'none'; frame-ancestors 'none'",
    ),
]
DELIVERIES_LIMIT = 200
"""At most this many pending and this many dead notifications are looked at per request."""


def _load_assets() -> dict[str, tuple[bytes, str]]:
    static = files("parley.inspector") / "static"
    return {
        path: (static.joinpath(name).read_bytes(), kind) for path, (name, kind) in ASSETS.items()
    }


class InspectedApp(A2AApp):
    """An A2AApp (same settings, card and guards) with the inspector's routes in front."""

    def __init__(self, app: A2AApp) -> None:
        self.__dict__.update(vars(app))  # a copy of the built app, not a second build
        self.assets = _load_assets()

    async def _route(self, exchange: Exchange) -> None:
        path = exchange.request.path
        if path == PREFIX or path.startswith(PREFIX + "/"):
            check_host(exchange.request.headers, self.allowed_hosts)
            await self._inspector(exchange, path[len(PREFIX) :])
        else:
            await super()._route(exchange)

    async def _get_root(self, exchange: Exchange) -> None:
        """A browser at the root goes to the inspector."""
        if exchange.request.path == "/" and wants_page(exchange.request):
            await _redirect(exchange)
        else:
            await super()._get_root(exchange)

    async def _inspector(self, exchange: Exchange, rest: str) -> None:
        if exchange.request.method != "GET":
            await self._not_allowed(exchange, ("GET",))
        elif rest == "":
            await _redirect(exchange)
        elif rest in self.assets:
            body, kind = self.assets[rest]
            await exchange.respond(200, body, PAGE_HEADERS, kind)
        elif rest in API:
            await self._api(exchange, rest)
        else:
            error = MethodNotFoundError(f"{PREFIX}{rest}: no such page")
            await self._error(exchange, error, 404)

    async def _api(self, exchange: Exchange, rest: str) -> None:
        """An API call, answered as JSON to an authenticated caller (401 with the agent's
        challenges otherwise, as its A2A endpoints answer)."""
        try:
            caller = await authenticate(self.settings, exchange)
            tenant = exchange.request.parameter("tenant") or ""
            ctx = CallContext(caller=caller, tenant=tenant, headers=exchange.request.headers)
            value = await API[rest](self.settings.handler, ctx)
        except A2AError as error:
            await self._error(exchange, error)
            return
        except Exception as exc:
            await self._error(exchange, to_a2a_error(exc, "the inspector"))
            return
        await exchange.respond_json(200, value, [("Cache-Control", "no-store")])

    async def _error(self, exchange: Exchange, error: A2AError, status: int | None = None) -> None:
        version = answer_version(exchange.request, self.settings.served)
        code, body = rest_error(error, version, status, self.settings.errors)
        await exchange.respond_json(code, body, error_headers(error))


async def _redirect(exchange: Exchange) -> None:
    """303 to the page, under the app's mount path (`root_path`)."""
    location = exchange.scope.get("root_path", "") + PREFIX + "/"
    await exchange.respond(303, b"", [("Location", location)], None)


async def _whoami(handler: Any, ctx: CallContext) -> JSON:
    """Who the page's credentials name (the page asks for credentials on a 401)."""
    return {"caller": ctx.caller.id}


async def _deliveries(handler: Any, ctx: CallContext) -> JSON:
    """The caller's push notifications waiting for delivery or given up on (delivered ones
    leave the outbox): `{"deliveries": null}` when the agent delivers none (its card
    declares no push notifications, or its store keeps no outbox)."""
    outbox = getattr(getattr(handler, "push_store", None), "outbox", None)
    store_scope = getattr(handler, "store_scope", None)
    declared = handler.card.capabilities.push_notifications
    if outbox is None or store_scope is None or not declared:
        return {"deliveries": None}
    scope = store_scope(ctx)
    found: list[Delivery] = []
    for state in (PENDING, DEAD):
        rows = await outbox.inspect(state=state, limit=DELIVERIES_LIMIT)
        found.extend(row for row in rows if tuple(row.scope) == tuple(scope))
    return {"deliveries": [_delivery(row) for row in sorted(found, key=lambda row: row.id)]}


def _delivery(row: Delivery) -> JSON:
    return {
        "id": row.id,
        "notificationId": row.sent_id,
        "taskId": row.task_id,
        "configId": row.config_id,
        "state": "dead" if row.state == DEAD else "pending",
        "attempts": row.attempts,
        "createdAt": row.created_at // 1000,
        "dueAt": None if row.state == DEAD or row.due_at >= BEHIND else row.due_at // 1000,
        "lastError": row.last_error,
        "event": row.payload.decode("utf-8", "replace"),
    }


API = {"/api/whoami": _whoami, "/api/deliveries": _deliveries}
"""The inspector's JSON API, by path under PREFIX: each a function of the handler and the
authenticated call's context."""


def with_inspector(app: A2AApp) -> InspectedApp:
    """`app` (from `build_app`) that also serves the inspector at `/inspector/` and sends
    browsers at `/` there."""
    return InspectedApp(app)


__all__ = ["InspectedApp", "with_inspector"]
