"""`parley check` against the official a2a-sdk 1.3 server's gRPC interfaces (1.0, and 0.3
through its compatibility handler) beside its HTTP ones: no MUST fails over gRPC but its
known defect (docs/check.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import grpc
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import AgentInterface
from starlette.applications import Starlette

from parley.asgi import A2AApp
from parley.conformance import Status
from parley.grpc import GrpcServer
from tests.client.sdk_server import Gates, SkillExecutor, sdk_card
from tests.conformance.test_checker import run
from tests.conformance.test_grpc_checks import grpc_failures, on_grpc
from tests.interop.live import serving
from tests.ports import free_port


class _SdkGrpc:
    """The SDK's gRPC server, started and stopped in the HTTP server's event loop."""

    def __init__(self, handler: DefaultRequestHandler, port: int) -> None:
        self.handler, self.port = handler, port
        self.server: Any = None

    async def start(self) -> None:
        self.server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(self.handler), self.server)
        compat = CompatGrpcHandler(self.handler)
        a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(compat, self.server)
        self.server.add_insecure_port(f"127.0.0.1:{self.port}")
        await self.server.start()

    async def stop(self, grace: float | None) -> None:
        await self.server.stop(grace)


def test_the_official_sdk_over_grpc() -> None:
    port = free_port()
    handlers: list[DefaultRequestHandler] = []

    def make_app(url: str) -> A2AApp:
        card = sdk_card(url)
        for version in ("1.0", "0.3"):
            card.supported_interfaces.append(
                AgentInterface(
                    url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version=version
                )
            )
        handler = DefaultRequestHandler(
            agent_executor=SkillExecutor(Gates()),
            task_store=InMemoryTaskStore(),
            agent_card=card,
            push_config_store=InMemoryPushNotificationConfigStore(),
        )
        handlers.append(handler)
        app = Starlette(
            routes=[
                *create_agent_card_routes(card),
                *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
                *create_rest_routes(handler, enable_v0_3_compat=True),
            ]
        )
        return cast("A2AApp", app)

    make_grpc = cast("Callable[[], GrpcServer]", lambda: _SdkGrpc(handlers[0], port))
    with serving(make_app, make_grpc) as url:
        report = run(url)
    # its gRPC handler ignores the a2a-version metadata: 9.9 is served as 1.0
    assert grpc_failures(report) == {("version.unsupported", "1.0")}
    for check_id in ("send.shape", "get.not-found", "cancel.terminal", "stream.order"):
        assert on_grpc(report, check_id) == [Status.PASS] * 2, check_id
