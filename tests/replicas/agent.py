"""The agent the replica tests serve: a quick answer, a long chunked stream, and a run
that sleeps and leaves a mark when it is cancelled.

    parley serve tests.replicas.agent:agent --store sqlite:///shared.db --bus redis://...
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from parley.model import TaskState
from parley.server.agent import Agent
from parley.server.task_context import TaskContext

CHUNKS = 40
PAUSE = 0.01

agent = Agent("Replicas", description="Streams, and sleeps until cancelled.")


@agent.skill()
async def stream(task: TaskContext) -> AsyncIterator[str]:
    """`CHUNKS` chunks "c000 ", "c001 ", ... of one artifact, `PAUSE` seconds apart."""
    for number in range(CHUNKS):
        await asyncio.sleep(PAUSE)
        yield f"c{number:03d} "


@agent.skill()
async def sleepy(task: TaskContext) -> str:
    """Sleep a minute; cancelled, write "cancelled" to the file the message names."""
    await task.update("sleeping")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        Path(task.text).write_text("cancelled")
        raise
    return "woke"


@agent.skill()
async def quick(task: TaskContext) -> str:
    """Answer at once with the message's text."""
    return task.text


@agent.skill()
async def ask(task: TaskContext) -> str:
    """Ask who is there (INPUT_REQUIRED); the reply gets "hello <it>". A suspended question
    lives in the process that asked: a reply landing on another replica starts the skill
    again, with the task waiting for input, and is taken as the answer."""
    if task.task is not None and task.task.status.state == TaskState.INPUT_REQUIRED:
        return f"hello {task.text}"
    await task.ask("Who is there?")
    return f"hello {task.text}"
