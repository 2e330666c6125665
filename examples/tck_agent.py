"""The agent the official A2A conformance kit (a2a-tck) expects: its behaviour is keyed on
the prefix of the incoming message's `messageId` (most specific prefix first).

    parley serve examples.tck_agent:agent
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from parley.model import AgentExtension, DataPart, RawPart, TextPart, UrlPart
from parley.server.agent import Agent
from parley.server.task_context import TaskContext

REQUIRED_EXTENSION = "urn:a2a:tck:required-extension"
STREAMING_TIMEOUT_S = 2.0
"""The TCK's TCK_STREAMING_TIMEOUT default; the resubscribe task outlives twice that."""

agent = Agent(
    "Parley TCK agent",
    description="Answers the official A2A conformance kit's scripted messages.",
    streaming=True,
    push_notifications=True,
    input_modes=("text/plain", "application/json"),
    output_modes=("text/plain", "application/json"),
    extensions=(
        AgentExtension(
            uri=REQUIRED_EXTENSION,
            description="Required by the TCK's required-extension tests",
            required=True,
        ),
    ),
)

FILE_URL = UrlPart(
    url="https://example.com/output.txt", media_type="text/plain", filename="output.txt"
)
FILE_RAW = RawPart(raw=b"tck", media_type="text/plain", filename="output.txt")

Behaviour = Callable[[TaskContext], Any]


async def _complete(task: TaskContext) -> None:
    await task.complete("Hello from TCK")


async def _message(task: TaskContext) -> Any:
    return task.reply("Direct message response")


async def _input_required(task: TaskContext) -> str:
    reply = await task.ask("Please provide more input")
    return f"Received: {''.join(p.text for p in reply.parts if isinstance(p, TextPart))}"


async def _reject(task: TaskContext) -> None:
    task.reject("Rejected by the TCK agent")


def _streamed(*chunks: Any) -> Callable[[TaskContext], AsyncIterator[Any]]:
    async def stream(task: TaskContext) -> AsyncIterator[Any]:
        for chunk in chunks:
            yield chunk

    return stream


async def _straight_to_completed(task: TaskContext) -> None:
    await task.complete()


async def _long_running(task: TaskContext) -> str:
    await task.update("Working on it")
    await asyncio.sleep(STREAMING_TIMEOUT_S * 2 + 1)
    return "Done"


async def _returns(value: Any) -> Any:
    return value


def _value(value: Any) -> Callable[[TaskContext], Awaitable[Any]]:
    return lambda task: _returns(value)


BEHAVIOURS: list[tuple[str, Behaviour]] = [
    ("tck-stream-artifact-chunked", _streamed("chunk-1 ", "chunk-2")),
    ("tck-stream-artifact-text", _streamed("Streamed text content")),
    ("tck-stream-artifact-file", _streamed(FILE_RAW)),
    ("tck-stream-ordering-001", _streamed("Streamed text content")),
    ("tck-stream-001", _streamed("Streamed text content")),
    ("tck-stream-003", _streamed("Streamed text content")),
    ("tck-stream-002", _straight_to_completed),
    ("tck-artifact-file-url", _value(FILE_URL)),
    ("tck-artifact-file", _value(FILE_RAW)),
    ("tck-artifact-text", _value("Generated text content")),
    ("tck-artifact-data", _value(DataPart(data={"key": "value", "count": 42}))),
    ("tck-message-response", _message),
    ("tck-input-required", _input_required),
    ("tck-reject-task", _reject),
    ("test-resubscribe-message-id", _long_running),
    ("tck-complete-task", _complete),
]
"""Most specific prefix first; anything else completes like tck-complete-task."""


@agent.skill("tck", description="Scripted behaviours for the conformance kit", tags=["tck"])
def tck(task: TaskContext) -> Any:
    """Dispatch on the messageId prefix (returns a coroutine or an async generator)."""
    message_id = task.message.message_id
    behaviour = next((b for prefix, b in BEHAVIOURS if message_id.startswith(prefix)), _complete)
    return behaviour(task)
