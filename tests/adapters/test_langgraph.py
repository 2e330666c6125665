"""A compiled LangGraph graph served through `from_graph` (issue 18, part 2), driven by
Parley's client over HTTP against a real Parley server, offline: plain Python nodes and
LangChain's fake chat model. Streaming (AI text as artifact chunks, node updates and tool
calls as status), `interrupt()` as input-required and the follow-up resuming the graph
(also after a restart), the context as the checkpointer's thread (per caller), cancel.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

from parley.adapters.langgraph import Graph, from_graph
from parley.client import Client
from parley.client.auth import APIKeyAuth
from parley.model import (
    DataPart,
    Message,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.negotiation import Version
from parley.server.auth import ApiKeys, Security
from parley.server.stores.memory import InMemoryTaskStore
from tests.adapters.served import observed, on_parley, text

pytestmark = pytest.mark.anyio

STORY = "Once upon a time"


class Probe:
    """What the graph's nodes saw: `wait` runs until canceled."""

    def __init__(self) -> None:
        self.waiting = asyncio.Event()
        self.canceled = False


def build_graph(probe: Probe, checkpointer: InMemorySaver | bool | None = None) -> Graph:
    """`tell` streams a story from a fake chat model; `weather` calls a tool first; `book`
    asks which city (interrupt); `wait` works until canceled; anything else recalls what
    the user said so far in this thread."""
    model = GenericFakeChatModel(messages=iter([AIMessage(content=STORY)] * 20))

    async def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def recall(state: MessagesState) -> dict[str, Any]:
        said = [m.text for m in state["messages"] if isinstance(m, HumanMessage)]
        return {"messages": AIMessage(content=" | ".join(said))}  # one message, not a list

    def call(state: MessagesState) -> dict[str, Any]:
        asked = {"name": "forecast", "args": {"city": "Paris"}, "id": "call-1"}
        return {"messages": [AIMessage(content="", tool_calls=[asked])]}

    def tool(state: MessagesState) -> dict[str, Any]:
        answer = ToolMessage(content="sunny", tool_call_id="call-1", name="forecast")
        return {"messages": [answer]}

    def book(state: MessagesState) -> dict[str, Any]:
        city = interrupt("Which city?")
        return {"messages": [AIMessage(content=f"Booked {city}.")]}

    def left(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"left: {interrupt('Left?')}")]}

    def right(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"right: {interrupt('Right?')}")]}

    async def wait(state: MessagesState) -> dict[str, Any]:
        probe.waiting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            probe.canceled = True
            raise
        return {}

    def route(state: MessagesState) -> str | list[str]:
        last: AnyMessage = state["messages"][-1]
        if last.text == "pair":
            return ["left", "right"]
        return {"tell": "chat", "weather": "call", "book": "book", "wait": "wait"}.get(
            last.text, "recall"
        )

    builder = StateGraph(MessagesState)
    for name, node in [("chat", chat), ("recall", recall), ("call", call), ("tool", tool)]:
        builder.add_node(name, node)
    builder.add_node("book", book)
    builder.add_node("wait", wait)
    builder.add_node("left", left)
    builder.add_node("right", right)
    targets = ["chat", "call", "book", "wait", "recall", "left", "right"]
    builder.add_conditional_edges(START, route, targets)
    builder.add_edge("call", "tool")
    builder.add_edge("tool", "chat")
    for last in ("chat", "recall", "book", "wait", "left", "right"):
        builder.add_edge(last, END)
    if checkpointer is False:
        return builder.compile()
    return builder.compile(checkpointer=checkpointer or InMemorySaver())


def answers(task: Task | Message) -> list[str]:
    assert isinstance(task, Task)
    return [text(artifact.parts) for artifact in task.artifacts]


@pytest.mark.parametrize("version", [Version.V1_0, Version.V0_3], ids=lambda v: v.value)
async def test_streams_ai_text_as_artifact_chunks_and_steps_as_status(version: Version) -> None:
    agent = from_graph(build_graph(Probe()), name="Storyteller")
    async with on_parley(agent) as url, Client.connect(url, versions=[version]) as client:
        async with client.stream("tell") as stream:
            events = [observed(event) async for event in stream]
        words = ["Once", " ", "upon", " ", "a", " ", "time"]
        assert events == [
            ("task", "SUBMITTED"),
            ("status", "WORKING", ""),
            *(
                ("chunk", "response", word, index > 0, index == len(words) - 1)
                for index, word in enumerate(words)
            ),
            ("status", "WORKING", "Step: chat"),
            ("status", "COMPLETED", ""),
        ]


async def test_tool_calls_and_results_are_status_updates() -> None:
    agent = from_graph(build_graph(Probe()), name="Forecaster")
    async with (
        on_parley(agent) as url,
        Client.connect(url) as client,
        client.stream("weather") as stream,
    ):
        events = [event async for event in stream]
    notes = [
        event.status.message
        for event in events
        if isinstance(event, TaskStatusUpdateEvent) and event.status.message is not None
    ]
    assert [text(note.parts) for note in notes] == [
        "Step: call\nCalling tool: forecast",
        "Step: tool\nTool forecast returned",
        "Step: chat",
    ]
    data = [part.data for note in notes for part in note.parts if isinstance(part, DataPart)]
    assert data[0] == {
        "node": "call",
        "toolCalls": [{"name": "forecast", "args": {"city": "Paris"}, "id": "call-1"}],
    }
    assert data[1] == {
        "node": "tool",
        "toolResults": [{"name": "forecast", "id": "call-1", "content": "sunny"}],
    }
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED


