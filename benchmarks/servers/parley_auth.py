"""The echo agent on Parley with authentication as `BENCH_AUTH` says: `off` (no security:
any checkout can serve it), `api-key` (key `bench-key`), `jwt` (RS256 tokens checked
against the JWKS file `BENCH_JWKS`, issuer and audience `BENCH_ISSUER`/`BENCH_AUDIENCE`)."""

from __future__ import annotations

import os
from typing import Any

from parley.asgi import build_app
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext

MODE = os.environ.get("BENCH_AUTH", "off")

agent = Agent("Echo", description="Repeats what you say.")


@agent.skill()
async def echo(task: TaskContext) -> str:
    """Repeat the message's text."""
    return task.text


def _security() -> Any:
    from parley.server.auth import ApiKeys, JwtBearer, Security  # noqa: PLC0415

    if MODE == "api-key":
        return Security(ApiKeys({"bench-key": "bench"}))
    scheme = JwtBearer(
        issuer=os.environ["BENCH_ISSUER"],
        audience=os.environ["BENCH_AUDIENCE"],
        jwks_file=os.environ["BENCH_JWKS"],
    )
    return Security(scheme)


extra = {} if MODE == "off" else {"security": _security()}
service = AgentService(agent.executor(), agent.card("http://127.0.0.1:8000/"), **extra)
app = build_app(service)
