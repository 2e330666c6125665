"""`parley serve module:agent`: serve an agent over JSON-RPC and HTTP+JSON, A2A 1.0 and
0.3, with uvicorn, and over gRPC beside it (`--grpc-port`, same event loop); Ctrl-C or
SIGTERM drains open streams and stops."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

from parley import __version__
from parley.asgi import build_app
from parley.asgi.mount import mount_agents
from parley.cli.a2a_draft import add_release_options, drafted
from parley.cli.config import add_config_option, apply_config
from parley.cli.connections import add_connection_options, connection_limits, connection_options
from parley.cli.db import STORE_ENV, default_store
from parley.cli.exec_option import add_exec_options, check_exec, exec_or_load
from parley.cli.graceful import GracefulStop, add_graceful_option
from parley.cli.hosts import allowed_hosts
from parley.cli.inspector import add_inspector_option, inspected
from parley.cli.logs import add_log_options, configure_logging, log_config
from parley.cli.observability import add_observability_options, observed, observed_grpc
from parley.cli.preflight import check_port, check_store, where_stored
from parley.cli.push import add_push_options, push_settings
from parley.cli.quotas import add_quota_options, quotas_from
from parley.cli.reload import add_reload_option, run_reloading
from parley.cli.replicas import add_bus_option, event_bus, listen_options, run_workers
from parley.cli.security import add_security_options, card_signer, jwt_requested, security_from
from parley.cli.serve_grpc import with_grpc
from parley.cli.targets import load_target, named_targets
from parley.cli.tls import (
    TlsFiles,
    add_tls_options,
    grpc_credentials,
    mutual_tls_schemes,
    tls_from,
    uvicorn_options,
)
from parley.model import AgentCard
from parley.server.auth import Security
from parley.server.push.delivery import PushSettings
from parley.server.quotas import DEFAULT_QUOTAS, Quotas
from parley.server.servable import Servable, is_servable
from parley.server.service import AgentService
from parley.server.stores import DEFAULT_STORE, open_store
from parley.wire.errors import DEFAULT_WIRE_COMPAT

log = logging.getLogger("parley")

_PARSERS: list[argparse.ArgumentParser] = []
"""The `serve` command's parser, once added: `--config` fills its options."""


def add_serve_command(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve an agent",
        description="Serve an agent (an Agent, a request handler, or an ASGI app).",
    )
    serve.add_argument(
        "target",
        nargs="*",
        default=[],
        metavar="[NAME=]module:attribute",
        help="the agent: module:attribute (examples.echo:agent), a module (its `agent`, else "
        "its `app`) or a .py file; several as NAME=module:attribute, each served under /NAME "
        "with its own card, tasks and security",
    )
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
    serve.add_argument(
        "--grpc-port",
        type=int,
        help="also serve gRPC (both versions' A2AService) on this port, and put it in the card",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        metavar="HOST",
        help="a Host name (port ignored) the HTTP server answers to, besides the --url host "
        "(repeatable; '*': any). Default: on a loopback --host, localhost, 127.0.0.1 and [::1]; "
        "else any",
    )
    serve.add_argument(
        "--namespace",
        help="the agent's tasks in a shared store are kept under this name (default: the "
        "agent's name; NAME with several agents; '' for tasks stored before namespaces)",
    )
    add_log_options(serve)
    add_graceful_option(serve)
    add_reload_option(serve)
    add_security_options(serve)
    add_push_options(serve)
    add_quota_options(serve)
    add_bus_option(serve)
    add_tls_options(serve)
    add_connection_options(serve)
    add_config_option(serve)
    add_release_options(serve)
    add_inspector_option(serve)
    add_observability_options(serve)
    add_exec_options(serve)
    serve.set_defaults(run=run_serve)
    _PARSERS.append(serve)


def make_handler(
    target: Any,
    url: str,
    *,
    store: str = "memory",
    grpc_address: str | None = None,
    security: Security | None = None,
    namespace: str | None = None,
    push: PushSettings | bool | None = None,
    bus: str | None = None,
    sign_card: Callable[[AgentCard], AgentCard] | None = None,
    quotas: Quotas = DEFAULT_QUOTAS,
) -> Any:
    """An AgentService for an Agent (its tasks in `store`, a store URL, under `namespace`
    (default: the agent's name); its card with the gRPC interfaces at `grpc_address`, if
    given, and the extended card the agent makes of it, if any; callers authenticated by
    `security`, else by the agent's own; notifications delivered by `push`, see
    AgentService; its events on the Redis `bus`, if given); any other target as it is."""
    if not is_servable(target):
        return target
    try:
        tasks, push_configs = open_store(store)
    except (ValueError, ImportError) as exc:
        raise SystemExit(f"parley serve: --store: {exc}") from None
    card = target.card(url, grpc_address=grpc_address, security=security)
    extended = getattr(target, "extended_card", None)
    log.info("tasks are stored in %s", where_stored(store))
    try:
        return AgentService(
            target.executor(),
            card,
            store=tasks,
            push_store=push_configs,
            extended_card=extended(card) if extended is not None else None,
            security=security or target.security,
            namespace=namespace,
            push=push,
            broker=event_bus(bus, store),
            sign_card=sign_card,
            quotas=quotas,
        )
    except (ValueError, ImportError) as exc:
        raise SystemExit(f"parley serve: {exc}") from None


