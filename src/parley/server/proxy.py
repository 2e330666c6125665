"""`ProxyHandler`: a request handler that forwards every operation to another A2A agent (the
upstream) through Parley's client, so that whatever serves a handler — JSON-RPC, HTTP+JSON
and gRPC, in every served version, with authentication, rate limits and tracing — serves
that agent too. `proxy_card` is the card it is served with: the upstream's description,
skills and capabilities at the proxy's own interfaces.

The proxy keeps nothing: tasks, their ids and their push configs live upstream. Protocol
errors the upstream answers are raised as they are (a TaskNotFoundError stays one); a
failure to reach it becomes UnavailableError, any other transport failure InternalError.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

from msgspec.structs import replace

from parley.client.auth import Auth
from parley.client.card import GRPC_BINDING, HTTP_JSON_BINDING, JSONRPC_BINDING
from parley.client.client import Client
from parley.client.errors import ClientConnectionError, ClientError
from parley.client.transport import DEFAULT_TIMEOUT, CallOptions, EventStream, Transport
from parley.model import (
    AgentCard,
    AgentInterface,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Model,
    SendMessageRequest,
    SendMessageResult,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from parley.protocol.errors import A2AError, InternalError, UnavailableError
from parley.protocol.negotiation import RELEASED_VERSIONS
from parley.server.agent import STREAM_RESUME_URI
from parley.server.auth.security import Security
from parley.server.caps import Caps
from parley.server.context import CallContext
from parley.server.quotas import DEFAULT_QUOTAS, Quotas, RateLimiter
from parley.wire.cards import grpc_url

log = logging.getLogger("parley.proxy")

Req = TypeVar("Req", bound=Model)
Out = TypeVar("Out")

UPSTREAM_BINDINGS = (JSONRPC_BINDING, HTTP_JSON_BINDING, GRPC_BINDING)
"""The bindings the proxy may reach its upstream by, in the upstream card's order."""


def proxy_card(
    upstream: AgentCard,
    url: str,
    *,
    grpc_address: str | None = None,
    keep_security: bool = False,
) -> AgentCard:
    """The upstream's card as the proxy at `url` serves it: every binding in every released
    version at the proxy (gRPC at `grpc_address`, if given), the upstream's signatures
    dropped (they no longer match), and the stream-resume extension dropped (the proxy's
    streams do not resume). The upstream's security declarations are dropped too, unless
    `keep_security` (the proxy forwards the caller's credentials, which the upstream checks);
    the proxy's own `Security` adds its own when it is served (`ProxyHandler`)."""
    interfaces = []
    for version in RELEASED_VERSIONS:
        for binding in (JSONRPC_BINDING, HTTP_JSON_BINDING):
            interfaces.append(
                AgentInterface(url=url, protocol_binding=binding, protocol_version=version.value)
            )
        if grpc_address:
            where = grpc_url(grpc_address, version)
            interfaces.append(
                AgentInterface(
                    url=where, protocol_binding=GRPC_BINDING, protocol_version=version.value
                )
            )
    capabilities = upstream.capabilities
    extensions = tuple(e for e in capabilities.extensions if e.uri != STREAM_RESUME_URI)
    card = replace(
        upstream,
        supported_interfaces=tuple(interfaces),
        capabilities=replace(capabilities, extensions=extensions),
        signatures=(),
    )
    if keep_security:
        return card
    skills = tuple(replace(skill, security_requirements=()) for skill in card.skills)
    return replace(card, security_schemes={}, security_requirements=(), skills=skills)


def upstream_error(exc: ClientError) -> A2AError:
    """The protocol error a caller gets for a failure to talk to the upstream."""
    if isinstance(exc, ClientConnectionError):
        return UnavailableError(f"The upstream agent cannot be reached: {exc.message}")
    return InternalError(f"The upstream agent failed: {exc.message}")


