"""`PydanticAISkill`: a pydantic-ai `Agent` as a Parley skill function.

Theory of operation. Each A2A message is one agent run (`run_stream_events`), its prompt the
message's text, its `message_history` the conversation's so far (kept in a `History`,
keyed by the A2A context scoped by caller: `conversation_key`). Text parts stream as
artifact chunks (one artifact per text part, the last chunk marked); each tool call and
each tool result is a WORKING status; structured (non-text) output is a data artifact. A
run that ends on deferred tool calls (tools that need approval, or a result from outside:
`DeferredToolRequests`) asks the user (INPUT_REQUIRED) and runs on with the reply read as
`DeferredToolResults`. A message whose runs complete appends their new messages to the
history; a failed or canceled one appends nothing. Canceling the task cancels the skill's
coroutine, which closes the event stream and so cancels the run (and the tool it is in).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai import (
    Agent,
    AgentRunResultEvent,
    DeferredToolRequests,
    DeferredToolResults,
    ToolDenied,
)
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    ToolCallPart,
)
from pydantic_ai.messages import TextPart as ModelTextPart
from pydantic_core import to_jsonable_python

from parley.adapters.conversation import TextArtifacts, conversation_key
from parley.adapters.pydantic_ai.history import History, MemoryHistory
from parley.model import DataPart, Message, Part, TextPart
from parley.server.task_context import TaskContext


def message_prompt(task: TaskContext) -> str:
    """The default prompt: the message's text."""
    return task.text


def deferred_results(requests: DeferredToolRequests, reply: Message) -> DeferredToolResults:
    """The default reading of the user's reply to deferred tool calls. A data part
    `{"approvals": {call id: bool}, "calls": {call id: result}}` says it call by call;
    otherwise a text reply of yes (`yes`, `y`, `ok`, `approve`, `approved`) approves every
    call needing approval, any other text denies them (the text is the model's reason), and
    the text is the result of every call awaiting one."""
    for part in reply.parts:
        if isinstance(part, DataPart) and isinstance(part.data, dict):
            approvals, calls = part.data.get("approvals"), part.data.get("calls")
            return DeferredToolResults(
                approvals={k: bool(v) for k, v in approvals.items()}
                if isinstance(approvals, dict)
                else {},
                calls=dict(calls) if isinstance(calls, dict) else {},
            )
    said = "\n".join(part.text for part in reply.parts if isinstance(part, TextPart)).strip()
    verdict: bool | ToolDenied = said.lower().rstrip(".!") in _YES or ToolDenied(
        f"The user did not approve: {said}" if said else "The user did not approve."
    )
    return DeferredToolResults(
        approvals={call.tool_call_id: verdict for call in requests.approvals},
        calls={call.tool_call_id: said for call in requests.calls},
    )


_YES = frozenset({"yes", "y", "ok", "approve", "approved"})


def _question(requests: DeferredToolRequests) -> list[Part]:
    """What the user is asked about deferred calls: in words, and as data."""
    words = [f"Approve {_call(call)}? (yes or no)" for call in requests.approvals]
    words += [f"What is the result of {_call(call)}?" for call in requests.calls]
    data: dict[str, Any] = {
        kind: [
            {"name": call.tool_name, "args": call.args_as_dict(), "id": call.tool_call_id}
            for call in calls
        ]
        for kind, calls in (("approvals", requests.approvals), ("calls", requests.calls))
        if calls
    }
    return [TextPart(text="\n".join(words)), DataPart(data=data)]


def _call(call: ToolCallPart) -> str:
    return f"{call.tool_name}({call.args_as_json_str()})"


