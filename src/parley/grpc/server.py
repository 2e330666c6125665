"""`GrpcServer`: a `grpc.aio` server for one RequestHandler, every served version's
`A2AService` on one port, with the input limits applied; and `serve_grpc`, which runs
one until cancelled. It shares the event loop (and the handler) with an ASGI server.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

import grpc

from parley.grpc.servicer import A2AServicer, Settings
from parley.protocol.negotiation import Version, released_form, served_by
from parley.server.context import Authenticator, authenticator_of
from parley.server.handler import RequestHandler
from parley.server.quotas import rate_limiter_of
from parley.wire.errors import DEFAULT_WIRE_COMPAT, error_table
from parley.wire.limits import DEFAULT_LIMITS, Limits


class GrpcServer:
    """A gRPC server for `handler` at `host:port` (port 0: any free port; `port` is
    the bound one once started). Use `async with`, or `start` and `stop`.

    `credentials`: serve TLS (`grpc.ssl_server_credentials`; with `root_certificates`
    and `require_client_auth=True`, mutual TLS: the verified client certificate reaches
    the authenticator as `AuthRequest.peer_certificate`); None: plaintext.
    `wire_compat`: the spec release whose 1.0 error statuses are sent, `"1.0.1"` or
    `"1.0.0"` (`parley.wire.errors.WIRE_COMPAT`; D17)."""

    def __init__(
        self,
        handler: RequestHandler,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        authenticator: Authenticator | None = None,
        limits: Limits = DEFAULT_LIMITS,
        served_versions: Sequence[Version] | None = None,
        grace_seconds: float = 5.0,
        credentials: grpc.ServerCredentials | None = None,
        wire_compat: str = DEFAULT_WIRE_COMPAT,
    ) -> None:
        if served_versions is None:  # 1.0, 0.3, and the drafts the card lists
            served_versions = served_by(handler.card)
        if not served_versions:
            raise ValueError("served_versions must name at least one version")
        self.host = host
        self.port = port
        self.grace_seconds = grace_seconds
        self.credentials = credentials
        served = tuple(dict.fromkeys(served_versions))
        authenticator = authenticator_of(handler, authenticator)
        limiter, errors = rate_limiter_of(handler), error_table(wire_compat)
        settings = Settings(handler, authenticator, served, limits, limiter, errors)
        self.servicers = [A2AServicer(settings, v) for v in served if released_form(v) is v]
        self._options = [
            ("grpc.max_receive_message_length", limits.max_body_bytes),
            ("grpc.max_send_message_length", limits.max_body_bytes),
        ]
        self._server: grpc.aio.Server | None = None
        self.interceptors: list[grpc.aio.ServerInterceptor] = []
        """Interceptors the server is started with (`parley.observability.observe_grpc`)."""

    @property
    def address(self) -> str:
        """`host:port` as a gRPC client dials it (IPv6 hosts in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    async def start(self) -> int:
        """Bind and start serving; the bound port."""
        if self._server is not None:
            raise RuntimeError("the gRPC server is already started")
        server = grpc.aio.server(options=self._options, interceptors=self.interceptors or None)
        server.add_generic_rpc_handlers([servicer.rpc_handler() for servicer in self.servicers])
        if self.credentials is None:
            self.port = server.add_insecure_port(self.address)
        else:
            self.port = server.add_secure_port(self.address, self.credentials)
        await server.start()
        self._server = server
        return self.port

    async def stop(self, grace: float | None = None) -> None:
        """Stop accepting calls; calls in flight get `grace` seconds (default: the
        server's), then are cancelled (their streams' iterators are closed)."""
        server, self._server = self._server, None
        if server is not None:
            await server.stop(self.grace_seconds if grace is None else grace)

    async def wait(self) -> None:
        """Until the server stops."""
        if self._server is not None:
            await self._server.wait_for_termination()

    async def __aenter__(self) -> GrpcServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()


async def serve_grpc(
    handler: RequestHandler,
    port: int,
    host: str = "127.0.0.1",
    *,
    authenticator: Authenticator | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """Serve `handler` over gRPC on `host:port` until cancelled, then stop gracefully."""
    server = GrpcServer(handler, host=host, port=port, authenticator=authenticator, limits=limits)
    async with server:
        await server.wait()