async def test_interrupt_asks_and_the_follow_up_resumes_the_graph() -> None:
    agent = from_graph(build_graph(Probe()), name="Booker", progress=False)
    async with on_parley(agent) as url, Client.connect(url) as client:
        asked = await client.send("book")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.INPUT_REQUIRED
        assert asked.status.message is not None
        assert text(asked.status.message.parts) == "Which city?"
        done = await client.send("Lyon", task_id=asked.id, context_id=asked.context_id)
        assert isinstance(done, Task)
        assert done.id == asked.id
        assert done.status.state is TaskState.COMPLETED
        assert answers(done) == ["Booked Lyon."]


async def test_one_reply_answers_interrupts_of_one_step_and_may_be_data() -> None:
    agent = from_graph(build_graph(Probe()), name="Pair", progress=False)
    async with on_parley(agent) as url, Client.connect(url) as client:
        asked = await client.send("pair")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.INPUT_REQUIRED
        assert asked.status.message is not None
        parts = asked.status.message.parts
        questions = [part.text for part in parts if isinstance(part, TextPart)]
        reply = DataPart(data={"choice": 1})
        done = await client.send(reply, task_id=asked.id, context_id=asked.context_id)
    assert sorted(questions) == ["Left?", "Right?"]
    assert sorted(answers(done)) == ["left: {'choice': 1}", "right: {'choice': 1}"]


async def test_a_reply_after_a_restart_resumes_from_the_checkpoint() -> None:
    checkpointer, store = InMemorySaver(), InMemoryTaskStore()
    first = from_graph(build_graph(Probe(), checkpointer), name="Booker")
    async with on_parley(first, store) as url, Client.connect(url) as client:
        asked = await client.send("book")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.INPUT_REQUIRED
    # A new process: a new agent and executor over the same task store and checkpointer.
    second = from_graph(build_graph(Probe(), checkpointer), name="Booker")
    async with on_parley(second, store) as url, Client.connect(url) as client:
        done = await client.send("Nice", task_id=asked.id, context_id=asked.context_id)
    assert isinstance(done, Task)
    assert done.status.state is TaskState.COMPLETED
    assert answers(done) == ["Booked Nice."]


async def test_a_reply_whose_checkpoint_is_gone_is_a_new_message() -> None:
    store = InMemoryTaskStore()
    first = from_graph(build_graph(Probe()), name="Booker")
    async with on_parley(first, store) as url, Client.connect(url) as client:
        asked = await client.send("book")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.INPUT_REQUIRED
    # A new process whose checkpointer (in memory) lost the thread.
    second = from_graph(build_graph(Probe()), name="Booker")
    async with on_parley(second, store) as url, Client.connect(url) as client:
        done = await client.send("Nice", task_id=asked.id, context_id=asked.context_id)
    assert answers(done) == ["Nice"]  # recalled: the only message of the new thread


async def test_a_graph_without_a_checkpointer_runs_each_message_afresh() -> None:
    agent = from_graph(build_graph(Probe(), checkpointer=False), name="Forgetful")
    async with on_parley(agent) as url, Client.connect(url) as client:
        first = await client.send("hello")
        assert isinstance(first, Task)
        again = await client.send("again", context_id=first.context_id)
    assert answers(again) == ["again"]


async def test_the_context_is_the_thread() -> None:
    agent = from_graph(build_graph(Probe()), name="Recaller")
    async with on_parley(agent) as url, Client.connect(url) as client:
        first = await client.send("hello")
        assert isinstance(first, Task)
        assert answers(first) == ["hello"]
        again = await client.send("again", context_id=first.context_id)
        other = await client.send("elsewhere")
    assert answers(again) == ["hello | again"]  # a new task, the same conversation
    assert isinstance(other, Task)
    assert other.context_id != first.context_id
    assert answers(other) == ["elsewhere"]


async def test_two_callers_naming_one_context_do_not_share_a_thread() -> None:
    security = Security(ApiKeys({"a-key": "alice", "b-key": "bob"}, name="X-Key"))
    agent = from_graph(build_graph(Probe()), name="Recaller", security=security)
    async with on_parley(agent) as url:
        async with Client.connect(url, auth=APIKeyAuth("a-key", name="X-Key")) as alice:
            said = await alice.send("secret plan", context_id="shared")
        async with Client.connect(url, auth=APIKeyAuth("b-key", name="X-Key")) as bob:
            heard = await bob.send("what was said?", context_id="shared")
    assert answers(said) == ["secret plan"]
    assert answers(heard) == ["what was said?"]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_cancel_cancels_the_graph_run(
    binding: Literal["JSONRPC", "HTTP+JSON"],
) -> None:
    probe = Probe()
    agent = from_graph(build_graph(probe), name="Waiter")
    async with on_parley(agent) as url, Client.connect(url, bindings=[binding]) as client:
        started = await client.send("wait", return_immediately=True)
        assert isinstance(started, Task)
        await asyncio.wait_for(probe.waiting.wait(), 5)
        canceled = await client.cancel_task(started.id)
        stored = await client.get_task(started.id)
    assert canceled.status.state is TaskState.CANCELED
    assert stored.status.state is TaskState.CANCELED
    assert probe.canceled
