"""An agent written against the a2a-sdk 1.x documentation, as a user of the SDK writes one
(`AgentExecutor` with `TaskUpdater`), and the two servers that run it: the SDK's own
(JSON-RPC and HTTP+JSON, each with its 0.3 compatibility) and Parley, through
`from_executor` (every binding, both versions).

What it does, by the first word of the user's text: `hi` answers with a direct message;
`echo TEXT` returns TEXT as an artifact; `chunks` streams one artifact in appended chunks;
`greet` asks for a name (input-required) and greets the follow-up; `wait` works until it
is canceled.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
from starlette.applications import Starlette

from parley.adapters.a2a_sdk import SdkAgent, from_executor
from parley.asgi import build_app
from parley.grpc import GrpcServer
from parley.server.service import AgentService
from tests.ports import free_port

CHUNKS = ("Once ", "upon ", "a ", "time.")
QUESTION = "What is your name?"


class ScenarioExecutor(AgentExecutor):  # type: ignore[misc]  # the SDK is untyped here
    """The agent: one executor, as the SDK's documentation shows them."""

    def __init__(self) -> None:
        self.canceled: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None and text == "hi":
            await event_queue.enqueue_event(new_text_message("Hello there!"))
            return
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact([new_text_part(f"Hello, {text}!")], name="greeting")
            await updater.complete(updater.new_agent_message([new_text_part("Greeted.")]))
            return
        command, _, rest = text.partition(" ")
        if command == "greet":
            await updater.requires_input(updater.new_agent_message([new_text_part(QUESTION)]))
            return
        await updater.start_work()
        if command == "chunks":
            for index, chunk in enumerate(CHUNKS):
                await updater.add_artifact(
                    [new_text_part(chunk)],
                    artifact_id="story",
                    name="story",
                    append=index > 0,
                    last_chunk=index == len(CHUNKS) - 1,
                )
        elif command == "wait":
            await asyncio.Event().wait()  # until the task is canceled
        else:
            await updater.add_artifact([new_text_part(rest)], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.canceled.append(context.task_id or "")
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def sdk_card(url: str) -> Any:
    """The agent's card as its author wrote it for the SDK's server."""
    return AgentCard(
        name="Scenario agent",
        description="Echoes, streams, asks and waits.",
        version="2.1.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
            for version in ("1.0", "0.3")
            for binding in ("JSONRPC", "HTTP+JSON")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="scenarios", name="Scenarios", description="Every scenario", tags=["test"]
            )
        ],
    )


def sdk_app(executor: ScenarioExecutor, url: str) -> Starlette:
    """The SDK's own server, as its documentation serves an executor."""
    card = sdk_card(url)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
            *create_rest_routes(handler, enable_v0_3_compat=True),
        ]
    )


def reserved() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


@asynccontextmanager
async def serving(app: Any, sock: socket.socket) -> AsyncIterator[str]:
    """`app` under uvicorn in this event loop, on `sock` (127.0.0.1)."""
    config = uvicorn.Config(
        app, lifespan="on", log_config=None, log_level="warning", http="h11", ws="none",
        timeout_graceful_shutdown=2,
    )  # fmt: skip
    server = uvicorn.Server(config)
    running = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            assert not running.done(), "uvicorn did not start"
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await running
        sock.close()


@asynccontextmanager
async def on_sdk(executor: ScenarioExecutor) -> AsyncIterator[str]:
    sock = reserved()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with serving(sdk_app(executor, url), sock) as served:
        yield served


def parley_agent(executor: ScenarioExecutor) -> SdkAgent:
    """The one line that moves the agent to Parley (its card's interfaces are Parley's)."""
    return from_executor(executor, card=sdk_card("http://127.0.0.1"))


@asynccontextmanager
async def on_parley(executor: ScenarioExecutor) -> AsyncIterator[str]:
    """The agent on Parley: HTTP (JSON-RPC, HTTP+JSON) and gRPC, both versions each."""
    agent = parley_agent(executor)
    sock = reserved()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    port = free_port()
    service = AgentService(agent.executor(), agent.card(url, grpc_address=f"127.0.0.1:{port}"))
    async with serving(build_app(service), sock) as served, GrpcServer(service, port=port):
        yield served


agent = parley_agent(ScenarioExecutor())
"""What `parley serve tests.adapters.sdk_agent:agent` serves."""
