"""The agent the replica tests serve: a quick answer, a long chunked stream, a run that
sleeps and leaves a mark when it is cancelled, and a question.

    parley serve tests.replicas.agent:agent --store sqlite:///shared.db --bus redis://...

With `PARLEY_TEST_EXECUTIONS` naming a file, every start of a skill's function appends a
line to it: the task id, the message id it started on and the process id (the tests
count executions across replicas from it).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

from parley.model import TaskState
from parley.server.agent import Agent
from parley.server.task_context import TaskContext

CHUNKS = 40
PAUSE = 0.01

agent = Agent("Replicas", description="Streams, and sleeps until cancelled.")
EXECUTIONS = "PARLEY_TEST_EXECUTIONS"


def _started(task: TaskContext) -> None:
    path = os.environ.get(EXECUTIONS)
    if path:
        with Path(path).open("a") as log:
            log.write(f"{task.task_id} {task.message.message_id} {os.getpid()}\n")


@agent.skill()
async def stream(task: TaskContext) -> AsyncIterator[str]:
    """`CHUNKS` chunks "c000 ", "c001 ", ... of one artifact, `PAUSE` seconds apart."""
    _started(task)
    for number in range(CHUNKS):
        await asyncio.sleep(PAUSE)
        yield f"c{number:03d} "


@agent.skill()
async def sleepy(task: TaskContext) -> str:
    """Sleep a minute; cancelled, write "cancelled" to the file the message names."""
    _started(task)
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
    _started(task)
    return task.text


@agent.skill()
async def ask(task: TaskContext) -> str:
    """Ask who is there (INPUT_REQUIRED); the reply gets "hello <it>". A reply landing on
    another replica is handed to the one that asked; if that one died, the reply starts the
    skill again where it landed, with the task waiting for input, and is the answer."""
    _started(task)
    if task.task is not None and task.task.status.state == TaskState.INPUT_REQUIRED:
        return f"hello {task.text}"
    await task.ask("Who is there?")
    return f"hello {task.text}"
