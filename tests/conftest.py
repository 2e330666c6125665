"""Test-wide settings: Hypothesis runs deterministically (CI must not flake) and without
time limits per example (the machine may be loaded); the official SDK's client imported
before its server (see below); async tests on asyncio (`LoopForTests`); the longest tests first
(see `LONG`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import Context
from typing import Any, TypeVarTuple, Unpack

# The official SDK's client factory imports its 0.3 gRPC transport inside a try/except
# ImportError. When the SDK's server routes are imported first, that import hits a circular
# import and the factory silently loses 0.3 over gRPC (it then speaks 1.0 to a 0.3 card).
# Importing the client factory first, once, gives every test the real factory.
import a2a.client.client_factory  # noqa: F401
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "parley",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("parley")

Ts = TypeVarTuple("Ts")


class LoopForTests(asyncio.SelectorEventLoop):
    """Each async test's event loop. grpc.aio's completion queue is one per process and
    hands each completion to the loop its call began on, from whichever loop meets it: a
    call still settling when its test's loop closed would raise "Event loop is closed" in
    a later test. A closed test loop drops such a completion (nobody is left to await it).
    """

    def call_soon_threadsafe(
        self,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: Context | None = None,
    ) -> asyncio.Handle:
        if self.is_closed():
            handle = asyncio.Handle(callback, args, self, context)
            handle.cancel()
            return handle
        return super().call_soon_threadsafe(callback, *args, context=context)


@pytest.fixture(scope="module")
def anyio_backend() -> tuple[str, dict[str, Any]]:
    """Async tests run on asyncio, each on its own `LoopForTests`."""
    return "asyncio", {"loop_factory": LoopForTests}


LONG = (
    "tests/wire/test_fuzz.py",
    "tests/replicas/test_kill_points.py",
    "tests/conformance/test_sdk_grpc.py",
    "tests/crash/test_sigkill.py",
    "tests/inspector/test_browser.py",
    "tests/test_doc_examples.py",
    "tests/conformance/test_checker.py",
    "tests/auth/test_isolation_matrix.py",
    "tests/cli/test_client_commands.py",
    "tests/cli/test_a2a_cli.py",
    "tests/adapters/test_mcp_bridge.py",
    "tests/cli/test_grpc_binding.py",
    "tests/protocol/test_lifecycle.py",
    "tests/crash/test_push_sigkill.py",
    "tests/auth/test_card_signatures.py",
    "tests/test_cold_start.py",
    "tests/wire/test_v1_0_json.py",
)
"""Files with the suite's longest tests (`--durations`), longest first. They run before the
rest, whole files at a time (their module fixtures stay shared), so that with workers
(`-n`, scripts/test) no worker is still in one of them long after the others are done."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.partition("::")[0]
        return LONG.index(path) if path in LONG else len(LONG)

    items.sort(key=rank)  # stable: the order within each file, and of the rest, is kept
