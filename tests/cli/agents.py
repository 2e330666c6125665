"""The agent the `parley` command tests talk to. Skills are chosen with `--skill` (message
metadata): `echo` (the default: the message's parts back, as one artifact), `chunks`
(a progress message, then a streamed artifact), `greet` (asks a name), `fail`, `sleep`
(for N seconds), `wait` (until canceled) and `whoami` (the caller, as the server saw it).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

from msgspec.structs import replace

from parley.asgi import A2AApp, build_app
from parley.model import AgentCapabilities, AgentProvider, Artifact, Message, TextPart
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.client.agents import TokenAuthenticator

CHUNKS = ("alpha ", "beta ", "gamma")
QUESTION = "What is your name?"
EXTENDED = "CLI tests (members)"


def build_cli_agent() -> Agent:
    agent = Agent(
        "CLI tests",
        description="Skills for the parley command tests.",
        provider=AgentProvider(organization="Parley", url="https://parley.example"),
        documentation_url="https://parley.example/docs",
    )

    @agent.skill(tags=["echo"], examples=["hello"])
    async def echo(task: TaskContext) -> Artifact:
        """Answer with the message's parts."""
        return Artifact(artifact_id=uuid.uuid4().hex, parts=task.parts)

    @agent.skill(name="Chunks")
    async def chunks(task: TaskContext) -> AsyncIterator[str]:
        """Say it is thinking, then stream one artifact in chunks."""
        await task.update("thinking")
        for chunk in CHUNKS:
            await asyncio.sleep(0.01)
            yield chunk

    @agent.skill()
    async def greet(task: TaskContext) -> str:
        """Ask a name, then greet it."""
        reply = await task.ask(QUESTION)
        return f"Hello, {''.join(p.text for p in reply.parts if isinstance(p, TextPart))}!"

    @agent.skill()
    async def fail(task: TaskContext) -> None:
        """Fail at once."""
        task.fail("boom")

    @agent.skill()
    async def sleep(task: TaskContext) -> str:
        """Sleep for the message's number of seconds."""
        await asyncio.sleep(float(task.text))
        return "awake"

    @agent.skill()
    async def wait(task: TaskContext) -> None:
        """Report WORKING, then wait until canceled."""
        await task.update("waiting")
        await asyncio.Event().wait()

    @agent.skill()
    async def whoami(task: TaskContext) -> Message:
        """Reply with the caller's id."""
        return task.reply(task.caller.id)

    return agent


def cli_app(url: str, *, bindings: tuple[str, ...] = ("JSONRPC", "HTTP+JSON")) -> A2AApp:
    """The agent at `url`: its card offers an extended card to authenticated callers."""
    agent = build_cli_agent()
    card = agent.card(url, bindings=bindings)
    card = replace(
        card,
        capabilities=AgentCapabilities(
            streaming=True, extended_agent_card=True, extensions=card.capabilities.extensions
        ),
    )
    service = AgentService(agent.executor(), card, extended_card=replace(card, name=EXTENDED))
    return build_app(service, authenticator=TokenAuthenticator())
