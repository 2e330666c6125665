"""`parley serve module:agent`: serve an agent over JSON-RPC and HTTP+JSON, A2A 1.0 and
0.3, with uvicorn; Ctrl-C or SIGTERM drains open streams and stops."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from pathlib import Path
from typing import Any, Literal

from parley.asgi import build_app
from parley.cli.db import STORE_ENV, default_store
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.stores import DEFAULT_STORE, describe, open_store

log = logging.getLogger("parley")


def add_serve_command(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve an agent",
        description="Serve an agent (an Agent, a request handler, or an ASGI app).",
    )
    serve.add_argument("target", help="the agent, as module:attribute (e.g. examples.echo:agent)")
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument(
        "--url",
        help="public base URL put in the agent card (default http://HOST:PORT)",
    )
    serve.add_argument(
        "--store",
        help="task store of an Agent target: sqlite:///path.db, postgresql://user@host:port/db "
        f"or memory (default: ${STORE_ENV}, else {DEFAULT_STORE})",
    )
    serve.add_argument(
        "--card",
        choices=["hybrid", "v1"],
        default="hybrid",
        help="card shape: the current card plus the legacy members older clients read "
        "(hybrid, default), or the current card only (v1)",
    )
    serve.add_argument("--log-level", default="info", help="log level (default info)")
    serve.set_defaults(run=run_serve)


def load_target(spec: str) -> Any:
    """Import `module:attribute`, with the current directory importable."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"parley serve: expected module:attribute, got {spec!r}")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"parley serve: cannot import {module_name!r}: {exc}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise SystemExit(f"parley serve: {module_name!r} has no {attribute!r}") from None


def make_app(
    target: Any, url: str, card_mode: Literal["hybrid", "v1"], *, store: str = "memory"
) -> Any:
    """An ASGI app for an Agent (its tasks in `store`, a store URL), an AgentService (or
    any RequestHandler), or an app."""
    if isinstance(target, Agent):
        try:
            tasks, push_configs = open_store(store)
        except (ValueError, ImportError) as exc:
            raise SystemExit(f"parley serve: --store: {exc}") from None
        target = AgentService(
            target.executor(), target.card(url), store=tasks, push_store=push_configs
        )
        log.info("tasks are stored in %s", describe(store))
    if hasattr(target, "card") and hasattr(target, "send_message"):
        return build_app(target, card_mode=card_mode)
    if callable(target):
        return target
    raise SystemExit(f"parley serve: {target!r} is not an agent, handler or ASGI app")


def run_serve(arguments: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: PLC0415 - an optional extra, needed only here
    except ImportError:
        raise SystemExit(
            "parley serve needs the server extra: pip install 'parley-a2a[server]'"
        ) from None
    url = arguments.url or f"http://{arguments.host}:{arguments.port}"
    store = arguments.store or default_store()
    target = load_target(arguments.target)
    if arguments.store and not isinstance(target, Agent):
        log.warning(
            "--store applies to an Agent target only: %s keeps its own stores", arguments.target
        )
    app = make_app(target, url, arguments.card, store=store)
    log.info("serving %s at %s", arguments.target, url)
    uvicorn.run(
        app,
        host=arguments.host,
        port=arguments.port,
        log_level=arguments.log_level,
        timeout_graceful_shutdown=10,
    )
    return 0