class PydanticAISkill:
    """Runs a pydantic-ai agent for each message (an agent function: register it with
    `agent.skill(...)`, or let `from_agent` make the Parley agent).

    `prompt(task)` makes the run's user prompt (default: `message_prompt`); `deps(task)`
    its dependencies (default: none); `history` keeps each conversation's messages
    (default: a `MemoryHistory`); `conversation(task)` its key (default:
    `conversation_key`); `approve(requests, reply)` reads the reply to deferred tool calls
    (default: `deferred_results`); `progress=False` sends no status per tool call; output
    streams as artifacts named `artifact_name`.
    """

    def __init__(
        self,
        agent: Agent[Any, Any],
        *,
        prompt: Callable[[TaskContext], Any] = message_prompt,
        deps: Callable[[TaskContext], Any] | None = None,
        history: History | None = None,
        conversation: Callable[[TaskContext], str] = conversation_key,
        approve: Callable[[DeferredToolRequests, Message], DeferredToolResults] = (
            deferred_results
        ),
        progress: bool = True,
        artifact_name: str = "response",
    ) -> None:
        self.agent = agent
        self.history: History = history if history is not None else MemoryHistory()
        self._prompt = prompt
        self._deps = deps
        self._conversation = conversation
        self._approve = approve
        self._progress = progress
        self._artifact_name = artifact_name

    async def __call__(self, task: TaskContext) -> None:
        key = self._conversation(task)
        messages = await self.history.load(key)
        await task.update(None)  # WORKING
        turn: list[ModelMessage] = []  # this message's runs' new messages
        prompt: Any = self._prompt(task)
        answers: DeferredToolResults | None = None
        while True:
            run = _Run(task, TextArtifacts(task, self._artifact_name), self._progress)
            async with self.agent.run_stream_events(
                prompt,
                message_history=messages,
                deferred_tool_results=answers,
                deps=self._deps(task) if self._deps is not None else None,
                conversation_id=task.context_id,
            ) as events:
                async for event in events:
                    await run.on(event)
                messages = events.all_messages()
                turn += events.new_messages()
            await run.artifacts.close()
            if run.deferred is None:
                break
            # Tools that need the user's approval or result: ask, then run on with them.
            reply = await task.ask(_question(run.deferred))
            answers, prompt = self._approve(run.deferred, reply), None
        await self.history.append(key, turn)
        if run.output is not None:
            await task.artifact(run.output, name=self._artifact_name, last_chunk=True)


class _Run:
    """One run's events, as the task's artifacts and status updates."""

    def __init__(self, task: TaskContext, artifacts: TextArtifacts, progress: bool) -> None:
        self.task = task
        self.artifacts = artifacts
        self.progress = progress
        self.output: Any = None
        """What the run returned, if it is still to be sent (not text already streamed)."""
        self.deferred: DeferredToolRequests | None = None
        """The tool calls the run stopped on, waiting for approval or for their result."""
        self._parts: dict[int, int] = {}  # the part index in a response -> artifact key
        self._started = 0

    async def on(self, event: AgentStreamEvent | AgentRunResultEvent[Any]) -> None:
        if isinstance(event, PartStartEvent) and isinstance(event.part, ModelTextPart):
            self._started += 1
            self._parts[event.index] = self._started
            await self.artifacts.add(self._started, event.part.content)
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
            await self.artifacts.add(self._parts.get(event.index), event.delta.content_delta)
        elif isinstance(event, PartEndEvent) and isinstance(event.part, ModelTextPart):
            await self.artifacts.close()
        elif isinstance(event, FunctionToolCallEvent) and self.progress:
            call = event.part
            data = {"name": call.tool_name, "args": call.args_as_dict(), "id": call.tool_call_id}
            await self.task.update(_note(f"Calling tool: {call.tool_name}", "toolCalls", data))
        elif isinstance(event, FunctionToolResultEvent) and self.progress:
            result = event.part
            data = {
                "name": result.tool_name,
                "id": result.tool_call_id,
                "content": result.model_response_str(),
            }
            await self.task.update(_note(f"Tool {result.tool_name} returned", "toolResults", data))
        elif isinstance(event, AgentRunResultEvent):
            self._finish(event.result.output)

    def _finish(self, output: Any) -> None:
        if isinstance(output, DeferredToolRequests):
            self.deferred = output
        elif isinstance(output, str):
            self.output = None if self.artifacts.keys else output
        elif output is not None:
            data = to_jsonable_python(output, fallback=str)
            self.output = data if isinstance(data, dict | list) else {"output": data}


def _note(words: str, kind: str, data: dict[str, Any]) -> list[Part]:
    """A status message: words, then the same as data (as the LangGraph adapter says it)."""
    return [TextPart(text=words), DataPart(data={kind: [data]})]


__all__ = ["PydanticAISkill", "deferred_results", "message_prompt"]
