"""The agent the push crash test serves: tasks with a few artifact chunks each (several
notifications per push config), and a question answered in a follow-up.

    parley serve tests.crash.push_agent:agent --store sqlite:///push.db --push-allow 127.0.0.1
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from parley.server.agent import Agent
from parley.server.task_context import TaskContext

STEPS = 4
"""Artifact chunks of one `steps` task."""

agent = Agent("PushCrash", description="Works in steps and asks, its webhooks down.")


@agent.skill()
async def steps(task: TaskContext) -> AsyncIterator[str]:
    """`STEPS` chunks "s0 ", "s1 ", ... of one artifact, then COMPLETED."""
    for number in range(STEPS):
        yield f"s{number} "


@agent.skill()
async def ask(task: TaskContext) -> str:
    """Ask a question (INPUT_REQUIRED); answer "hello <reply>"."""
    await task.ask("Who is there?")
    return f"hello {task.text}"
