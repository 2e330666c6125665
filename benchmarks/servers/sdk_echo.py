"""The same echo agent on the official a2a-sdk server (1.x): its Starlette JSON-RPC and
agent-card routes over `DefaultRequestHandler` with the SDK's in-memory task store (or
its SQL store on the database `BENCH_SDK_DB` names).

`echo` completes a task with one text artifact (what Parley's `return task.text` does),
`stream` adds 100 artifact chunks, `wait` never finishes; chosen by message metadata
`skill`, like Parley's `Agent.route`. Only the public SDK API is used.
"""

from __future__ import annotations

import asyncio
import os

from a2a.helpers import get_message_text, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from benchmarks.servers import SKILLS, STREAM_CHUNKS, instrumented

URL = "http://127.0.0.1:8000/"
_never = asyncio.Event()


class EchoExecutor(AgentExecutor):  # type: ignore[misc]  # the SDK is untyped here
    """Echo, stream 100 chunks, or wait forever — by the message's `skill` metadata."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task_id, context_id = context.task_id or "", context.context_id or ""
        if context.current_task is None:
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=[message])
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        text = get_message_text(message)
        metadata = message.metadata  # a protobuf Struct: no `get`
        skill = metadata["skill"] if "skill" in metadata else "echo"  # noqa: SIM401
        if skill == "stream":
            await updater.start_work()
            artifact_id = "chunks"
            for index in range(STREAM_CHUNKS):
                await updater.add_artifact(
                    [new_text_part(text)],
                    artifact_id=artifact_id,
                    append=index > 0,
                    last_chunk=index == STREAM_CHUNKS - 1,
                )
        elif skill == "wait":
            await updater.start_work()
            await _never.wait()
        else:
            await updater.add_artifact([new_text_part(text)])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


card = AgentCard(
    name="Echo",
    description="Repeats what you say.",
    version="1.0.0",
    supported_interfaces=[
        AgentInterface(url=URL, protocol_binding="JSONRPC", protocol_version="1.0")
    ],
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[
        AgentSkill(id=skill, name=skill.title(), description=skill, tags=[skill])
        for skill in SKILLS
    ],
)


def _task_store() -> TaskStore:
    """The SDK's in-memory store, or with `BENCH_SDK_DB` (an SQLAlchemy async URL) its SQL
    store on that database."""
    database = os.environ.get("BENCH_SDK_DB")
    if not database:
        return InMemoryTaskStore()
    from a2a.server.tasks import DatabaseTaskStore  # noqa: PLC0415  # needs SQLAlchemy
    from sqlalchemy.ext.asyncio import create_async_engine  # noqa: PLC0415

    return DatabaseTaskStore(create_async_engine(database))


handler = DefaultRequestHandler(
    agent_executor=EchoExecutor(), task_store=_task_store(), agent_card=card
)


async def _health(_: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


app = instrumented(
    Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, "/"),
            Route("/healthz", _health, methods=["GET"]),
        ]
    )
)
