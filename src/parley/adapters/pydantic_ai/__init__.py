"""Serving a pydantic-ai `Agent` as an A2A agent:

    from parley.adapters.pydantic_ai import from_agent

    agent = from_agent(support_agent, name="Support", description="Answers questions.")

`agent` is a Parley `Agent` (a target of `parley serve module:agent`) with one skill that
runs the pydantic-ai agent: the message's text as the prompt, text streamed out as
artifact chunks, tool calls and results as WORKING status updates, structured output as a
data artifact, tools that need approval as INPUT_REQUIRED (the reply approves or denies),
the message history kept per A2A context (`MemoryHistory` by default,
`SqliteHistory` to keep it across restarts), and CancelTask canceling the run.
Needs the pydantic-ai extra (`pip install 'parley-a2a[pydantic-ai]'`, which installs
`pydantic-ai-slim`; add the slim package's extra for the model provider you use).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

try:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai import DeferredToolRequests, DeferredToolResults

    from parley.adapters.pydantic_ai.history import History, MemoryHistory, SqliteHistory
    from parley.adapters.pydantic_ai.skill import (
        PydanticAISkill,
        deferred_results,
        message_prompt,
    )
except ImportError as exc:  # pragma: no cover - the extra is installed in tests
    raise ImportError(
        f"parley.adapters.pydantic_ai needs the pydantic-ai extra: "
        f"pip install 'parley-a2a[pydantic-ai]' ({exc})"
    ) from exc
from parley.adapters.conversation import conversation_key
from parley.model import Message
from parley.server.agent import Agent
from parley.server.task_context import TaskContext


def from_agent(
    agent: PydanticAgent[Any, Any],
    *,
    name: str,
    description: str = "",
    skill: str = "chat",
    skill_name: str | None = None,
    skill_description: str | None = None,
    tags: Sequence[str] = (),
    examples: Sequence[str] = (),
    prompt: Callable[[TaskContext], Any] = message_prompt,
    deps: Callable[[TaskContext], Any] | None = None,
    history: History | None = None,
    conversation: Callable[[TaskContext], str] = conversation_key,
    approve: Callable[[DeferredToolRequests, Message], DeferredToolResults] = deferred_results,
    progress: bool = True,
    **options: Any,
) -> Agent:
    """A Parley agent whose one skill (`skill`, described by `skill_name`,
    `skill_description`, `tags`, `examples`) runs the pydantic-ai `agent`; `prompt`,
    `deps`, `history`, `conversation`, `approve`, `progress` as `PydanticAISkill` takes
    them;
    `options` go to Parley's `Agent` (`security`, `version`, `provider`, ...)."""
    served = Agent(name, description=description, **options)
    run = PydanticAISkill(
        agent,
        prompt=prompt,
        deps=deps,
        history=history,
        conversation=conversation,
        approve=approve,
        progress=progress,
    )
    served.skill(
        skill,
        name=skill_name,
        description=skill_description if skill_description is not None else description,
        tags=tags,
        examples=examples,
    )(run)
    return served


__all__ = [
    "History",
    "MemoryHistory",
    "PydanticAISkill",
    "SqliteHistory",
    "deferred_results",
    "from_agent",
    "message_prompt",
]
