"""`/readyz`: 200 when the store and the bus answer, 503 naming the one that does not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from parley.asgi import build_app
from parley.asgi.readiness import Readiness
from parley.server.agent import Agent
from parley.server.readiness import Probe, redis_probe, store_probe
from parley.server.service import AgentService
from parley.server.stores import open_store

pytestmark = pytest.mark.anyio

REDIS = "redis://127.0.0.1:6379/0"


def _service(store: str = "memory") -> AgentService:
    agent = Agent("Ready")
    tasks, configs = open_store(store)
    return AgentService(
        agent.executor(), agent.card("http://127.0.0.1"), store=tasks, push_store=configs
    )


async def _get(app: Readiness, method: str = "GET") -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        return await http.request(method, "/readyz")


async def test_ready_when_the_store_and_the_bus_answer() -> None:
    service = _service()
    probes = {"store": store_probe(service.store), "bus": redis_probe(f"{REDIS}?prefix=x")}
    answer = await _get(Readiness(build_app(service), probes))
    assert answer.status_code == 200
    assert answer.json() == {"status": "ready", "checks": {"store": "ok", "bus": "ok"}}


async def test_unready_while_the_store_is_closed(tmp_path: Path) -> None:
    service = _service(f"sqlite:///{tmp_path}/tasks.db")
    app = Readiness(build_app(service), {"store": store_probe(service.store)})
    before = await _get(app)
    assert before.status_code == 503
    assert before.json()["status"] == "unready"
    assert before.json()["checks"]["store"] != "ok"
    await service.startup()
    try:
        assert (await _get(app)).status_code == 200
    finally:
        await service.shutdown()


async def test_an_unreachable_bus_is_named() -> None:
    service = _service()
    probes = {"store": store_probe(service.store), "bus": redis_probe("redis://127.0.0.1:1/0")}
    answer = await _get(Readiness(build_app(service), probes))
    assert answer.status_code == 503
    checks = answer.json()["checks"]
    assert checks["store"] == "ok"
    assert "ConnectionError" in checks["bus"]


async def test_a_probe_that_does_not_answer_in_time_fails() -> None:
    async def hangs() -> object:
        return await asyncio.Event().wait()

    probes: dict[str, Probe] = {"store": hangs}
    answer = await _get(Readiness(build_app(_service()), probes, timeout=0.05))
    assert answer.status_code == 503
    assert answer.json()["checks"]["store"] == "no answer within 0.05 s"


async def test_other_paths_and_methods() -> None:
    app = Readiness(build_app(_service()), {})
    assert (await _get(app, "POST")).status_code == 405
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        health = await http.get("/healthz")
    assert health.json() == {"status": "ok"}