class ProxyHandler:
    """A RequestHandler for the agent at `upstream` (its base URL), served with `card`
    (`proxy_card`). The client to it is connected on `startup` (the ASGI lifespan) and
    closed on `shutdown`; `connect` replaces `Client.connect` (tests, custom transports).

    `security`: who may call the proxy (its schemes added to the card); every caller
    reaches the upstream as the proxy itself, with `auth` and `headers` if given.
    `forward_auth`: send each caller's own `Authorization` header upstream instead (the
    upstream then tells callers apart). `quotas`: rate limits and the cap on open streams,
    as `AgentService`'s. `sign_card`: signs the proxy's card as served. `timeout`: seconds
    a unary call upstream may take (streams have no deadline).
    """

    def __init__(
        self,
        upstream: str,
        card: AgentCard,
        *,
        security: Security | None = None,
        auth: Auth | None = None,
        headers: Mapping[str, str] | None = None,
        forward_auth: bool = False,
        quotas: Quotas = DEFAULT_QUOTAS,
        sign_card: Callable[[AgentCard], AgentCard] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        connect: Callable[[], Any] | None = None,
    ) -> None:
        self.upstream = upstream
        self.security = security
        self.authenticator = security
        self.forward_auth = forward_auth
        self.timeout = timeout
        self._sign_card = sign_card
        self._keep_security = forward_auth
        self._interfaces = card.supported_interfaces
        self._card = self._served(card)
        self.caps = Caps(quotas)
        self.rate_limiter = RateLimiter(quotas, card.name) if quotas.limits_rates else None
        self._connect = connect or (
            lambda: Client.connect(
                upstream, auth=auth, headers=headers, bindings=UPSTREAM_BINDINGS, timeout=timeout
            )
        )
        self.client: Client | None = None

    @property
    def card(self) -> AgentCard:
        return self._card

    def _served(self, card: AgentCard) -> AgentCard:
        """A card of the upstream's as the proxy serves it: its interfaces, its security."""
        if self.security is not None:
            card = self.security.apply(card)
        return card if self._sign_card is None else self._sign_card(card)

    # ----------------------------------------------------------------- lifetime

    async def startup(self) -> None:
        self.client = await self._connect()
        interface = self.client.interface
        if interface is not None:
            log.info(
                "proxying %s over %s %s at %s",
                self.upstream,
                interface.protocol_binding,
                interface.protocol_version,
                interface.url,
            )

    async def shutdown(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await client.aclose()

    # ----------------------------------------------------------------- forwarding

    def _upstream(self) -> tuple[Transport, str]:
        if self.client is None:
            raise UnavailableError("The proxy is not connected to its upstream agent yet")
        return self.client.transport, self.client.tenant

    def _options(self, ctx: CallContext, stream: bool = False) -> CallOptions:
        headers: dict[str, str] = {}
        if self.forward_auth and "authorization" in ctx.headers:
            headers["Authorization"] = ctx.headers["authorization"]
        timeout = None if stream else self.timeout
        return CallOptions(extensions=ctx.requested_extensions, timeout=timeout, headers=headers)

    async def _unary(
        self,
        ctx: CallContext,
        method: Callable[[Transport], Callable[[Req, CallOptions], Awaitable[Out]]],
        request: Req,
    ) -> Out:
        """`method` of the upstream's transport, on `request` in the upstream's tenant."""
        transport, tenant = self._upstream()
        try:
            return await method(transport)(replace(request, tenant=tenant), self._options(ctx))
        except ClientError as exc:
            raise upstream_error(exc) from None

    async def _stream(
        self,
        ctx: CallContext,
        method: Callable[[Transport], Callable[[Req, CallOptions], EventStream]],
        request: Req,
    ) -> AsyncIterator[StreamEvent]:
        """The upstream's stream, event by event; its errors raised as `_unary`'s."""
        with self.caps.stream(ctx):
            transport, tenant = self._upstream()
            opened = method(transport)(
                replace(request, tenant=tenant), self._options(ctx, stream=True)
            )
            try:
                async for event in opened:
                    yield event
            except ClientError as exc:
                raise upstream_error(exc) from None
            finally:
                await opened.aclose()

    async def send_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> SendMessageResult:
        return await self._unary(ctx, lambda t: t.send_message, request)

    def send_streaming_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> AsyncIterator[StreamEvent]:
        return self._stream(ctx, lambda t: t.send_streaming_message, request)

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        return await self._unary(ctx, lambda t: t.get_task, request)

    async def list_tasks(self, ctx: CallContext, request: ListTasksRequest) -> ListTasksResponse:
        return await self._unary(ctx, lambda t: t.list_tasks, request)

    async def cancel_task(self, ctx: CallContext, request: CancelTaskRequest) -> Task:
        return await self._unary(ctx, lambda t: t.cancel_task, request)

    def subscribe_to_task(
        self, ctx: CallContext, request: SubscribeToTaskRequest
    ) -> AsyncIterator[StreamEvent]:
        return self._stream(ctx, lambda t: t.subscribe_to_task, request)

    async def create_task_push_notification_config(
        self, ctx: CallContext, request: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        return await self._unary(ctx, lambda t: t.create_task_push_notification_config, request)

    async def get_task_push_notification_config(
        self, ctx: CallContext, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        return await self._unary(ctx, lambda t: t.get_task_push_notification_config, request)

    async def list_task_push_notification_configs(
        self, ctx: CallContext, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        return await self._unary(ctx, lambda t: t.list_task_push_notification_configs, request)

    async def delete_task_push_notification_config(
        self, ctx: CallContext, request: DeleteTaskPushNotificationConfigRequest
    ) -> None:
        return await self._unary(ctx, lambda t: t.delete_task_push_notification_config, request)

    async def get_extended_agent_card(
        self, ctx: CallContext, request: GetExtendedAgentCardRequest
    ) -> AgentCard:
        """The upstream's extended card, at the proxy's interfaces."""
        card = await self._unary(ctx, lambda t: t.get_extended_agent_card, request)
        rewritten = proxy_card(card, self.upstream, keep_security=self._keep_security)
        return self._served(replace(rewritten, supported_interfaces=self._interfaces))
