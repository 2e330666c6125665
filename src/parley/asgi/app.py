"""`build_app`: one RequestHandler served over JSON-RPC and HTTP+JSON in every served
version, with the agent card, a health check and the ASGI lifespan protocol.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Iterable, Sequence
from typing import get_args
from urllib.parse import quote

from parley.asgi.calls import Settings, answer_version, logger, to_a2a_error
from parley.asgi.card import WELL_KNOWN_PATHS, CardMode, Cards, CardSource, serve_card
from parley.asgi.guard import Refused, allowed_host_names, check_host, check_site
from parley.asgi.http import Disconnected, Exchange, Receive, Request, Scope, Send
from parley.asgi.jsonrpc import serve_jsonrpc
from parley.asgi.rest import serve_rest
from parley.asgi.root import agent_page, serve_page, wants_page
from parley.protocol.errors import MethodNotFoundError
from parley.protocol.negotiation import Version, served_by
from parley.server.context import Authenticator, authenticator_of
from parley.server.handler import RequestHandler
from parley.server.quotas import rate_limiter_of
from parley.wire import jsonrpc
from parley.wire.errors import DEFAULT_WIRE_COMPAT, error_table, rest_error
from parley.wire.limits import DEFAULT_LIMITS, Limits

HEALTH_PATH = "/healthz"
_SITE = "sec-fetch-site"
"""The header `check_site` reads (only browsers send it: called only when it is there)."""


class A2AApp:
    """The ASGI application `build_app` returns (http and lifespan scopes)."""

    def __init__(
        self,
        settings: Settings,
        jsonrpc_path: str,
        cards: CardSource,
        allowed_hosts: frozenset[str] | None = None,
    ) -> None:
        self.settings = settings
        self.jsonrpc_path = quote(jsonrpc_path, safe="/:@!$&'()*+,;=~")
        self.cards = cards
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Route; a client that leaves early gets nothing, a bug a bare 500. The route is
        awaited right here: a coroutine of ours around it would be held as long as a
        stream stays open."""
        kind = scope["type"]
        if kind == "http":
            exchange = Exchange(scope, receive, send, Request.from_scope(scope))
            try:
                await self._route(exchange)
            except Disconnected:
                return
            except Refused as refused:
                await self._refuse(exchange, refused)
            except Exception as exc:
                error = to_a2a_error(exc, "the ASGI app")
                if not exchange.started:
                    _, body = rest_error(error, self.settings.served[0], table=self.settings.errors)
                    await exchange.respond_json(500, body)
        elif kind == "lifespan":
            await lifespan((self.settings.handler,), receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1000})

    def _route(self, exchange: Exchange) -> Awaitable[None]:
        """The answer to await: every path but health needs an allowed Host; a method (not
        the card) needs a request no other site's page made (`parley.asgi.guard`)."""
        path, method = exchange.request.path, exchange.request.method
        if self.allowed_hosts is not None and path != HEALTH_PATH:
            check_host(exchange.request.headers, self.allowed_hosts)
        if path == self.jsonrpc_path:
            if method == "POST":
                if _SITE in exchange.request.headers:
                    check_site(exchange.request.headers)
                return serve_jsonrpc(self.settings, exchange)
            if method == "GET":  # the 0.3 TCK GETs the card's JSON-RPC `url`
                return self._get_root(exchange)
            return self._not_allowed(exchange, ("GET", "POST"))
        if path in WELL_KNOWN_PATHS or path == HEALTH_PATH:
            return self._fixed(exchange, path, method)
        if path == "/" and method == "GET" and wants_page(exchange.request):
            return self._get_root(exchange)
        if _SITE in exchange.request.headers:
            check_site(exchange.request.headers)
        return serve_rest(self.settings, exchange)

    def _fixed(self, exchange: Exchange, path: str, method: str) -> Awaitable[None]:
        """The card's and health's paths: GET only."""
        if method != "GET":
            return self._not_allowed(exchange, ("GET",))
        if path == HEALTH_PATH:
            return exchange.respond_json(200, {"status": "ok"})
        return serve_card(self.cards, exchange)

    async def _get_root(self, exchange: Exchange) -> None:
        """A browser at the root gets a page linking the card (`parley.asgi.root`); any
        other GET of the JSON-RPC path the card."""
        request = exchange.request
        if request.path == "/" and wants_page(request):
            card = self.settings.handler.card
            root = exchange.scope.get("root_path", "")
            await serve_page(exchange, agent_page(card.name, card.description, root))
        else:
            await serve_card(self.cards, exchange)

    async def _refuse(self, exchange: Exchange, refused: Refused) -> None:
        """A guard's refusal with its HTTP status (JSON-RPC's too: the request never
        became a call), in the error body of the binding the request was for."""
        request = exchange.request
        version = answer_version(request, self.settings.served)
        if request.path == self.jsonrpc_path and request.method == "POST":
            body = jsonrpc.failure(None, refused.error, version)
        else:
            _, body = rest_error(refused.error, version, refused.status, self.settings.errors)
        await exchange.respond_json(refused.status, body, refused.headers)

    async def _not_allowed(self, exchange: Exchange, allowed: tuple[str, ...]) -> None:
        error = MethodNotFoundError(f"{exchange.request.method} is not allowed here")
        version = answer_version(exchange.request, self.settings.served)
        status, body = rest_error(error, version, 405, self.settings.errors)
        await exchange.respond_json(status, body, [("Allow", ", ".join(allowed))])