def is_handler(target: Any) -> bool:
    return hasattr(target, "card") and hasattr(target, "send_message")


def make_app(
    target: Any,
    url: str,
    card_mode: Literal["hybrid", "v1"],
    *,
    store: str = "memory",
    security: Security | None = None,
    hosts: Sequence[str] | None = None,
    namespace: str | None = None,
    push: PushSettings | bool | None = None,
    bus: str | None = None,
    sign_card: Callable[[AgentCard], AgentCard] | None = None,
    quotas: Quotas = DEFAULT_QUOTAS,
    wire_compat: str = DEFAULT_WIRE_COMPAT,
) -> Any:
    """An ASGI app for an Agent (its tasks in `store`, a store URL) or an AgentService (or
    any RequestHandler), answering the Host names `hosts` (None: any); or an app, as it is."""
    where: dict[str, Any] = {"namespace": namespace, "push": push, "bus": bus}
    where["sign_card"] = sign_card
    where["quotas"] = quotas
    target = make_handler(target, url, store=store, security=security, **where)
    if is_handler(target):
        return build_app(target, card_mode=card_mode, allowed_hosts=hosts, wire_compat=wire_compat)
    if callable(target):
        return target
    raise SystemExit(f"parley serve: {target!r} is not an agent, handler or ASGI app")


def run_serve(arguments: argparse.Namespace) -> int:
    if _PARSERS:
        apply_config(arguments, _PARSERS[-1])  # the --config file and PARLEY_* variables
    check_exec(arguments)
    if not arguments.target:
        raise SystemExit(
            "parley serve: name the agent (module:attribute, a module or a .py file), on the "
            "command line, as $PARLEY_TARGET or as `target` in --config"
        )
    try:
        import uvicorn  # noqa: PLC0415 - an optional extra, needed only here
    except ImportError:
        raise SystemExit(
            "parley serve needs the server extra: pip install 'parley-a2a[server]'"
        ) from None
    configure_logging(arguments)  # secrets redacted in every log record
    if arguments.listen_fd is None:
        check_port(arguments.host, arguments.port)  # before any store is opened
    tls = tls_from(arguments)
    if arguments.reload:
        return run_reloading(arguments, server_options(arguments, tls))
    if arguments.workers > 1 and arguments.listen_fd is None:
        store = arguments.store or default_store()
        check_store(store)  # said once here, not once by each worker
        return run_workers(arguments, store)
    options = server_options(arguments, tls)
    if arguments.grpc_port is not None:
        return _serve_with_grpc(arguments, options, tls)
    uvicorn.run(serve_app(arguments), **options)
    return 0


def serve_app(arguments: argparse.Namespace) -> Any:
    """The ASGI app `parley serve` serves for `arguments` (options applied): one agent,
    or several, each under /NAME."""
    check_exec(arguments)  # (again: `--reload` parses the options anew)
    tls = tls_from(arguments)
    url = public_url(arguments, tls)
    store = arguments.store or default_store()
    hosts = allowed_hosts(arguments.host, url, arguments.allowed_hosts)
    named = named_targets(arguments.target)
    if named is not None:
        mounted = mount_agents(_apps(named, url, arguments, store, tls), url, hosts)
        return GracefulStop(observed(mounted, arguments))
    spec = arguments.target[0]
    target, security = _load(spec, arguments, store, tls)
    app = make_app(
        target,
        url,
        arguments.card,
        store=store,
        security=security,
        hosts=hosts,
        namespace=arguments.namespace,
        push=push_settings(arguments),
        bus=arguments.bus,
        sign_card=card_signer(arguments),
        quotas=quotas_from(arguments),
        wire_compat=arguments.wire_compat,
    )
    log.info("Parley %s serving %s at %s", __version__, spec, url)
    return GracefulStop(observed(inspected(app, arguments), arguments))


def public_url(arguments: argparse.Namespace, tls: TlsFiles | None) -> str:
    scheme = "https" if tls else "http"
    return str(arguments.url or f"{scheme}://{arguments.host}:{arguments.port}")


def _load(
    spec: str, arguments: argparse.Namespace, store: str, tls: TlsFiles | None
) -> tuple[Any, Security | None]:
    """The target, its store checked (`preflight`), and its security."""
    target = drafted(exec_or_load(spec, arguments), arguments)
    if not is_servable(target):
        if arguments.store:
            log.warning("--store applies to an Agent target only: %s keeps its own stores", spec)
        if arguments.api_key or arguments.bearer_tokens or jwt_requested(arguments):
            raise SystemExit("parley serve: authentication options apply to an Agent target only")
        return target, None
    check_store(store)
    return target, agent_security(arguments, target, tls)


