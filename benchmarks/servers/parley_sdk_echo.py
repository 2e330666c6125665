"""The a2a-sdk echo executor of `sdk_echo` (`EchoExecutor`, unchanged, with its card) on
Parley through `parley.adapters.a2a_sdk.from_executor`. `BENCH_STORE` names its task store
(a `parley serve --store` URL; memory by default)."""

from __future__ import annotations

import os

from benchmarks.servers import instrumented
from benchmarks.servers.sdk_echo import URL, EchoExecutor, card
from parley.adapters.a2a_sdk import from_executor
from parley.asgi import build_app
from parley.server.service import AgentService
from parley.server.stores import open_store

agent = from_executor(EchoExecutor(), card=card)
stores = open_store(os.environ.get("BENCH_STORE", "memory"))
service = AgentService(
    agent.executor(), agent.card(URL), store=stores.tasks, push_store=stores.push_configs
)
app = instrumented(build_app(service))
