"""The agent the crash test serves: quick answers, long chunked streams, and a question
that must still be answerable after a restart.

    parley serve tests.crash.agent:agent --store sqlite:///crash.db
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from parley.model import TaskState
from parley.server.agent import Agent
from parley.server.task_context import TaskContext

CHUNKS = 40
"""Artifact chunks of one stream, sent `PAUSE` seconds apart."""
PAUSE = 0.01

agent = Agent("Crash", description="Answers, streams and asks, to be killed at any moment.")


@agent.skill()
async def quick(task: TaskContext) -> str:
    """Complete at once with the message's text as the artifact."""
    return task.text


@agent.skill()
async def stream(task: TaskContext) -> AsyncIterator[str]:
    """`CHUNKS` chunks "c000 ", "c001 ", ... of one artifact, then COMPLETED."""
    for number in range(CHUNKS):
        await asyncio.sleep(PAUSE)
        yield f"c{number:03d} "


@agent.skill()
async def ask(task: TaskContext) -> str:
    """Ask a question; answer "hello <reply>". A suspended question does not survive a
    restart, so a reply to a task already waiting for input is taken as the answer."""
    if task.task is not None and task.task.status.state == TaskState.INPUT_REQUIRED:
        return f"hello {task.text}"
    await task.ask("Who is there?")
    return f"hello {task.text}"
