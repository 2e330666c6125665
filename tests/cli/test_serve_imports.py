"""What serving the default agent loads: `parley serve` (its parser, options and app) and
an app built with `build_app` load no optional extra and none of the parts no HTTP
agent on the memory store uses. Each case runs in a fresh interpreter and reads its
`sys.modules`: behaviour, not timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from parley.cli.security import JWT_ALGORITHMS, KEY_LOCATIONS
from parley.server.auth.jwt import DEFAULT_ALGORITHMS
from parley.server.auth.keys import LOCATIONS

NEVER = (
    "grpc",
    "google.protobuf",
    "asyncpg",
    "psycopg",
    "redis",
    "opentelemetry",
    "prometheus_client",
    "cryptography",
    "joserfc",
    "httpx",
    "h11",
    "h2",
    "rich",
    "websockets",
    "parley.grpc",
    "parley.observability",
    "parley.inspector",
    "parley.client.client",
    "parley.server.redis_bus",
    "parley.server.stores.sqlite",
    "parley.server.stores.postgres",
)
"""Packages (and their submodules) an HTTP agent on the memory store never needs."""

CLI_NEVER = (
    "sqlite3",
    "parley.server.auth.jwt",
    "parley.server.auth.jwks",
    "parley.server.auth.keys",
    "parley.server.auth.mtls",
    "parley.cli.talk",
    "parley.cli.webhook",
    "parley.cli.mcp",
)
"""What `parley serve` without authentication or TLS options, on the memory store, skips."""

FIRST_USE = ("html",)
"""Loaded when first needed, not at start: `html` (the root page's escaping) loads its
entity tables."""

SERVE = """
    import json, sys
    from parley.cli.main import build_parser
    from parley.cli.serve import serve_app, server_options
    from parley.cli.tls import tls_from
    line = ["serve", "examples.echo:agent", "--store", "memory", "--port", "8000"]
    arguments = build_parser("serve").parse_args(line)
    arguments.argv = line
    app = serve_app(arguments)
    server_options(arguments, tls_from(arguments))
    print(json.dumps(sorted(sys.modules)))
"""

APP = """
    import json, sys
    from parley.asgi import build_app
    from parley.server.agent import Agent
    from parley.server.service import AgentService
    from parley.server.stores import open_store
    agent = Agent("Echo")
    @agent.skill()
    async def echo(task) -> str:
        return task.text
    stores = open_store("memory")
    service = AgentService(agent.executor(), agent.card("http://127.0.0.1:8000/"),
                           store=stores.tasks, push_store=stores.push_configs)
    build_app(service)
    print(json.dumps(sorted(sys.modules)))
"""


def loaded(script: str) -> set[str]:
    # Without the suite's coverage measurement, which would load its own modules (sqlite3…).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COVERAGE_", "COV_CORE_"))}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def among(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_parley_serve_loads_no_extra_and_no_unused_scheme() -> None:
    modules = loaded(SERVE)
    assert "parley.asgi.app" in modules  # the case did build the app
    assert among(modules, NEVER + CLI_NEVER + FIRST_USE) == []


def test_an_app_of_the_default_agent_loads_no_extra() -> None:
    modules = loaded(APP)
    assert "parley.asgi.app" in modules
    assert among(modules, (*NEVER, *FIRST_USE, "argparse", "parley.cli")) == []


def test_the_options_name_what_the_schemes_accept() -> None:
    """The parser spells these without loading the schemes: they must not drift."""
    assert KEY_LOCATIONS == LOCATIONS
    assert JWT_ALGORITHMS == DEFAULT_ALGORITHMS
