"""What the framework adapters' tests share: an agent served by Parley over HTTP on
127.0.0.1, and what a client observes of a stream's events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from parley.asgi import build_app
from parley.client import Reconnected
from parley.model import StreamEvent, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent, TextPart
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.stores.memory import InMemoryTaskStore
from tests.adapters.sdk_agent import reserved, serving


@asynccontextmanager
async def on_parley(agent: Agent, store: InMemoryTaskStore | None = None) -> AsyncIterator[str]:
    sock = reserved()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    service = AgentService(agent.executor(), agent.card(url), store=store, security=agent.security)
    async with serving(build_app(service), sock) as served:
        yield served


def text(parts: tuple[Any, ...]) -> str:
    return "".join(part.text for part in parts if isinstance(part, TextPart))


def observed(event: StreamEvent | Reconnected) -> tuple[object, ...]:
    if isinstance(event, Task):
        return ("task", event.status.state.name)
    if isinstance(event, TaskStatusUpdateEvent):
        said = event.status.message
        return ("status", event.status.state.name, text(said.parts) if said else "")
    assert isinstance(event, TaskArtifactUpdateEvent), event
    chunk = event.artifact
    return ("chunk", chunk.name, text(chunk.parts), event.append, event.last_chunk)
