"""An a2a-sdk 1.x executor run unchanged through `from_executor` (issue 18, part 1): the same
scenarios — a direct message, an echo through `TaskUpdater`, streamed artifact chunks,
input-required then the follow-up, cancel — on the SDK's own server and on Parley, through
Parley's client in both protocol versions over JSON-RPC and HTTP+JSON (and, on Parley, gRPC).
What a client observes (states in order, artifacts, messages) must be the same.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from parley.client import Client, Reconnected, user_message
from parley.model import (
    Artifact,
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.negotiation import Version
from tests.adapters.sdk_agent import CHUNKS, QUESTION, ScenarioExecutor, on_parley, on_sdk

pytestmark = pytest.mark.anyio

Observation = object
Scenario = Callable[[Client, ScenarioExecutor], Awaitable[Observation]]


def text(parts: tuple[object, ...]) -> str:
    return "".join(part.text for part in parts if isinstance(part, TextPart))


def artifacts(task: Task) -> list[tuple[str, str]]:
    return [(artifact.name, text(artifact.parts)) for artifact in task.artifacts]


def observed(event: StreamEvent | Task | Message) -> tuple[object, ...]:
    """What a client sees of an event, without ids and timestamps."""
    if isinstance(event, Task):
        return ("task", event.status.state.name, artifacts(event))
    if isinstance(event, Message):
        return ("message", event.role.name, text(event.parts))
    if isinstance(event, TaskStatusUpdateEvent):
        said = event.status.message
        return ("status", event.status.state.name, text(said.parts) if said else "")
    assert isinstance(event, TaskArtifactUpdateEvent)
    chunk: Artifact = event.artifact
    return ("chunk", chunk.name, text(chunk.parts), event.append, event.last_chunk)


# ---------------------------------------------------------------------------- scenarios


async def direct_message(client: Client, executor: ScenarioExecutor) -> Observation:
    return observed(await client.send(user_message("hi")))


async def echo(client: Client, executor: ScenarioExecutor) -> Observation:
    task = await client.send(user_message("echo hello, world"))
    assert isinstance(task, Task)
    stored = await client.get_task(task.id)
    return [observed(task), observed(stored)]


async def streamed_chunks(client: Client, executor: ScenarioExecutor) -> Observation:
    async with client.stream(user_message("chunks")) as stream:
        events = [event async for event in stream if not isinstance(event, Reconnected)]
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    stored = await client.get_task(last.task_id)
    return [*(observed(event) for event in events), observed(stored)]


async def input_then_follow_up(client: Client, executor: ScenarioExecutor) -> Observation:
    asked = await client.send(user_message("greet"))
    assert isinstance(asked, Task)
    question = asked.status.message
    done = await client.send(user_message("Ada", task_id=asked.id, context_id=asked.context_id))
    assert isinstance(done, Task)
    answer = done.status.message
    return [
        observed(asked),
        text(question.parts) if question else None,
        observed(done),
        text(answer.parts) if answer else None,
        done.id == asked.id,
    ]


async def cancel(client: Client, executor: ScenarioExecutor) -> Observation:
    started = await client.send(user_message("wait"), return_immediately=True)
    assert isinstance(started, Task)
    with anyio.fail_after(5):
        while (await client.get_task(started.id)).status.state is not TaskState.WORKING:
            await anyio.sleep(0.01)
    canceled = await client.cancel_task(started.id)
    stored = await client.get_task(started.id)
    return [canceled.status.state.name, stored.status.state.name, started.id in executor.canceled]


SCENARIOS: dict[str, Scenario] = {
    "direct message": direct_message,
    "echo": echo,
    "streamed chunks": streamed_chunks,
    "input-required, then the follow-up": input_then_follow_up,
    "cancel": cancel,
}

EXPECTED: dict[str, Observation] = {
    "direct message": ("message", "AGENT", "Hello there!"),
    "echo": [("task", "COMPLETED", [("echo", "hello, world")])] * 2,
    "streamed chunks": [
        ("task", "SUBMITTED", []),
        ("status", "WORKING", ""),
        *(
            ("chunk", "story", chunk, index > 0, index == len(CHUNKS) - 1)
            for index, chunk in enumerate(CHUNKS)
        ),
        ("status", "COMPLETED", ""),
        ("task", "COMPLETED", [("story", "".join(CHUNKS))]),
    ],
    "input-required, then the follow-up": [
        ("task", "INPUT_REQUIRED", []),
        QUESTION,
        ("task", "COMPLETED", [("greeting", "Hello, Ada!")]),
        "Greeted.",
        True,
    ],
    "cancel": ["CANCELED", "CANCELED", True],
}


async def observe(
    url: str, version: Version, binding: str, executor: ScenarioExecutor
) -> dict[str, Observation]:
    async with Client.connect(url, versions=[version], bindings=[binding]) as client:
        return {name: await scenario(client, executor) for name, scenario in SCENARIOS.items()}


@pytest.mark.parametrize("version", [Version.V1_0, Version.V0_3], ids=lambda v: v.value)
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_same_observations_on_the_sdk_server_and_on_parley(
    version: Version, binding: str
) -> None:
    on_its_own, on_ours = ScenarioExecutor(), ScenarioExecutor()
    async with on_sdk(on_its_own) as url:
        sdk = await observe(url, version, binding, on_its_own)
    async with on_parley(on_ours) as url:
        parley = await observe(url, version, binding, on_ours)
    assert parley == sdk
    assert parley == EXPECTED


@pytest.mark.parametrize("version", [Version.V1_0, Version.V0_3], ids=lambda v: v.value)
async def test_grpc(version: Version) -> None:
    executor = ScenarioExecutor()
    async with on_parley(executor) as url:
        assert await observe(url, version, "GRPC", executor) == EXPECTED
