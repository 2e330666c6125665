"""A streaming agent: each yielded chunk reaches the client as it is produced.

parley serve examples.streaming:agent
"""

import asyncio
from collections.abc import AsyncIterator

from parley.server.agent import Agent
from parley.server.task_context import TaskContext

agent = Agent("Counter", description="Counts to the number you send, one chunk at a time.")


@agent.skill(tags=["streaming"], examples=["5"])
async def count(task: TaskContext) -> AsyncIterator[str]:
    """Stream the numbers from 1 to N (default 5)."""
    text = task.text.strip()
    limit = int(text) if text.isdigit() else 5
    for number in range(1, min(limit, 1000) + 1):
        await asyncio.sleep(0.05)
        yield f"{number} "
