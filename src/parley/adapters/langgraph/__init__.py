"""Serving a compiled LangGraph graph as an A2A agent:

    from parley.adapters.langgraph import from_graph

    agent = from_graph(graph, name="Planner", description="Plans trips.")

`agent` is a Parley `Agent` (a target of `parley serve module:agent`) with one skill that
runs the graph: the message in as a user message, AI text streamed out as artifact
chunks, each node's update as a WORKING status, `interrupt()` as INPUT_REQUIRED (the
follow-up resumes the graph), the A2A context as the checkpointer's thread, and
CancelTask canceling the run. Multi-turn needs the graph compiled with a checkpointer.
Needs the langgraph extra (`pip install 'parley-a2a[langgraph]'`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

try:
    from langchain_core.runnables import RunnableConfig

    from parley.adapters.langgraph.graph import Graph, GraphSkill, message_input, reply_value
except ImportError as exc:  # pragma: no cover - the extra is installed in tests
    raise ImportError(
        f"parley.adapters.langgraph needs the langgraph extra: "
        f"pip install 'parley-a2a[langgraph]' ({exc})"
    ) from exc
from parley.adapters.conversation import conversation_key
from parley.model import Message
from parley.server.agent import Agent
from parley.server.task_context import TaskContext


def from_graph(
    graph: Graph,
    *,
    name: str,
    description: str = "",
    skill: str = "graph",
    skill_name: str | None = None,
    skill_description: str | None = None,
    tags: Sequence[str] = (),
    examples: Sequence[str] = (),
    input: Callable[[TaskContext], Any] = message_input,
    resume: Callable[[Message], Any] = reply_value,
    thread_id: Callable[[TaskContext], str] = conversation_key,
    config: RunnableConfig | None = None,
    progress: bool = True,
    **options: Any,
) -> Agent:
    """An agent whose one skill (`skill`, described by `skill_name`, `skill_description`,
    `tags`, `examples`) runs `graph`; `input`, `resume`, `thread_id`, `config`,
    `progress` as `GraphSkill` takes them; `options` go to `Agent` (`security`,
    `version`, `provider`, `streaming`, ...)."""
    agent = Agent(name, description=description, **options)
    run = GraphSkill(
        graph, input=input, resume=resume, thread_id=thread_id, config=config, progress=progress
    )
    agent.skill(
        skill,
        name=skill_name,
        description=skill_description if skill_description is not None else description,
        tags=tags,
        examples=examples,
    )(run)
    return agent


__all__ = ["Graph", "GraphSkill", "from_graph", "message_input", "reply_value"]
