"""Smoke tests of every example agent, served by `AgentService` (no network)."""

from __future__ import annotations

import asyncio
from types import ModuleType

import pytest

from examples import echo, multi_turn, streaming, tck_agent
from parley.model import (
    CancelTaskRequest,
    DataPart,
    GetTaskRequest,
    Part,
    TaskArtifactUpdateEvent,
    TaskState,
    TextPart,
)
from parley.server.agent import STREAM_RESUME_URI, Agent
from tests.server.support import (
    ALICE,
    artifact_text,
    as_message,
    as_task,
    collect,
    kinds,
    run,
    send,
    serve,
    settle,
    text_of,
    wait_for_state,
)


@pytest.mark.parametrize("example", [echo, streaming, multi_turn, tck_agent])
def test_every_example_has_a_card_with_skills(example: ModuleType) -> None:
    agent = example.agent
    assert isinstance(agent, Agent)
    card = agent.card("http://localhost:8000")
    assert card.name
    assert card.skills
    assert card.capabilities.streaming


def test_echo() -> None:
    service, _ = serve(echo.agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hello there")))
        assert task.status.state is TaskState.COMPLETED
        assert artifact_text(task) == "hello there"
        events = await collect(service.send_streaming_message(ALICE, send("again")))
        assert kinds(events) == ["task:SUBMITTED", "artifact", "status:COMPLETED"]

    run(main())


def test_streaming_counts_in_chunks() -> None:
    service, _ = serve(streaming.agent)

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("3")))
        assert kinds(events) == [
            "task:SUBMITTED",
            "status:WORKING",
            "artifact",
            "artifact",
            "artifact",
            "status:COMPLETED",
        ]
        chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert [c.last_chunk for c in chunks] == [False, False, True]
        task = as_task(events[0])
        stored = await service.get_task(ALICE, GetTaskRequest(id=task.id))
        assert artifact_text(stored) == "1 2 3 "

    run(main())


@pytest.mark.parametrize(
    ("name", "state", "result"),
    [
        ("Ada", TaskState.COMPLETED, "Hello, Ada!"),
        ("  ", TaskState.COMPLETED, "Hello, stranger!"),
        ("Nobody", TaskState.REJECTED, ""),
    ],
)
def test_multi_turn_asks_then_greets(name: str, state: TaskState, result: str) -> None:
    service, executor = serve(multi_turn.agent)

    async def main() -> None:
        asked = as_task(await service.send_message(ALICE, send("hi")))
        assert asked.status.state is TaskState.INPUT_REQUIRED
        assert text_of(asked.status.message) == "What is your name?"
        done = as_task(await service.send_message(ALICE, send(name, task_id=asked.id)))
        assert done.status.state is state
        assert done.context_id == asked.context_id
        assert artifact_text(done) == result
        if state is TaskState.REJECTED:
            assert text_of(done.status.message) == "I only greet somebody."
        await settle()
        assert executor.session_count() == 0

    run(main())


TCK_COMPLETED: list[tuple[str, tuple[Part, ...]]] = [
    ("tck-artifact-text", (TextPart(text="Generated text content"),)),
    ("tck-artifact-file-url", (tck_agent.FILE_URL,)),
    ("tck-artifact-file", (tck_agent.FILE_RAW,)),
    ("tck-artifact-data", (DataPart(data={"key": "value", "count": 42}),)),
    ("tck-stream-artifact-text", (TextPart(text="Streamed text content"),)),
    ("tck-stream-artifact-file", (tck_agent.FILE_RAW,)),
    ("tck-stream-artifact-chunked", (TextPart(text="chunk-1 "), TextPart(text="chunk-2"))),
    ("tck-stream-002", ()),
    ("tck-complete-task", ()),
    ("anything-else", ()),
]


@pytest.mark.parametrize(("prefix", "parts"), TCK_COMPLETED, ids=[p for p, _ in TCK_COMPLETED])
def test_tck_agent_completing_behaviours(prefix: str, parts: tuple[Part, ...]) -> None:
    service, _ = serve(tck_agent.agent)

    async def main() -> None:
        request = send("x", message_id=f"{prefix}-1")
        task = as_task(await service.send_message(ALICE, request))
        assert task.status.state is TaskState.COMPLETED
        assert tuple(p for a in task.artifacts for p in a.parts) == parts
        if prefix in ("tck-complete-task", "anything-else"):
            assert text_of(task.status.message) == "Hello from TCK"

    run(main())


def test_tck_agent_chunked_stream() -> None:
    service, _ = serve(tck_agent.agent)

    async def main() -> None:
        request = send("x", message_id="tck-stream-artifact-chunked-1")
        events = await collect(service.send_streaming_message(ALICE, request))
        chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert [(c.append, c.last_chunk) for c in chunks] == [(False, False), (True, True)]

    run(main())


def test_tck_agent_message_reject_and_input_required() -> None:
    service, _ = serve(tck_agent.agent)

    async def main() -> None:
        reply = await service.send_message(ALICE, send("x", message_id="tck-message-response-1"))
        assert text_of(as_message(reply)) == "Direct message response"
        rejected = as_task(
            await service.send_message(ALICE, send("x", message_id="tck-reject-task-1"))
        )
        assert rejected.status.state is TaskState.REJECTED
        asked = as_task(
            await service.send_message(ALICE, send("x", message_id="tck-input-required-1"))
        )
        assert asked.status.state is TaskState.INPUT_REQUIRED
        done = as_task(await service.send_message(ALICE, send("more", task_id=asked.id)))
        assert artifact_text(done) == "Received: more"

    run(main())


def test_tck_agent_long_running_task_can_be_canceled() -> None:
    service, executor = serve(tck_agent.agent)

    async def main() -> None:
        request = send("x", message_id="test-resubscribe-message-id-1", return_immediately=True)
        task = as_task(await service.send_message(ALICE, request))
        working = await wait_for_state(service, task.id, TaskState.WORKING)
        assert text_of(working.status.message) == "Working on it"
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        assert canceled.status.state is TaskState.CANCELED
        await asyncio.sleep(0)
        assert executor.session_count() == 0

    run(main())


def test_tck_agent_declares_its_required_extension() -> None:
    card = tck_agent.agent.card("http://localhost")
    assert card.capabilities.push_notifications
    assert [(e.uri, e.required) for e in card.capabilities.extensions] == [
        (tck_agent.REQUIRED_EXTENSION, True),
        (STREAM_RESUME_URI, False),
    ]
