"""The interop suite through three replicas (issue: many replicas, one agent): every
scenario of `tests.interop.test_sdk_client` — the official `a2a-sdk` client in 1.0 and
0.3, over JSON-RPC and HTTP+JSON — against three services that share one PostgreSQL
schema and one Redis bus, each its own uvicorn server, behind the round-robin proxy
(`tests.replicas.proxy`): each request lands on the next replica."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis

from parley.asgi import A2AApp, build_app
from parley.server.redis_bus import RedisBus
from parley.server.service import AgentService
from parley.server.stores.urls import open_store
from tests.contracts.conftest import require_postgres
from tests.contracts.support import POSTGRES_URL, create_schema, drop_schema, with_params
from tests.equivalence.conftest import reserved
from tests.interop.agent import Probe, build_agent
from tests.interop.conftest import leaves_nothing_behind
from tests.interop.live import Live, serving
from tests.interop.test_sdk_client import (
    GRPC,
    MODES,
    Mode,
    gates,
    sdk,
    test_blocking_send_completes_with_the_echoed_artifact,
    test_cancel_stops_the_agent,
    test_errors_reach_the_sdk_as_its_exceptions,
    test_get_task_history_length,
    test_list_tasks,
    test_multi_turn_follow_up_inherits_the_context,
    test_multi_turn_over_streams,
    test_non_blocking_send_returns_at_once_and_completes_later,
    test_stream_delivers_the_task_then_the_chunks_in_order,
    test_subscribe_to_a_running_task,
    test_the_sdk_selects_the_interface_under_test,
)
from tests.replicas.proxy import RoundRobin
from tests.replicas.test_bus import REDIS

__all__ = [  # collected here, against the replicas (the leftovers check: on every one)
    "leaves_nothing_behind",
    "gates",
    "mode",
    "sdk",
    "test_blocking_send_completes_with_the_echoed_artifact",
    "test_cancel_stops_the_agent",
    "test_errors_reach_the_sdk_as_its_exceptions",
    "test_get_task_history_length",
    "test_list_tasks",
    "test_multi_turn_follow_up_inherits_the_context",
    "test_multi_turn_over_streams",
    "test_non_blocking_send_returns_at_once_and_completes_later",
    "test_stream_delivers_the_task_then_the_chunks_in_order",
    "test_subscribe_to_a_running_task",
    "test_the_sdk_selects_the_interface_under_test",
]
"""(The card tests of the interop suite expect gRPC interfaces, which these replicas do not
serve: the card is not a replica's concern.)"""

pytestmark = pytest.mark.anyio
REPLICAS = 3


@pytest.fixture(params=[m for m in MODES if m.binding != GRPC], ids=str)
def mode(request: pytest.FixtureRequest) -> Mode:
    """The HTTP modes: the replicas here serve JSON-RPC and HTTP+JSON behind the HTTP
    proxy (gRPC across replicas: `tests/replicas/test_equivalence.py`)."""
    result: Mode = request.param
    return result


@dataclass(frozen=True)
class Replicated(Live):
    """What a test needs of the servers: the proxy's URL, and what is left on any."""

    services: tuple[AgentService, ...] = ()

    def leftovers(self) -> tuple[int, int, int]:
        counts = [Live(self.url, service, self.probe).leftovers() for service in self.services]
        return (
            sum(count[0] for count in counts),
            sum(count[1] for count in counts),
            sum(count[2] for count in counts),
        )


class Proxy:
    """The round-robin proxy on a loop of its own, in a thread."""

    def __init__(self, backends: list[str]) -> None:
        self.front = reserved()
        self.url = f"http://127.0.0.1:{self.front.getsockname()[1]}"
        self.backends = backends
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.proxy: RoundRobin | None = None

    def start(self) -> None:
        self.thread.start()
        self.proxy = RoundRobin(self.backends)
        asyncio.run_coroutine_threadsafe(self.proxy.start(sock=self.front), self.loop).result(10)

    def stop(self) -> None:
        if self.proxy is not None:
            asyncio.run_coroutine_threadsafe(self.proxy.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    require_postgres()
    schema = asyncio.run(create_schema())
    prefix = f"parley-test-{uuid.uuid4().hex[:10]}"
    probe = Probe()
    agent = build_agent(probe)
    services: list[AgentService] = []
    backends: list[str] = []
    proxy = Proxy(backends)

    def make_app(url: str) -> A2AApp:
        tasks, configs = open_store(with_params(POSTGRES_URL, schema=schema))
        service = AgentService(
            agent.executor(), agent.card(proxy.url), store=tasks, push_store=configs,
            broker=RedisBus(REDIS, prefix=prefix),
        )  # fmt: skip
        services.append(service)
        return build_app(service)

    try:
        with contextlib.ExitStack() as stack:
            for _ in range(REPLICAS):
                backends.append(stack.enter_context(serving(make_app)))
            proxy.start()
            stack.callback(proxy.stop)
            yield Replicated(proxy.url, services[0], probe, tuple(services))
            assert proxy.proxy is not None
            assert min(proxy.proxy.counts) > 0, proxy.proxy.counts  # every replica served
    finally:
        asyncio.run(drop_schema(schema))
        client = redis.Redis.from_url(REDIS)
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)
        client.close()
