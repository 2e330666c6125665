"""What a host such as `parley serve` takes as an agent: an object that makes its card for
a URL and its executor, and names the security it enforces — an `Agent`, or an adapter's
agent (e.g. `parley.adapters.a2a_sdk.from_executor`)."""

from __future__ import annotations

from typing import Protocol, TypeGuard, runtime_checkable

from parley.model import AgentCard
from parley.server.agent import Agent
from parley.server.auth.security import Security
from parley.server.execution import AgentExecutor


@runtime_checkable
class Servable(Protocol):
    """An agent a host serves: `AgentService(agent.executor(), agent.card(url, ...),
    security=agent.security)`."""

    security: Security | None

    def card(
        self, url: str, *, grpc_address: str | None = None, security: Security | None = None
    ) -> AgentCard: ...

    def executor(self) -> AgentExecutor: ...


def is_servable(target: object) -> TypeGuard[Servable]:
    """Whether `target` is an agent (an instance: not the `Agent` class itself)."""
    if isinstance(target, Agent):
        return True
    return not isinstance(target, type) and isinstance(target, Servable)
