"""The agent the official A2A conformance kit (a2a-tck) expects: its behaviour is keyed on
the prefix of the incoming message's `messageId` (most specific prefix first).

    parley serve examples.tck_agent:agent --grpc-port 50051

(`--grpc-port` adds the gRPC binding of both versions, and its interfaces to the card:
the kits then test gRPC too. The 0.3 kit dials only gRPC URLs with a scheme and wants
every 0.3 interface URL to be http(s) (as the 0.3 schema describes them), so these agents
list their 0.3 gRPC interface as `http://host:port`, where other agents list the bare
`host:port` the official 0.3 clients dial.)

Three variants, because the kit's expectations exclude each other (docs/decisions.md,
"Conformance (official TCK)"):

* `agent` declares the TCK's extension `required`, which CORE-CAP-004 needs; no other TCK
  test sends that extension, so every other request is refused (as the spec demands).
* `agent_v1`: the extension optional, for the rest of the 1.0 suite
  (`parley serve examples.tck_agent:agent_v1 --card v1`).
* `agent_v03`: the same, for the 0.3 suite (`parley serve examples.tck_agent:agent_v03`,
  hybrid card). Its scripted ids all start with `tck-`; any other message (the 0.3 kit's
  ids) keeps its task open in INPUT_REQUIRED, because the 0.3 kit cancels, continues and
  re-reads the tasks its blocking `message/send` calls return.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from parley.model import AgentCard, AgentExtension, DataPart, RawPart, TextPart, UrlPart
from parley.server.agent import Agent
from parley.server.task_context import TaskContext

REQUIRED_EXTENSION = "urn:a2a:tck:required-extension"
STREAMING_TIMEOUT_S = 2.0
"""The TCK's TCK_STREAMING_TIMEOUT default; the resubscribe task outlives twice that."""


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
    """Asks until a follow-up's messageId is not `tck-input-required*` (the TCK's history
    tests send two such follow-ups, then a `tck-complete-task` one)."""
    reply = await task.ask("Please provide more input")
    while reply.message_id.startswith("tck-input-required"):
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


async def _keep_asking(task: TaskContext) -> None:
    """Stays INPUT_REQUIRED through every follow-up, until canceled."""
    while True:
        await task.ask("Please provide more input")


def _dispatch(unscripted: Behaviour) -> Behaviour:
    """The skill: the behaviour for the messageId's prefix; a `tck-` id without one
    completes; any other id gets `unscripted` (returns a coroutine or an async generator)."""

    def tck(task: TaskContext) -> Any:
        message_id = task.message.message_id
        fallback = _complete if message_id.startswith("tck-") else unscripted
        behaviour = next((b for p, b in BEHAVIOURS if message_id.startswith(p)), fallback)
        return behaviour(task)

    return tck


class KitAgent(Agent):
    """An agent whose card names its 0.3 gRPC interface `http://host:port`."""

    def card(self, url: str, *, grpc_address: str | None = None, **kwargs: Any) -> AgentCard:
        if grpc_address and "://" not in grpc_address:
            grpc_address = f"http://{grpc_address}"
        return super().card(url, grpc_address=grpc_address, **kwargs)


def _agent(*, extension_required: bool, unscripted: Behaviour = _complete) -> Agent:
    served = KitAgent(
        "Parley TCK agent",
        description="Answers the official A2A conformance kit's scripted messages.",
        streaming=True,
        push_notifications=True,
        input_modes=("text/plain", "application/json"),
        output_modes=("text/plain", "application/json"),
        extensions=(
            AgentExtension(
                uri=REQUIRED_EXTENSION,
                description="Required by the kit's required-extension checks",
                required=extension_required,
            ),
        ),
    )
    tags = ["tck"]
    served.skill("tck", description="Scripted behaviours for the conformance kit", tags=tags)(
        _dispatch(unscripted)
    )
    return served


agent = _agent(extension_required=True)
agent_v1 = _agent(extension_required=False)
agent_v03 = _agent(extension_required=False, unscripted=_keep_asking)
