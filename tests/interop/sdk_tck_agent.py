"""The conformance kit's agent written on the official a2a-sdk server (1.x), served over
JSON-RPC in 1.0 only: the upstream of the proxy's TCK comparison (docs/proxy.md, "The
official TCK through the proxy"). Behaviour is keyed on the incoming `messageId` prefix,
most specific first, as the kit's README describes; only the SDK's public API is used.

    python -m tests.interop.sdk_tck_agent --port 9301
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import uvicorn
from a2a.helpers import new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    TaskState,
)
from google.protobuf.struct_pb2 import Struct, Value
from starlette.applications import Starlette

STREAMING_TIMEOUT_S = 2.0
"""The kit's TCK_STREAMING_TIMEOUT default; the resubscribe task outlives twice that."""

Behaviour = Callable[[TaskUpdater, EventQueue], Awaitable[None]]


def _file_url() -> Any:
    return Part(
        url="https://example.com/output.txt", media_type="text/plain", filename="output.txt"
    )


def _file_raw() -> Any:
    return Part(raw=b"tck", media_type="text/plain", filename="output.txt")


def _data() -> Any:
    data = Value(struct_value=Struct())
    data.struct_value.update({"key": "value", "count": 42})
    return Part(data=data)


def _artifact(part: Callable[[], Any]) -> Behaviour:
    async def run(updater: TaskUpdater, _queue: EventQueue) -> None:
        await updater.add_artifact([part()])
        await updater.complete()

    return run


def _streamed(part: Callable[[], Any]) -> Behaviour:
    async def run(updater: TaskUpdater, _queue: EventQueue) -> None:
        await updater.start_work()
        await updater.add_artifact([part()])
        await updater.complete()

    return run


async def _complete(updater: TaskUpdater, _queue: EventQueue) -> None:
    await updater.complete(updater.new_agent_message([new_text_part("Hello from TCK")]))


async def _input_required(updater: TaskUpdater, _queue: EventQueue) -> None:
    await updater.requires_input(
        updater.new_agent_message([new_text_part("Please provide more input")])
    )


async def _reject(updater: TaskUpdater, _queue: EventQueue) -> None:
    await updater.reject(updater.new_agent_message([new_text_part("Rejected by the TCK agent")]))


async def _straight_to_completed(updater: TaskUpdater, _queue: EventQueue) -> None:
    await updater.complete()


async def _chunked(updater: TaskUpdater, _queue: EventQueue) -> None:
    await updater.start_work()
    await updater.add_artifact([new_text_part("chunk-1 ")], artifact_id="chunked")
    await updater.add_artifact(
        [new_text_part("chunk-2")], artifact_id="chunked", append=True, last_chunk=True
    )
    await updater.complete()


async def _long(updater: TaskUpdater, _queue: EventQueue) -> None:
    await updater.start_work()
    await asyncio.sleep(2 * STREAMING_TIMEOUT_S + 1)
    await updater.complete()


def _text(text: str) -> Callable[[], Any]:
    return lambda: new_text_part(text)


BEHAVIOURS: tuple[tuple[str, Behaviour], ...] = (
    ("tck-artifact-text", _artifact(_text("Generated text content"))),
    ("tck-artifact-file-url", _artifact(_file_url)),
    ("tck-artifact-file", _artifact(_file_raw)),
    ("tck-artifact-data", _artifact(_data)),
    ("tck-input-required", _input_required),
    ("tck-reject-task", _reject),
    ("tck-stream-artifact-text", _streamed(_text("Streamed text content"))),
    ("tck-stream-artifact-file", _streamed(_file_raw)),
    ("tck-stream-artifact-chunked", _chunked),
    ("tck-stream-ordering-001", _streamed(_text("Streamed text content"))),
    ("tck-stream-002", _straight_to_completed),
    ("tck-stream-001", _streamed(_text("Streamed text content"))),
    ("tck-stream-003", _streamed(_text("Streamed text content"))),
    ("test-resubscribe-message-id", _long),
)
"""Most specific prefix first: `tck-artifact-file-url` before `tck-artifact-file`."""


class TckExecutor(AgentExecutor):  # type: ignore[misc]  # the SDK is untyped here
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task_id, context_id = context.task_id or "", context.context_id or ""
        if message.message_id.startswith("tck-message-response"):
            reply = TaskUpdater(event_queue, task_id, context_id).new_agent_message(
                [new_text_part("Direct message response")]
            )
            await event_queue.enqueue_event(reply)
            return
        if context.current_task is None:
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=[message])
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        behaviour = next(
            (run for prefix, run in BEHAVIOURS if message.message_id.startswith(prefix)),
            _complete,
        )
        await behaviour(updater, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


def card(url: str, *, name: str = "SDK TCK agent") -> Any:
    return AgentCard(
        name=name,
        description="The conformance kit's agent on the official SDK, JSON-RPC 1.0 only.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="tck", name="TCK", description="The kit's scenarios", tags=["tck"])],
    )


def app(url: str) -> Any:
    configs = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=TckExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card(url),
        push_config_store=configs,
        push_sender=BasePushNotificationSender(httpx.AsyncClient(), configs),
        extended_agent_card=card(url, name="SDK TCK agent (extended)"),
    )
    routes = [*create_agent_card_routes(card(url)), *create_jsonrpc_routes(handler, "/")]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=9301)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}/"
    uvicorn.run(app(url), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
