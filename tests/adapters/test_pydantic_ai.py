"""A pydantic-ai `Agent` served through `from_agent` (issue 18, part 2), driven by Parley's
client over HTTP against a real Parley server, offline with pydantic-ai's own test models
(`TestModel`, `FunctionModel`): streamed text as artifact chunks, tool calls and results as
status updates, structured output as data, the message history per context (per caller,
in memory and in SQLite across a restart), cancel. Importing Parley imports neither this
adapter's framework nor LangGraph's.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from parley.adapters.pydantic_ai import MemoryHistory, SqliteHistory, from_agent
from parley.client import Client
from parley.client.auth import APIKeyAuth
from parley.model import (
    DataPart,
    JSONValue,
    Message,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.negotiation import Version
from parley.server.auth import ApiKeys, Security
from parley.server.servable import is_servable
from tests.adapters.served import observed, on_parley, text

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).parents[2]


def prompts(messages: list[ModelMessage]) -> list[str]:
    """The user's prompts in a run's messages, the history first."""
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


async def recalling(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    """A model that answers with every prompt of the conversation so far."""
    yield " | ".join(prompts(messages))


async def storytelling(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    for word in ("Once ", "upon ", "a ", "time"):
        yield word


def answers(task: Task | Message) -> list[Any]:
    """Each artifact's text (its chunks joined), or its data."""
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED, task.status
    found: list[Any] = []
    for artifact in task.artifacts:
        data = [part.data for part in artifact.parts if isinstance(part, DataPart)]
        found += data or [text(artifact.parts)]
    return found


@pytest.mark.parametrize("version", [Version.V1_0, Version.V0_3], ids=lambda v: v.value)
async def test_streams_text_as_artifact_chunks(version: Version) -> None:
    agent = from_agent(PydanticAgent(FunctionModel(stream_function=storytelling)), name="Teller")
    assert is_servable(agent)
    async with (
        on_parley(agent) as url,
        Client.connect(url, versions=[version]) as client,
        client.stream("tell") as stream,
    ):
        events = [observed(event) async for event in stream]
    words = ["Once ", "upon ", "a ", "time"]
    assert events == [
        ("task", "SUBMITTED"),
        ("status", "WORKING", ""),
        *(
            ("chunk", "response", word, index > 0, index == len(words) - 1)
            for index, word in enumerate(words)
        ),
        ("status", "COMPLETED", ""),
    ]


async def test_tool_calls_and_results_are_status_updates() -> None:
    model = TestModel(call_tools=["forecast"], custom_output_text="Sunny all week.")
    forecaster = PydanticAgent(model)

    @forecaster.tool_plain
    def forecast(city: str) -> str:
        return f"sunny in {city}"

    agent = from_agent(forecaster, name="Forecaster")
    async with (
        on_parley(agent) as url,
        Client.connect(url) as client,
        client.stream("weather?") as stream,
    ):
        events = [event async for event in stream]
    notes = [
        event.status.message
        for event in events
        if isinstance(event, TaskStatusUpdateEvent) and event.status.message is not None
    ]
    words = ["".join(p.text for p in note.parts if isinstance(p, TextPart)) for note in notes]
    assert words == ["Calling tool: forecast", "Tool forecast returned"]
    data = [part.data for note in notes for part in note.parts if isinstance(part, DataPart)]
    call_id = "pyd_ai_tool_call_id__forecast"
    assert data == [
        {"toolCalls": [{"name": "forecast", "args": {"city": "a"}, "id": call_id}]},
        {"toolResults": [{"name": "forecast", "id": call_id, "content": "sunny in a"}]},
    ]
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED


class Forecast(BaseModel):
    city: str
    degrees: int


async def test_structured_output_is_a_data_artifact() -> None:
    model = TestModel(custom_output_args={"city": "Oslo", "degrees": -3})
    agent = from_agent(PydanticAgent(model, output_type=Forecast), name="Structured")
    async with on_parley(agent) as url, Client.connect(url) as client:
        task = await client.send("Oslo?")
    assert answers(task) == [{"city": "Oslo", "degrees": -3}]


async def test_history_is_kept_per_context() -> None:
    agent = from_agent(PydanticAgent(FunctionModel(stream_function=recalling)), name="Recaller")
    async with on_parley(agent) as url, Client.connect(url) as client:
        first = await client.send("hello")
        assert isinstance(first, Task)
        again = await client.send("again", context_id=first.context_id)
        other = await client.send("elsewhere")
    assert answers(first) == ["hello"]
    assert answers(again) == ["hello | again"]  # a new task, the same conversation
    assert answers(other) == ["elsewhere"]


