"""An agent on the official a2a-sdk server (1.x), for the client's interop tests: JSON-RPC and
HTTP+JSON, each in 1.0 and in the SDK's 0.3 compatibility mode, and, if asked, its gRPC
services of both versions on one port; with push configs and an extended card. Only the
SDK's public API is used.

Skills, by message metadata `skill`: `echo` (one artifact, COMPLETED), `chunks` (WORKING,
three appended chunks, COMPLETED), `greet` (INPUT_REQUIRED, then greets the follow-up),
`wait` (WORKING, then waits for the test to open the gate named by the text, then an
artifact and COMPLETED). The agent runs on the server's thread: gates are thread-safe.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import grpc
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc as sdk_grpc03
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.helpers import get_message_text, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2_grpc as sdk_grpc10
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)
from starlette.applications import Starlette

from tests.interop.agent import STREAM_CHUNKS

SKILLS = ("echo", "chunks", "greet", "wait")
EXTENDED_NAME = "SDK agent (extended)"


class Gates:
    """Thread-safe gates the tests open, keyed by message text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gates: dict[str, threading.Event] = {}

    def gate(self, key: str) -> threading.Event:
        with self._lock:
            return self._gates.setdefault(key, threading.Event())


class SkillExecutor(AgentExecutor):  # type: ignore[misc]  # the SDK is untyped here
    """The four skills, chosen by the message's `skill` metadata."""

    def __init__(self, gates: Gates) -> None:
        self.gates = gates

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task_id, context_id = context.task_id or "", context.context_id or ""
        current = context.current_task
        if current is None:
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=[message])
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        text = get_message_text(message)
        metadata = message.metadata
        skill = metadata["skill"] if "skill" in metadata else "greet"  # noqa: SIM401
        if current is not None:  # the follow-up of `greet`
            await updater.add_artifact([new_text_part(f"Hello, {text}!")])
        elif skill == "greet":
            await updater.requires_input(updater.new_agent_message([new_text_part("Name?")]))
            return
        elif skill == "chunks":
            await self._chunks(updater)
        elif skill == "wait":
            await updater.start_work()
            gate = self.gates.gate(text)
            while not gate.is_set():
                await asyncio.sleep(0.005)
            await updater.add_artifact([new_text_part(f"result: {text}")])
        else:
            await updater.add_artifact([new_text_part(text)])
        await updater.complete()

    @staticmethod
    async def _chunks(updater: TaskUpdater) -> None:
        await updater.start_work()
        for index, chunk in enumerate(STREAM_CHUNKS):
            await updater.add_artifact(
                [new_text_part(chunk)],
                artifact_id="chunks",
                append=index > 0,
                last_chunk=index == len(STREAM_CHUNKS) - 1,
            )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def sdk_card(url: str, *, name: str = "SDK agent", grpc_address: str = "") -> Any:
    """Every HTTP binding in 1.0, then in 0.3, all at `url`; then, with `grpc_address`, its
    gRPC interfaces: 1.0 a bare `host:port`, 0.3 the `grpc://host:port` form older Parley
    servers listed (the client dials both)."""
    interfaces = [
        AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        for version in ("1.0", "0.3")
        for binding in ("JSONRPC", "HTTP+JSON")
    ]
    if grpc_address:
        interfaces += [
            AgentInterface(url=grpc_address, protocol_binding="GRPC", protocol_version="1.0"),
            AgentInterface(
                url=f"grpc://{grpc_address}", protocol_binding="GRPC", protocol_version="0.3"
            ),
        ]
    return AgentCard(
        name=name,
        description="The official SDK, serving the client tests.",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id=s, name=s.title(), description=s, tags=[s]) for s in SKILLS],
    )


class SdkGrpcServer:
    """The SDK's gRPC services, 1.0 and 0.3, over `handler` on 127.0.0.1:`port`; made and
    started in the loop that serves it (`tests.interop.live.serving`)."""

    def __init__(self, handler: DefaultRequestHandler, port: int) -> None:
        self.handler = handler
        self.port = port
        self.server: grpc.aio.Server | None = None

    async def start(self) -> None:
        server = grpc.aio.server()
        sdk_grpc10.add_A2AServiceServicer_to_server(GrpcHandler(self.handler), server)
        sdk_grpc03.add_A2AServiceServicer_to_server(CompatGrpcHandler(self.handler), server)
        server.add_insecure_port(f"127.0.0.1:{self.port}")
        await server.start()
        self.server = server

    async def stop(self, grace: float | None = None) -> None:
        if self.server is not None:
            await self.server.stop(grace)


def sdk_app(url: str, gates: Gates) -> Any:
    """The SDK's Starlette app: the card, JSON-RPC at `/` and REST, both with 0.3 compat."""
    app, _ = sdk_servers(url, gates)
    return app


def sdk_servers(url: str, gates: Gates, grpc_port: int = 0) -> tuple[Any, SdkGrpcServer]:
    """The SDK's Starlette app (as `sdk_app`) and, over the same request handler, its gRPC
    server for 127.0.0.1:`grpc_port` (not started), which the card names if the port is
    given."""
    grpc_address = f"127.0.0.1:{grpc_port}" if grpc_port else ""
    card = sdk_card(url, grpc_address=grpc_address)
    handler = DefaultRequestHandler(
        agent_executor=SkillExecutor(gates),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
        extended_agent_card=sdk_card(url, name=EXTENDED_NAME, grpc_address=grpc_address),
    )
    app = Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
            *create_rest_routes(handler, enable_v0_3_compat=True),
        ]
    )
    return app, SdkGrpcServer(handler, grpc_port)
