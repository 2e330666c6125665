"""An agent on the official a2a-sdk server (1.x), for the client's interop tests: JSON-RPC and
HTTP+JSON, each in 1.0 and in the SDK's 0.3 compatibility mode, with push configs and an
extended card. Only the SDK's public API is used.

Skills, by message metadata `skill`: `echo` (one artifact, COMPLETED), `chunks` (WORKING,
three appended chunks, COMPLETED), `greet` (INPUT_REQUIRED, then greets the follow-up),
`wait` (WORKING, then waits for the test to open the gate named by the text, then an
artifact and COMPLETED). The agent runs on the server's thread: gates are thread-safe.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from a2a.helpers import get_message_text, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
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


def sdk_card(url: str, *, name: str = "SDK agent") -> Any:
    """Every binding in 1.0, then in 0.3, all at `url`."""
    interfaces = [
        AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        for version in ("1.0", "0.3")
        for binding in ("JSONRPC", "HTTP+JSON")
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


def sdk_app(url: str, gates: Gates) -> Any:
    """The SDK's Starlette app: the card, JSON-RPC at `/` and REST, both with 0.3 compat."""
    card = sdk_card(url)
    handler = DefaultRequestHandler(
        agent_executor=SkillExecutor(gates),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
        extended_agent_card=sdk_card(url, name=EXTENDED_NAME),
    )
    return Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
            *create_rest_routes(handler, enable_v0_3_compat=True),
        ]
    )
