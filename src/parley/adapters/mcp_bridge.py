"""An A2A agent's skills as MCP tools (`parley mcp URL`), with the official `mcp` SDK (the
`mcp` extra): one tool per skill of the agent's card, taking `{"message": …}` and, to go
on with a conversation or answer a question, `context_id` and `task_id`. Calling a tool
sends the message with Parley's client and waits for the task to end or to ask for input:
over a stream when the card offers streaming (its status messages reported as MCP
progress), else by a blocking send that Parley's client follows to the end (subscribing or
polling). The task's artifacts come back as MCP content: text as text, data as JSON text,
files as embedded resources (inline bytes) or resource links (URLs).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

try:
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.session import ServerSession
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("parley mcp needs the mcp extra: pip install 'parley-a2a[mcp]'") from exc

from parley.client import Client, ClientError
from parley.model import (
    AgentCard,
    AgentSkill,
    DataPart,
    Message,
    Part,
    RawPart,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    UrlPart,
)
from parley.protocol import lifecycle
from parley.protocol.errors import A2AError

DEFAULT_TOOL = "send_message"
"""The one tool of an agent whose card lists no skills."""

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "description": "What to say to the agent."},
        "context_id": {
            "type": "string",
            "description": "Continue this conversation (a context_id returned before).",
        },
        "task_id": {
            "type": "string",
            "description": "Answer this task, which asked for input (a task_id returned before).",
        },
    },
    "required": ["message"],
    "additionalProperties": False,
}

Progress = Callable[[float, str], Awaitable[None]]
"""Reports a step of a running task: its number and its status message's text."""


def tool_name(skill_id: str) -> str:
    """A skill id as an MCP tool name: letters, digits, `_`, `-` and `.`, at most 128."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", skill_id)[:128] or DEFAULT_TOOL


def skill_tools(card: AgentCard) -> dict[str, AgentSkill | None]:
    """The tools an agent's card makes, by name: one per skill (names made unique by a
    suffix), or the one `send_message` (no skill named) for a card with none."""
    if not card.skills:
        return {DEFAULT_TOOL: None}
    tools: dict[str, AgentSkill | None] = {}
    for skill in card.skills:
        name, n = tool_name(skill.id), 1
        while name in tools:
            n += 1
            name = f"{tool_name(skill.id)[:120]}_{n}"
        tools[name] = skill
    return tools


def describe(card: AgentCard, skill: AgentSkill | None) -> types.Tool:
    """The MCP tool for a skill (None: the agent itself)."""
    name = tool_name(skill.id) if skill is not None else DEFAULT_TOOL
    if skill is None:
        return types.Tool(
            name=name, description=card.description or card.name, input_schema=INPUT_SCHEMA
        )
    said = skill.description or skill.name
    if skill.examples:
        said += "\nExamples: " + "; ".join(skill.examples)
    return types.Tool(name=name, title=skill.name, description=said, input_schema=INPUT_SCHEMA)


class Bridge:
    """The tools of the agent `client` is connected to, and their calls."""

    def __init__(self, client: Client, *, deadline: float | None = None) -> None:
        self.client = client
        self.deadline = deadline
        """Seconds a call may take in all (None: as long as the task takes)."""
        self.tools = skill_tools(client.card)

    def list_tools(self) -> list[types.Tool]:
        card = self.client.card
        return [describe(card, skill) for skill in self.tools.values()]

    async def call(
        self, name: str, arguments: Mapping[str, Any], progress: Progress | None = None
    ) -> types.CallToolResult:
        """Send the tool's message and wait for the task; an error result (never an
        exception) for a bad call, an agent's error, or a task that did not complete."""
        if name not in self.tools:
            return _error(f"No tool named {name!r}")
        message = arguments.get("message")
        ids = {key: arguments.get(key) or "" for key in ("context_id", "task_id")}
        if not isinstance(message, str) or not all(isinstance(v, str) for v in ids.values()):
            return _error("message, context_id and task_id are strings; message is required")
        skill = self.tools[name]
        options: dict[str, Any] = {"skill": skill.id if skill is not None else "", **ids}
        try:
            if self.client.card.capabilities.streaming:
                result = await self._streamed(message, options, progress)
            else:
                result = await self.client.send(message, deadline=self.deadline, **options)
        except (A2AError, ClientError) as exc:
            return _error(f"The agent answered with an error: {exc}")
        return tool_result(result)

    async def _streamed(
        self, message: str, options: dict[str, Any], progress: Progress | None
    ) -> Message | Task:
        """The stream followed to its end, then the task as the agent keeps it (its
        artifacts whole, the chunks put together)."""
        task_id, steps = "", 0
        async with self.client.stream(message, **options) as events:
            async for event in events:
                if isinstance(event, Message):
                    return event
                if isinstance(event, Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent):
                    task_id = event.id if isinstance(event, Task) else event.task_id
                if isinstance(event, TaskStatusUpdateEvent) and event.status.message:
                    steps += 1
                    if progress is not None:
                        await progress(steps, event.status.message.text)
        if not task_id:
            raise ClientError("The agent's stream ended before any task")
        return await self.client.get_task(task_id)


