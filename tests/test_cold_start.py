"""Cold start: a server imports what its bindings need and no more (no gRPC without
--grpc-port, no HTTP client, no webhook sender before a delivery, no h11 on httptools),
and the benchmark guard (`python -m benchmarks.guard`) still runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import parley.client
import parley.server.auth
from benchmarks.guard import rows

ROOT = Path(__file__).resolve().parent.parent

NOT_AT_START = (
    "grpc",
    "google.protobuf",
    "httpx",
    "redis",
    "asyncpg",
    "opentelemetry",
    "websockets",
    "h11",
    "mcp",
    "parley.grpc",
    "parley.client.http",
    "parley.conformance",
    "parley.server.push.sender",
)
"""Modules a server of an HTTP-only agent with a memory store must not have loaded."""


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running `code`."""
    script = textwrap.dedent(code) + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    modules: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return set(modules)


def unwanted(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_AT_START))


def test_importing_the_asgi_package_loads_no_grpc_and_no_http_client() -> None:
    modules = loaded_after("import parley.asgi")
    assert "parley.asgi.app" in modules
    assert unwanted(modules) == []


def test_an_http_only_agent_built_into_an_app_loads_only_what_it_serves() -> None:
    modules = loaded_after(
        """
        from parley.asgi import build_app
        from parley.server.service import AgentService
        from parley.server.stores import open_store
        from examples.echo import agent

        stores = open_store("memory")
        url = "http://127.0.0.1:8000/"
        service = AgentService(
            agent.executor(), agent.card(url), store=stores.tasks, push_store=stores.push_configs
        )
        app = build_app(service)
        """
    )
    assert "parley.server.push.delivery" in modules  # push is on: its worker, not its sender
    assert unwanted(modules) == []


def test_parley_serve_builds_an_http_only_app_without_grpc_or_the_client() -> None:
    modules = loaded_after(
        """
        from parley.cli.main import build_parser
        from parley.cli.serve import serve_app, server_options

        line = ["serve", "examples.echo:agent", "--store", "memory"]
        arguments = build_parser(line[0]).parse_args(line)
        serve_app(arguments)
        server_options(arguments, None)  # uvicorn's: httptools, guarded
        """
    )
    assert "parley.cli.serve" in modules
    assert "parley.cli.talk" not in modules  # the other commands are not loaded
    assert unwanted(modules) == []


def test_the_lazy_names_of_the_client_and_auth_packages_resolve() -> None:
    for package in (parley.client, parley.server.auth):
        for name in package.__all__:
            assert getattr(package, name) is not None, name
    with pytest.raises(AttributeError):
        _ = parley.client.NoSuchName


@pytest.mark.skipif(
    shutil.which("taskset") is None or (os.cpu_count() or 1) < 2,
    reason="the guard pins the server and the load to two cores (taskset)",
)
def test_the_benchmark_guard_runs_at_its_smoke_level() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.guard", "--smoke", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    figures = {label.strip(): (ours, ceiling) for label, ours, ceiling, _, _ in rows(result)}
    assert set(figures) == {
        "cold start ms",
        "parley serve",
        "send c=1 req/s",
        "send c=16 req/s",
        "stream events/s",
        "stream 1st event ms",
    }
    assert all(ours > 0 and ceiling > 0 for ours, ceiling in figures.values())
    assert result["parley"]["send_c16"]["failures"] == 0
    assert result["parley"]["stream"]["events"] == 4 * 103  # every stream read to its end
