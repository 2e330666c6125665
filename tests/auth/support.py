"""What the authentication tests share: an agent's service over a fresh SQLite store,
enforcing the agent's own security (or the one given)."""

from __future__ import annotations

from pathlib import Path

from parley.model import AgentCard
from parley.server.agent import Agent
from parley.server.auth import Security
from parley.server.service import AgentService
from parley.server.stores import open_store


def sqlite_service(
    agent: Agent,
    tmp_path: Path,
    *,
    card: AgentCard | None = None,
    security: Security | None = None,
) -> AgentService:
    """`agent` served over `tmp_path/tasks.db`, its card for 127.0.0.1 unless given."""
    tasks, push = open_store(f"sqlite:///{tmp_path / 'tasks.db'}")
    return AgentService(
        agent.executor(),
        card or agent.card("http://127.0.0.1"),
        store=tasks,
        push_store=push,
        security=security or agent.security,
    )