def server_options(arguments: argparse.Namespace, tls: TlsFiles | None) -> dict[str, Any]:
    """uvicorn's options: where to listen, the log level, the graceful stop, TLS, and the
    HTTP protocol guarded by the connection limits. No WebSocket protocol: no A2A binding
    uses one, and loading uvicorn's would add a sixth of the cold start."""
    tls_options = uvicorn_options(tls)
    guard = connection_options(connection_limits(arguments), tls_options.get("http"))
    return {
        **listen_options(arguments),
        "log_level": arguments.log_level,
        "log_config": log_config(arguments),
        "timeout_graceful_shutdown": arguments.graceful_timeout,
        "ws": "none",
        **tls_options,
        **guard,
    }


def agent_security(
    arguments: argparse.Namespace, agent: Servable, tls: TlsFiles | None
) -> Security | None:
    """The agent's own security plus what the options add (mutual TLS with a client CA)."""
    return security_from(arguments, agent.security, mutual_tls_schemes(tls, agent.security))


def _apps(
    named: dict[str, str],
    url: str,
    arguments: argparse.Namespace,
    store: str,
    tls: TlsFiles | None,
) -> dict[str, Any]:
    """Each agent's app, to serve under `/NAME` of one HTTP server (`parley.asgi.mount`):
    its card names its own URLs, its tasks are kept under the namespace NAME, its
    security is its own plus the options'."""
    if arguments.namespace is not None:
        raise SystemExit("parley serve: with several agents, each one's namespace is its NAME")
    hosts = allowed_hosts(arguments.host, url, arguments.allowed_hosts)
    compat = arguments.wire_compat
    check_store(store)
    apps = {}
    for name, spec in named.items():
        agent = drafted(load_target(spec), arguments)
        if not is_servable(agent):
            raise SystemExit(f"parley serve: {name}={spec} is not an Agent")
        security = agent_security(arguments, agent, tls)
        handler = make_handler(
            agent,
            f"{url}/{name}",
            store=store,
            security=security,
            namespace=name,
            push=push_settings(arguments),
            bus=arguments.bus,
            sign_card=card_signer(arguments),
            quotas=quotas_from(arguments),
        )
        app = build_app(handler, card_mode=arguments.card, allowed_hosts=hosts, wire_compat=compat)
        apps[name] = inspected(app, arguments)
        log.info("Parley %s serving %s at %s/%s", __version__, spec, url, name)
    return apps


def _serve_with_grpc(
    arguments: argparse.Namespace, options: dict[str, Any], tls: TlsFiles | None
) -> int:
    """uvicorn and a gRPC server in one event loop, over one handler (over TLS too with
    `tls`)."""
    import uvicorn  # noqa: PLC0415 - an optional extra, checked by run_serve

    try:
        from parley.grpc import GrpcServer  # noqa: PLC0415 - the grpc extra
    except ImportError as exc:
        raise SystemExit(f"parley serve: --grpc-port: {exc}") from None
    if named_targets(arguments.target) is not None:
        raise SystemExit(
            "parley serve: --grpc-port serves one agent; several agents are served over "
            "JSON-RPC and HTTP+JSON, each under /NAME"
        )
    url = public_url(arguments, tls)
    store = arguments.store or default_store()
    spec = arguments.target[0]
    target, security = _load(spec, arguments, store, tls)
    host = urlsplit(url).hostname or arguments.host
    grpc_address = f"{host}:{arguments.grpc_port}"
    where = {
        "grpc_address": grpc_address,
        "namespace": arguments.namespace,
        "push": push_settings(arguments),
        "bus": arguments.bus,
        "sign_card": card_signer(arguments),
        "quotas": quotas_from(arguments),
    }
    handler = make_handler(target, url, store=store, security=security, **where)
    if not is_handler(handler):
        raise SystemExit("parley serve: --grpc-port needs an agent or a request handler")
    credentials = grpc_credentials(tls) if tls else None
    compat = arguments.wire_compat
    grpc_server = GrpcServer(
        handler,
        host=arguments.host,
        port=arguments.grpc_port,
        credentials=credentials,
        wire_compat=compat,
    )
    hosts = allowed_hosts(arguments.host, url, arguments.allowed_hosts)
    app = build_app(handler, card_mode=arguments.card, allowed_hosts=hosts, wire_compat=compat)
    app = observed(inspected(app, arguments), arguments)
    grpc_server = observed_grpc(grpc_server, arguments)
    log.info("Parley %s serving %s at %s", __version__, spec, url)
    server, failures = with_grpc(uvicorn.Config(GracefulStop(app), **options), grpc_server)
    server.run()
    return 1 if failures else 0
