"""`Session`: what every call of a `Client` shares — the transport and the settings, the
options of each call, retries of idempotent calls, resilient streams, and the lifetime.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Self, TypeVar

import httpx

from parley.client.errors import ClientError
from parley.client.retry import RetryPolicy, retrying
from parley.client.streaming import ClientStream, StreamPolicy
from parley.client.transport import (
    DEFAULT,
    DEFAULT_TIMEOUT,
    CallOptions,
    EventStream,
    Timeout,
    Transport,
    transport_wrappers,
    wrapped,
)
from parley.model import AgentCard, AgentInterface, GetTaskRequest, SubscribeToTaskRequest, Task
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation

T = TypeVar("T")
R = TypeVar("R")


class Session:
    """A transport with the client's settings: default extensions, unary `timeout`,
    `retry` policy (idempotent calls), `streaming` policy, extra `headers`; the card and
    interface it was connected through; the `tenant` put into every request (by default
    the interface's); `http`, an httpx client closed with the session."""

    def __init__(
        self,
        transport: Transport,
        *,
        card: AgentCard | None = None,
        interface: AgentInterface | None = None,
        extensions: Sequence[str] = (),
        timeout: float | None = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        streaming: StreamPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        tenant: str | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        wrappers = transport_wrappers.get()
        self.transport = wrapped(transport, wrappers) if wrappers else transport
        self._card = card
        self.interface = interface
        self.tenant = tenant if tenant is not None else interface.tenant if interface else ""
        self.extensions = tuple(extensions)
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.streaming = streaming or StreamPolicy()
        self.headers = dict(headers or {})
        self._http = http
        """An httpx client the Client closes (the one `connect` made)."""

    @property
    def card(self) -> AgentCard:
        """The agent card it was connected through (the extended one once fetched);
        ClientError for a client made without one (`Client(transport)`)."""
        if self._card is None:
            raise ClientError("This client has no agent card: Client.connect(url) fetches it")
        return self._card

    @card.setter
    def card(self, card: AgentCard) -> None:
        self._card = card

    @property
    def version(self) -> Version:
        return self.transport.version

    def _options(self, extensions: Sequence[str], timeout: Timeout) -> CallOptions:
        wanted = tuple(dict.fromkeys((*self.extensions, *extensions)))
        return CallOptions(
            extensions=wanted,
            timeout=self.timeout if timeout is DEFAULT else timeout,
            idle_timeout=self.streaming.idle_timeout,
            headers=self.headers,
        )

    async def _call(
        self,
        operation: Operation,
        method: Callable[[R, CallOptions], Awaitable[T]],
        request: R,
        extensions: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
    ) -> T:
        """`method(request, options)`: the transport's method for `operation`, retried when
        the operations table says the operation is idempotent."""
        options = self._options(extensions, timeout)
        if OPERATIONS[operation].idempotent:
            return await retrying(self.retry, lambda: method(request, options))
        return await method(request, options)

    def _stream(
        self,
        open: Callable[[CallOptions], EventStream],
        options: CallOptions,
        task_id: str = "",
    ) -> ClientStream:
        def resubscribe(task: str, again: CallOptions) -> EventStream:
            request = SubscribeToTaskRequest(id=task, tenant=self.tenant)
            return self.transport.subscribe_to_task(request, again)

        async def get_task(task: str) -> Task:
            request = GetTaskRequest(id=task, tenant=self.tenant)
            return await self._call(
                Operation.GET_TASK, self.transport.get_task, request, options.extensions
            )

        return ClientStream(
            open,
            options=options,
            policy=self.streaming,
            resubscribe=resubscribe,
            get_task=get_task,
            task_id=task_id,
        )

    # ------------------------------------------------------------------ lifetime

    async def aclose(self) -> None:
        try:
            await self.transport.aclose()
        finally:
            if self._http is not None:
                await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
