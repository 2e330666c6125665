"""`AgentApp`: an agent as one ASGI app to serve on its own or to mount under a path of
another app (Starlette, FastAPI, …), as `Agent.asgi()` makes it; `mount_into`, which
mounts it so that the mount path answers without a slash too and the host's lifespan
opens and closes its store.

Theory of operation. Not told its public URL, the app names in its card the URL each
request reached it at: scheme, Host, `root_path` (which a mount sets), and a final `/`,
so a client that follows the card POSTs JSON-RPC to `/agent/`, which a mount routes
without a redirect. Its store is opened by the ASGI lifespan when it is the server's
app, by the host's lifespan when wired to it (`lifespan`, `mount_into`), and otherwise
by the first request (a host does not run a mounted app's lifespan); it is closed by
whichever lifespan opened it, or never if none did.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol, TypedDict, Unpack

from parley.asgi.app import A2AApp, build_app, lifespan
from parley.asgi.calls import to_a2a_error
from parley.asgi.card import CardMode, RequestCards
from parley.asgi.http import Exchange, Receive, Request, Scope, Send
from parley.protocol.negotiation import Version
from parley.server.auth.security import Security
from parley.server.broker import Broker
from parley.server.push.delivery import PushSettings
from parley.server.quotas import DEFAULT_QUOTAS, Quotas
from parley.server.servable import Servable
from parley.server.service import AgentService
from parley.server.stores import open_store
from parley.server.stores.base import PushConfigStore, TaskStore
from parley.wire.errors import rest_error
from parley.wire.limits import DEFAULT_LIMITS, Limits

PLACEHOLDER_URL = "http://agent.invalid/"
"""The URL in the service's own card when the public URL is taken from each request."""


class AgentAppOptions(TypedDict, total=False):
    """`Agent.asgi`'s options (see `agent_app`)."""

    store: str | TaskStore
    push_store: PushConfigStore
    broker: Broker
    namespace: str
    security: Security
    push: PushSettings | bool
    quotas: Quotas
    limits: Limits
    allowed_hosts: Sequence[str]
    card_mode: CardMode
    served_versions: Sequence[Version]


class AgentApp:
    """An agent's ASGI app (http and lifespan scopes) and the service behind it; its
    store opens on the first request if no lifespan opened it before."""

    def __init__(self, service: AgentService, app: A2AApp) -> None:
        self.service = service
        self.app = app
        self._started = False
        self._lock = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await lifespan((self,), receive, send)
            return
        if not self._started and kind == "http":
            try:
                await self.startup()
            except Exception as exc:
                exchange = Exchange(scope, receive, send, Request.from_scope(scope))
                await _unavailable(self.app, exchange, exc)
                return
        await self.app(scope, receive, send)

    @property
    def started(self) -> bool:
        """Whether the store is open (a lifespan or a request opened it)."""
        return self._started

    async def startup(self) -> None:
        """Open the store (`AgentService.startup`), unless it is open."""
        if self._started:
            return
        async with self._lock:
            if not self._started:
                await self.service.startup()
                self._started = True

    async def shutdown(self) -> None:
        """Close the store (`AgentService.shutdown`), if it is open."""
        async with self._lock:
            if self._started:
                self._started = False
                await self.service.shutdown()

    def lifespan(self, host: object = None) -> AbstractAsyncContextManager[None]:
        """The store open inside, closed on the way out: a host app's lifespan, as in
        `FastAPI(lifespan=agent_app.lifespan)`, or a part of one (`async with
        agent_app.lifespan(): ...`)."""
        return self._opened()

    @asynccontextmanager
    async def _opened(self) -> AsyncIterator[None]:
        await self.startup()
        try:
            yield
        finally:
            await self.shutdown()


async def _unavailable(app: A2AApp, exchange: Exchange, exc: Exception) -> None:
    """The store would not open: a 503 in the A2A error format; the cause is logged."""
    error = to_a2a_error(exc, "opening the agent's store")
    _, body = rest_error(error, app.settings.served[0], 503, app.settings.errors)
    await exchange.respond_json(503, body, [("Retry-After", "5")])


def agent_app(
    agent: Servable, url: str | None = None, **settings: Unpack[AgentAppOptions]
) -> AgentApp:
    """The ASGI app serving `agent` (see `Agent.asgi` for the options)."""
    store = settings.get("store", "memory")
    push_store = settings.get("push_store")
    if isinstance(store, str):
        store, opened_push = open_store(store)
        push_store = push_store or opened_push
    security = settings.get("security") or agent.security
    card = agent.card(url or PLACEHOLDER_URL, security=security)
    extended = getattr(agent, "extended_card", None)
    if extended is not None and url is None:
        raise ValueError("an agent with an extended card needs its public URL: asgi(url=...)")
    service = AgentService(
        agent.executor(),
        card,
        store=store,
        push_store=push_store,
        broker=settings.get("broker"),
        extended_card=extended(card) if extended is not None else None,
        security=security,
        namespace=settings.get("namespace"),
        push=settings.get("push"),
        quotas=settings.get("quotas", DEFAULT_QUOTAS),
    )
    card_mode = settings.get("card_mode", "hybrid")
    app = build_app(
        service,
        limits=settings.get("limits", DEFAULT_LIMITS),
        card_mode=card_mode,
        allowed_hosts=settings.get("allowed_hosts"),
        served_versions=settings.get("served_versions", (Version.V1_0, Version.V0_3)),
    )
    if url is None:
        app.cards = RequestCards(service.card, PLACEHOLDER_URL, card_mode)
    return AgentApp(service, app)


class Host(Protocol):
    """A Starlette app (FastAPI's included): what `mount_into` needs of it; its `router`
    is Starlette's (`routes`, `lifespan_context`), typed loosely as Parley does not
    depend on Starlette."""

    @property
    def router(self) -> Any: ...

    def mount(self, path: str, app: Callable[..., Any], name: str | None = None) -> None: ...


def mount_into(host: Host, path: str, app: AgentApp) -> AgentApp:
    """Mount `app` under `path` of a Starlette or FastAPI app, as `host.mount(path, app)`
    does, and also: `path` without its final `/` answers as `path/` does (instead of the
    host's redirect), and the host's lifespan opens and closes the agent's store."""
    try:
        from starlette.routing import Route  # noqa: PLC0415 - a host is a Starlette app
    except ImportError:  # pragma: no cover - a Host is a Starlette app
        raise ImportError("mount_into mounts into a Starlette or FastAPI app") from None
    path = "/" + path.strip("/")
    if path == "/":
        raise ValueError("mount_into mounts under a path; serve the app itself at /")
    host.mount(path, app)
    host.router.routes.append(Route(path, _AtMountPoint(app, path), include_in_schema=False))
    inner = host.router.lifespan_context

    @asynccontextmanager
    async def wired(host_app: Any) -> AsyncIterator[Any]:
        async with app.lifespan(host_app), inner(host_app) as state:
            yield state

    host.router.lifespan_context = wired
    return app


class _AtMountPoint:
    """`app` for a request to its mount path itself (no final `/`): the mount's scope."""

    def __init__(self, app: AgentApp, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        root = scope.get("root_path", "") + self.path
        await self.app({**scope, "root_path": root}, receive, send)
