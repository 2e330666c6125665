"""The smallest agent: it answers with what it was told.

parley serve examples.echo:agent
"""

from parley.server.agent import Agent
from parley.server.task_context import TaskContext

agent = Agent("Echo", description="Repeats what you say.")


@agent.skill(tags=["echo"], examples=["hello"])
async def echo(task: TaskContext) -> str:
    """Repeat the message's text."""
    return task.text