def tool_result(result: Message | Task) -> types.CallToolResult:
    """A task or a direct reply as an MCP tool result; the ids to go on with in its
    structured content."""
    if isinstance(result, Message):
        content = contents(result.parts, f"a2a://message/{result.message_id}")
        return types.CallToolResult(
            content=content or [_text("")],
            structured_content={"context_id": result.context_id},
        )
    where = f"a2a://task/{result.id}"
    content = [c for a in result.artifacts for c in contents(a.parts, where)]
    state = result.status.state
    said = result.status.message.text if result.status.message is not None else ""
    if state is TaskState.COMPLETED:
        content = content or [_text(said)]
    elif lifecycle.is_interrupted(state):
        content.append(_text(said or "The agent needs more from you."))
        content.append(
            _text(
                f"To answer, call this tool again with task_id {result.id!r} and "
                f"context_id {result.context_id!r}."
            )
        )
    else:
        content.append(_text(f"The task ended {_state(state)}" + (f": {said}" if said else "")))
    return types.CallToolResult(
        content=content,
        structured_content={
            "task_id": result.id,
            "context_id": result.context_id,
            "state": _state(state),
        },
        is_error=lifecycle.is_terminal(state) and state is not TaskState.COMPLETED,
    )


def contents(parts: Sequence[Part], where: str) -> list[types.ContentBlock]:
    """MCP content for A2A parts: runs of text parts as one text (a streamed artifact's
    chunks), data as JSON text, files as embedded resources or links."""
    out: list[types.ContentBlock] = []
    text: list[str] = []
    for n, part in enumerate(parts):
        if isinstance(part, TextPart):
            text.append(part.text)
            continue
        if text:
            out.append(_text("".join(text)))
            text = []
        out.append(_content(part, f"{where}/{part.filename or n}"))
    if text:
        out.append(_text("".join(text)))
    return out


def _content(part: Part, uri: str) -> types.ContentBlock:
    if isinstance(part, DataPart):
        return _text(json.dumps(part.data, ensure_ascii=False))
    if isinstance(part, RawPart):
        return types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri=uri,
                mime_type=part.media_type or "application/octet-stream",
                blob=base64.b64encode(part.raw).decode("ascii"),
            ),
        )
    assert isinstance(part, UrlPart)
    return types.ResourceLink(
        name=part.filename or part.url,
        uri=part.url,
        mime_type=part.media_type or None,
    )


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(text)], is_error=True)


def _state(state: TaskState) -> str:
    return state.name.lower().replace("_", "-")


def mcp_server(bridge: Bridge) -> Server[Any]:
    """An MCP server (the SDK's low-level `Server`) offering the bridge's tools; run it
    over stdio (`mcp.server.stdio.stdio_server`) or Streamable HTTP
    (`streamable_http_app()`)."""
    card = bridge.client.card

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        return types.ListToolsResult(tools=bridge.list_tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        session: ServerSession = ctx.session

        async def progress(step: float, text: str) -> None:
            await session.report_progress(step, None, text)

        return await bridge.call(params.name, params.arguments or {}, progress)

    return Server(
        card.name,
        version=card.version,
        description=card.description or None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
