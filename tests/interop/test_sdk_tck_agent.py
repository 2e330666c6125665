"""The conformance kit's agent on the official SDK (`tests.interop.sdk_tck_agent`), the
upstream of the proxy's TCK comparison: each messageId prefix behaves as the kit expects,
read back by Parley's client over the SDK's JSON-RPC 1.0."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, cast

import pytest

from parley.client import Client
from parley.model import (
    DataPart,
    Message,
    RawPart,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TextPart,
    UrlPart,
)
from tests.interop import sdk_tck_agent
from tests.interop.live import serving

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with serving(cast("Any", sdk_tck_agent.app)) as url:
        yield url


def kit_message(prefix: str) -> Message:
    return Message(
        role=Role.USER, parts=(TextPart(text="hi"),), message_id=f"{prefix}-{uuid.uuid4()}"
    )


def parts_of(task: Task) -> list[Any]:
    return [part for artifact in task.artifacts for part in artifact.parts]


async def test_unknown_ids_complete_with_the_kits_greeting(upstream: str) -> None:
    async with Client.connect(upstream) as client:
        task = await client.send(kit_message("tck-complete-task"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.status.message is not None
    assert task.status.message.text == "Hello from TCK"


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("tck-artifact-text", TextPart(text="Generated text content")),
        (
            "tck-artifact-file-url",
            UrlPart(
                url="https://example.com/output.txt",
                media_type="text/plain",
                filename="output.txt",
            ),
        ),
        ("tck-artifact-file", RawPart(raw=b"tck", media_type="text/plain", filename="output.txt")),
        ("tck-artifact-data", DataPart(data={"key": "value", "count": 42})),
    ],
)
async def test_artifact_scenarios_pick_the_most_specific_prefix(
    upstream: str, prefix: str, expected: Any
) -> None:
    async with Client.connect(upstream) as client:
        task = await client.send(kit_message(prefix))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert parts_of(task) == [expected]


async def test_message_response_and_interrupted_states(upstream: str) -> None:
    async with Client.connect(upstream) as client:
        reply = await client.send(kit_message("tck-message-response"))
        asked = await client.send(kit_message("tck-input-required"))
        rejected = await client.send(kit_message("tck-reject-task"))
    assert isinstance(reply, Message)
    assert reply.text == "Direct message response"
    assert isinstance(asked, Task)
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert isinstance(rejected, Task)
    assert rejected.status.state is TaskState.REJECTED


async def test_chunked_stream_appends_two_chunks(upstream: str) -> None:
    async with Client.connect(upstream) as client:
        events = [e async for e in client.stream(kit_message("tck-stream-artifact-chunked"))]
        updates = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        task = await client.get_task(updates[0].task_id)
    assert [(u.append, u.last_chunk) for u in updates] == [(False, False), (True, True)]
    assert task.status.state is TaskState.COMPLETED
    assert parts_of(task) == [TextPart(text="chunk-1 chunk-2")] or [
        p.text for p in parts_of(task)
    ] == ["chunk-1 ", "chunk-2"]
