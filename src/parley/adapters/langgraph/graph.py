"""`GraphSkill`: a compiled LangGraph graph as a Parley skill function.

Theory of operation. Each A2A message runs the graph once on the thread of its conversation
(checkpointer `thread_id` = the A2A context id, scoped by caller: `conversation_key`),
streaming in the "messages" and "updates" modes. AI message text becomes artifact chunks
(one artifact per AI message, the last chunk marked); each node's update becomes a WORKING
status (the node's name, and the tool calls and tool results it carries). A run that
stops on `interrupt()` asks the user (`task.ask`: INPUT_REQUIRED, the interrupt's value as
the question); the reply resumes the graph with `Command(resume=...)`. The state lives in
the graph's checkpointer, so a reply that reaches a restarted server resumes the graph too
(the skill starts anew on a task in INPUT_REQUIRED whose thread has a pending interrupt;
if the checkpoint is gone, the reply is a new message). Canceling the task cancels the
skill's coroutine, and with it the graph's run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt, StreamMode

from parley.adapters.conversation import TextArtifacts, conversation_key
from parley.model import DataPart, Message, Part, TaskState, TextPart
from parley.server.task_context import TaskContext

Graph = Pregel[Any, Any, Any, Any]
"""A compiled graph (`StateGraph(...).compile(...)`, `create_agent(...)`, ...)."""

_MODES: list[StreamMode] = ["messages", "updates"]


def message_input(task: TaskContext) -> Any:
    """The default graph input: the message's text as a user message under "messages" (the
    key of `MessagesState` and of LangChain's agents)."""
    return {"messages": [{"role": "user", "content": task.text}]}


def reply_value(message: Message) -> Any:
    """The default resume value of an interrupt: the reply's text, or, for a reply with no
    text, the value of its first data part (else "")."""
    text = "\n".join(part.text for part in message.parts if isinstance(part, TextPart))
    if text:
        return text
    return next((part.data for part in message.parts if isinstance(part, DataPart)), "")


class GraphSkill:
    """Runs a compiled graph for each message of a task (an agent function: register it
    with `agent.skill(...)`, or let `from_graph` make the agent).

    `input(task)` makes the graph's input from a new message (default: `message_input`);
    `resume(reply)` the value an interrupt resumes with (default: `reply_value`);
    `thread_id(task)` the checkpointer thread (default: `conversation_key`); `config` is
    merged into every run's config (e.g. `recursion_limit`); `progress=False` sends no
    status per node; AI text streams as artifacts named `artifact_name`.
    """

    def __init__(
        self,
        graph: Graph,
        *,
        input: Callable[[TaskContext], Any] = message_input,
        resume: Callable[[Message], Any] = reply_value,
        thread_id: Callable[[TaskContext], str] = conversation_key,
        config: RunnableConfig | None = None,
        progress: bool = True,
        artifact_name: str = "response",
    ) -> None:
        self.graph = graph
        self._input = input
        self._resume = resume
        self._thread_id = thread_id
        self._config = config or {}
        self._progress = progress
        self._artifact_name = artifact_name

    async def __call__(self, task: TaskContext) -> None:
        config = self._run_config(task)
        if await self._waiting(task, config):
            # The reply to a question asked before a restart: the checkpoint holds the rest.
            run_input: Any = Command(resume=self._resume(task.message))
        else:
            run_input = self._input(task)
        await task.update(None)  # WORKING
        while True:
            interrupts = await self._run(task, run_input, config)
            if not interrupts:
                return
            reply = await task.ask(_question(interrupts))
            value = self._resume(reply)
            if len(interrupts) == 1:
                run_input = Command(resume=value)
            else:  # several nodes interrupted in one step: the reply answers each
                run_input = Command(resume={each.id: value for each in interrupts})

    async def _waiting(self, task: TaskContext, config: RunnableConfig) -> bool:
        """Whether the task waits for input and its thread stopped on an interrupt (a
        thread whose checkpoint was lost takes the reply as a new message)."""
        if task.task is None or task.task.status.state is not TaskState.INPUT_REQUIRED:
            return False
        try:
            state = await self.graph.aget_state(config)
        except ValueError:  # the graph has no checkpointer
            return False
        return bool(state.interrupts)

    def _run_config(self, task: TaskContext) -> RunnableConfig:
        configurable = {**self._config.get("configurable", {}), "thread_id": self._thread_id(task)}
        return {**self._config, "configurable": configurable}

    async def _run(self, task: TaskContext, run_input: Any, config: RunnableConfig) -> list[Any]:
        """One run of the graph, streamed; the interrupts it stopped on."""
        artifacts = TextArtifacts(task, self._artifact_name)
        interrupts: list[Interrupt] = []
        async for mode, data in self.graph.astream(run_input, config, stream_mode=_MODES):
            if mode == "messages":
                await _stream_message(artifacts, data[0])
            elif mode == "updates":
                for node, update in cast("dict[str, Any]", data).items():
                    if node == "__interrupt__":
                        interrupts.extend(update)
                    elif self._progress:
                        await task.update(_progress(node, update))
        await artifacts.close()
        return interrupts


async def _stream_message(artifacts: TextArtifacts, message: Any) -> None:
    """An AI message chunk continues its message's artifact; a whole AI message (from a
    node that returned it rather than streamed it) is an artifact of one chunk."""
    if isinstance(message, AIMessageChunk):
        await artifacts.add(message.id, message.text)
        if getattr(message, "chunk_position", None) == "last":
            await artifacts.close()
    elif isinstance(message, AIMessage) and message.id not in artifacts.keys:
        await artifacts.add(message.id, message.text)
        await artifacts.close()


def _progress(node: str, update: Any) -> list[Part]:
    """A node's update as a status message: its name, then the tool calls and results it
    carries, in words and as data."""
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for message in _messages(update):
        if isinstance(message, AIMessage):
            calls += [
                {"name": call["name"], "args": _json(call["args"]), "id": call["id"]}
                for call in message.tool_calls
            ]
        elif isinstance(message, ToolMessage):
            result = {"name": message.name, "id": message.tool_call_id, "content": message.text}
            results.append(result)
    words = [f"Step: {node}"]
    words += [f"Calling tool: {call['name']}" for call in calls]
    words += [f"Tool {result['name']} returned" for result in results]
    data: dict[str, Any] = {"node": node}
    if calls:
        data["toolCalls"] = calls
    if results:
        data["toolResults"] = results
    return [TextPart(text="\n".join(words)), DataPart(data=data)]


def _messages(update: Any) -> Sequence[BaseMessage]:
    value = update.get("messages") if isinstance(update, Mapping) else None
    if isinstance(value, BaseMessage):
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [message for message in value if isinstance(message, BaseMessage)]
    return []


def _question(interrupts: Sequence[Any]) -> list[Part]:
    """What the user is asked: each interrupt's value, text as text, anything else as
    data."""
    return [
        TextPart(text=value) if isinstance(value, str) else DataPart(data=_json(value))
        for value in (each.value for each in interrupts)
    ]


def _json(value: Any) -> Any:
    """A value as JSON data (what JSON cannot hold, as its text)."""
    return json.loads(json.dumps(value, default=str))


__all__ = ["Graph", "GraphSkill", "message_input", "reply_value"]