async def _hook(handler: object, name: str) -> None:
    """Call the handler's optional `startup` / `shutdown` (sync or async)."""
    hook = getattr(handler, name, None)
    if callable(hook):
        result = hook()
        if inspect.isawaitable(result):
            await result


async def lifespan(handlers: Sequence[object], receive: Receive, send: Send) -> None:
    """Accept startup and shutdown, running the handlers' (or apps') hooks (in order; shut down in
    reverse); a failing hook is reported as `…failed` (the server then refuses to start
    or logs it)."""
    while True:
        kind = (await receive())["type"]
        phase = kind.removeprefix("lifespan.")
        if phase not in ("startup", "shutdown"):
            continue
        try:
            for handler in handlers if phase == "startup" else reversed(handlers):
                await _hook(handler, phase)
        except Exception as exc:
            logger.exception("Lifespan %s failed", phase)
            await send({"type": f"lifespan.{phase}.failed", "message": repr(exc)})
            return
        await send({"type": f"lifespan.{phase}.complete"})
        if phase == "shutdown":
            return


def build_app(
    handler: RequestHandler,
    *,
    limits: Limits = DEFAULT_LIMITS,
    authenticator: Authenticator | None = None,
    jsonrpc_path: str = "/",
    card_mode: CardMode = "hybrid",
    keepalive_seconds: float = 15.0,
    served_versions: Sequence[Version] | None = None,
    allowed_hosts: Iterable[str] | None = None,
    wire_compat: str = DEFAULT_WIRE_COMPAT,
) -> A2AApp:
    """The ASGI app serving `handler`.

    JSON-RPC: POST `jsonrpc_path` (GET there answers the card). HTTP+JSON: every route of
    the operations table. Card: `/.well-known/agent-card.json` (and `agent.json`), a hybrid
    1.0 + 0.3 card (`card_mode="hybrid"`) or the pure 1.0 one (`"v1"`). Health:
    `/healthz`. SSE streams send a comment after `keepalive_seconds` of silence (0: never).
    `served_versions`: the first is also the format of errors whose version is unknown;
    by default 1.0 and 0.3, and a draft (the 1.1 draft) when the handler's card lists it
    (`negotiation.served_by`).
    `allowed_hosts`: the Host names (port ignored) the app answers to, on every path but
    `/healthz` (others get 400: DNS rebinding); None (the default) or `*` answers any, as
    an app behind a proxy or under several public names must.
    `wire_compat`: the spec release whose 1.0 error statuses HTTP+JSON answers with,
    `"1.0.1"` or `"1.0.0"` (`parley.wire.errors.WIRE_COMPAT`; D17).
    """
    if served_versions is None:
        served_versions = served_by(handler.card)
    served = tuple(dict.fromkeys(served_versions))
    if not served:
        raise ValueError("served_versions must name at least one version")
    if not jsonrpc_path.startswith("/"):
        raise ValueError("jsonrpc_path must start with '/'")
    if card_mode not in get_args(CardMode):
        raise ValueError(f"card_mode must be one of {get_args(CardMode)}")
    settings = Settings(
        handler,
        limits,
        authenticator_of(handler, authenticator),
        keepalive_seconds,
        served,
        rate_limiter_of(handler),
        error_table(wire_compat),
    )
    hosts = allowed_host_names(allowed_hosts)
    return A2AApp(settings, jsonrpc_path, Cards(handler.card, card_mode), hosts)
