"""From a URL to a transport: resolve the card, select the interface, build the transport of
its binding (`TRANSPORTS`, by the card's `protocolBinding` name; gRPC's is imported when
first used, so that the grpc extra is needed only by those who use it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

import httpx

from parley.client.auth import Auth
from parley.client.card import (
    GRPC_BINDING,
    HTTP_JSON_BINDING,
    JSONRPC_BINDING,
    fetch_card,
    select_interface,
)
from parley.client.jsonrpc import JsonRpcTransport
from parley.client.rest import RestTransport
from parley.client.retry import RetryPolicy
from parley.client.streaming import StreamPolicy
from parley.client.transport import Transport
from parley.model import AgentCard, AgentInterface
from parley.protocol.negotiation import Version

if TYPE_CHECKING:
    import grpc

    from parley.client.client import Client


class TransportFactory(Protocol):
    """Builds the transport of one interface (JSON-RPC, HTTP+JSON, gRPC)."""

    def __call__(
        self,
        url: str,
        version: Version,
        *,
        http: httpx.AsyncClient,
        auth: Auth | None,
        headers: Mapping[str, str] | None,
        connect_timeout: float,
    ) -> Transport: ...


def grpc_transport(
    url: str,
    version: Version,
    *,
    http: httpx.AsyncClient,
    auth: Auth | None,
    headers: Mapping[str, str] | None,
    connect_timeout: float,
    credentials: grpc.ChannelCredentials | None = None,
) -> Transport:
    """`parley.client.grpc.GrpcTransport` (the grpc extra); gRPC has its own channel, and
    connects when first called (an unreachable server fails that call at once).
    `credentials` (TLS roots, a client certificate) are bound with `functools.partial`:
    `transports={**TRANSPORTS, GRPC_BINDING: partial(grpc_transport, credentials=…)}`."""
    from parley.client.grpc import GrpcTransport  # noqa: PLC0415 - the grpc extra

    return GrpcTransport(url, version, auth=auth, headers=headers, credentials=credentials)


TRANSPORTS: Mapping[str, TransportFactory] = {
    JSONRPC_BINDING: JsonRpcTransport,
    HTTP_JSON_BINDING: RestTransport,
    GRPC_BINDING: grpc_transport,
}
"""The bindings `Client.connect` can use, by the card's `protocolBinding` name."""


@dataclass(frozen=True, slots=True)
class Connection:
    """The resolved card, the chosen interface, its transport, and the httpx client made
    for them (None when the caller supplied one)."""

    card: AgentCard
    interface: AgentInterface
    transport: Transport
    owned_http: httpx.AsyncClient | None


async def open_connection(
    url: str,
    *,
    versions: Sequence[Version],
    bindings: Sequence[str],
    auth: Auth | None,
    headers: Mapping[str, str] | None,
    connect_timeout: float,
    http: httpx.AsyncClient | None,
    transports: Mapping[str, TransportFactory],
    card_keys: object = None,
) -> Connection:
    """Fetch the card at `url`, select an interface among the bindings that have a
    transport, build that transport (sharing one httpx client with the card fetch)."""
    owned = httpx.AsyncClient() if http is None else None
    shared = http or owned
    assert shared is not None
    try:
        card = await fetch_card(url, http=shared, timeout=connect_timeout)
        if card_keys is not None:  # the card's signature, before it is trusted (R-CARD-20)
            from parley.wire.card_signatures import verify_card  # noqa: PLC0415 - auth extra

            verify_card(card, card_keys)
        allowed = [binding for binding in bindings if binding in transports]
        interface, version = select_interface(
            card, versions=versions, bindings=allowed, base_url=url
        )
        transport = transports[interface.protocol_binding](
            interface.url,
            version,
            http=shared,
            auth=auth,
            headers=headers,
            connect_timeout=connect_timeout,
        )
    except BaseException:
        if owned is not None:
            await owned.aclose()
        raise
    return Connection(card, interface, transport, owned)


async def connect_client(
    make: type[Client],
    url: str,
    *,
    auth: Auth | None,
    versions: Sequence[Version],
    bindings: Sequence[str],
    extensions: Sequence[str],
    extended_card: bool | None,
    card_keys: object,
    timeout: float | None,
    connect_timeout: float,
    retry: RetryPolicy | None,
    streaming: StreamPolicy | None,
    headers: Mapping[str, str] | None,
    http: httpx.AsyncClient | None,
    transports: Mapping[str, TransportFactory],
) -> Client:
    """`Client.connect`'s work: the connection, the Client over it, and the extended card
    when it is offered and wanted (by default: when there are credentials to send)."""
    connection = await open_connection(
        url,
        versions=versions,
        bindings=bindings,
        auth=auth,
        headers=headers,
        connect_timeout=connect_timeout,
        http=http,
        transports=transports,
        card_keys=card_keys,
    )
    client = make(
        connection.transport,
        card=connection.card,
        interface=connection.interface,
        extensions=extensions,
        timeout=timeout,
        retry=retry,
        streaming=streaming,
        http=connection.owned_http,
    )
    wanted = auth is not None if extended_card is None else extended_card
    if wanted and connection.card.capabilities.extended_agent_card:
        try:
            await client.get_extended_card()
        except BaseException:
            await client.aclose()
            raise
    return client


class Connecting:
    """What `Client.connect` returns: await it for the Client, or use it as an async
    context manager (the Client is closed on exit)."""

    def __init__(self, connecting: Awaitable[Client]) -> None:
        self._connecting = connecting
        self._client: Client | None = None

    def __await__(self) -> Generator[object, None, Client]:
        return self._connecting.__await__()

    async def __aenter__(self) -> Client:
        self._client = await self._connecting
        return self._client

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._client is not None  # only called after __aenter__ succeeded
        await self._client.aclose()
