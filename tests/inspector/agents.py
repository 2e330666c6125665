"""The agents the inspector tests serve: one that streams its answer in chunks (and says
what files and data it got), with push delivery and, optionally, API keys."""

from __future__ import annotations

from collections.abc import AsyncIterator

from parley.asgi import A2AApp, build_app
from parley.inspector import with_inspector
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, Security
from parley.server.push.delivery import PushSettings
from parley.server.push.ssrf import Allow
from parley.server.service import AgentService
from parley.server.task_context import TaskContext

KEYS = {"k-alice": "alice", "k-bob": "bob"}
PUSH = PushSettings(allow=Allow(["127.0.0.1"]), poll=0.05, timeout=0.5)


def streaming_agent() -> Agent:
    agent = Agent("Chunky", description="Streams back what it was told, word by word.")

    @agent.skill(tags=["streaming"], examples=["hello there"])
    async def chunks(task: TaskContext) -> AsyncIterator[str]:
        """Stream the message's words back, then name the files and data it got."""
        for word in task.text.split():
            yield f"{word} "
        for file in task.files:
            yield f"[file {file.filename}] "
        for value in task.data:
            yield f"[data {value}] "

    return agent


def service(url: str, *, secured: bool = False, push: bool = True) -> AgentService:
    agent = streaming_agent()
    security = Security(ApiKeys(KEYS)) if secured else None
    card = agent.card(url, security=security)
    return AgentService(
        agent.executor(),
        card,
        security=security,
        push=PUSH if push else None,
        namespace="",
    )


def inspected_app(url: str, *, secured: bool = False, push: bool = True) -> A2AApp:
    return with_inspector(build_app(service(url, secured=secured, push=push)))