async def test_two_callers_naming_one_context_do_not_share_a_history() -> None:
    security = Security(ApiKeys({"a-key": "alice", "b-key": "bob"}, name="X-Key"))
    recaller = PydanticAgent(FunctionModel(stream_function=recalling))
    agent = from_agent(recaller, name="Recaller", security=security)
    async with on_parley(agent) as url:
        async with Client.connect(url, auth=APIKeyAuth("a-key", name="X-Key")) as alice:
            said = await alice.send("secret plan", context_id="shared")
        async with Client.connect(url, auth=APIKeyAuth("b-key", name="X-Key")) as bob:
            heard = await bob.send("what was said?", context_id="shared")
    assert answers(said) == ["secret plan"]
    assert answers(heard) == ["what was said?"]


async def test_a_sqlite_history_outlives_the_server(tmp_path: Path) -> None:
    recaller = PydanticAgent(FunctionModel(stream_function=recalling))
    first = from_agent(recaller, name="Recaller", history=SqliteHistory(tmp_path / "h.db"))
    async with on_parley(first) as url, Client.connect(url) as client:
        before = await client.send("remember me")
    assert isinstance(before, Task)
    second = from_agent(recaller, name="Recaller", history=SqliteHistory(tmp_path / "h.db"))
    async with on_parley(second) as url, Client.connect(url) as client:
        after = await client.send("who?", context_id=before.context_id)
    assert answers(after) == ["remember me | who?"]


async def test_cancel_cancels_the_run_and_keeps_no_history() -> None:
    waiting, canceled = asyncio.Event(), asyncio.Event()
    waiter = PydanticAgent(TestModel(call_tools=["wait"]))

    @waiter.tool_plain
    async def wait() -> str:
        waiting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            canceled.set()
            raise
        return "never"

    history = MemoryHistory()
    agent = from_agent(waiter, name="Waiter", history=history)
    async with on_parley(agent) as url, Client.connect(url) as client:
        started = await client.send("wait", return_immediately=True)
        assert isinstance(started, Task)
        await asyncio.wait_for(waiting.wait(), 5)
        answer = await client.cancel_task(started.id)
        stored = await client.get_task(started.id)
        await asyncio.wait_for(canceled.wait(), 5)
    assert answer.status.state is TaskState.CANCELED
    assert stored.status.state is TaskState.CANCELED
    assert await history.load(started.context_id) == []


def cleaner(deleted: list[str]) -> PydanticAgent[None, str | DeferredToolRequests]:
    """An agent whose one tool needs the user's approval."""
    agent = PydanticAgent(TestModel(), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete(path: str) -> str:
        deleted.append(path)
        return f"deleted {path}"

    return agent


async def test_a_tool_needing_approval_asks_and_yes_runs_it() -> None:
    deleted: list[str] = []
    history = MemoryHistory()
    agent = from_agent(cleaner(deleted), name="Cleaner", history=history, progress=False)
    async with on_parley(agent) as url, Client.connect(url) as client:
        asked = await client.send("clean up")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.INPUT_REQUIRED
        assert deleted == []
        question = asked.status.message
        assert question is not None
        assert question.parts[0] == TextPart(text='Approve delete({"path":"a"})? (yes or no)')
        call: dict[str, JSONValue] = {
            "name": "delete",
            "args": {"path": "a"},
            "id": "pyd_ai_tool_call_id__delete",
        }
        assert question.parts[1] == DataPart(data={"approvals": [call]})
        done = await client.send("Yes", task_id=asked.id, context_id=asked.context_id)
    assert answers(done) == ['{"delete":"deleted a"}']
    assert deleted == ["a"]
    kept = await history.load(asked.context_id)  # the whole turn, both runs
    assert prompts(kept) == ["clean up"]
    assert len(kept) == 4  # prompt, call; return, answer


@pytest.mark.parametrize(
    "reply",
    [
        "no, keep it",
        DataPart(data={"approvals": {"pyd_ai_tool_call_id__delete": False}}),
    ],
    ids=["text", "data"],
)
async def test_a_denied_tool_does_not_run(reply: str | DataPart) -> None:
    deleted: list[str] = []
    agent = from_agent(cleaner(deleted), name="Cleaner")
    async with on_parley(agent) as url, Client.connect(url) as client:
        asked = await client.send("clean up")
        assert isinstance(asked, Task)
        done = await client.send(reply, task_id=asked.id, context_id=asked.context_id)
    assert deleted == []
    [said] = answers(done)
    assert "deleted a" not in said
    assert "not approve" in said or "denied" in said


def test_importing_parley_imports_no_framework() -> None:
    code = (
        "import sys, parley, parley.server.service, parley.cli.serve, parley.adapters, "
        "parley.adapters.conversation; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'langgraph', 'langchain_core', 'pydantic_ai'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, text=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"
