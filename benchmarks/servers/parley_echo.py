"""The echo agent on Parley: `echo` (blocking send), `stream` (100 chunks) and `wait`
(never finishes: an open stream that stays open), chosen by message metadata `skill`.
`BENCH_STORE` names its task store (a `parley serve --store` URL; memory by default)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from benchmarks.servers import STREAM_CHUNKS, instrumented
from parley.asgi import build_app
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.stores import open_store
from parley.server.task_context import TaskContext

URL = "http://127.0.0.1:8000/"

agent = Agent("Echo", description="Repeats what you say.")
_never = asyncio.Event()


@agent.skill()
async def echo(task: TaskContext) -> str:
    """Repeat the message's text."""
    return task.text


@agent.skill()
async def stream(task: TaskContext) -> AsyncIterator[str]:
    """Repeat the message's text, 100 times, as chunks of one artifact."""
    text = task.text
    for _ in range(STREAM_CHUNKS):
        yield text


@agent.skill()
async def wait(task: TaskContext) -> str:
    """Start working, then never answer (the open-streams memory test)."""
    await task.update(None)  # the task exists (and its stream starts) from here
    await _never.wait()
    return ""


stores = open_store(os.environ.get("BENCH_STORE", "memory"))
service = AgentService(
    agent.executor(), agent.card(URL), store=stores.tasks, push_store=stores.push_configs
)
app = instrumented(build_app(service))
