"""A multi-turn agent: it asks a question, waits for the answer (INPUT_REQUIRED), and
carries on in the same function when the reply arrives.

    parley serve examples.multi_turn:agent
"""

from parley.server.agent import Agent
from parley.server.task_context import TaskContext

agent = Agent("Greeter", description="Asks your name, then greets you.")


@agent.skill(tags=["conversation"], examples=["hi"])
async def greet(task: TaskContext) -> str:
    """Ask for a name and greet it."""
    reply = await task.ask("What is your name?")
    name = reply.text.strip() or "stranger"
    if name.lower() == "nobody":
        task.reject("I only greet somebody.")
    return f"Hello, {name}!"
