"""`parley proxy --to URL`: serve any A2A agent over every binding (JSON-RPC, HTTP+JSON,
gRPC with `--grpc-port`) in every released version, by forwarding each call to it
(`parley.server.proxy`); the proxy's own authentication, rate limits, TLS and telemetry
come from `parley serve`'s options."""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit

from parley import __version__
from parley.asgi import build_app
from parley.cli.connections import add_connection_options
from parley.cli.graceful import GracefulStop, add_graceful_option
from parley.cli.hosts import allowed_hosts
from parley.cli.logs import add_log_options, configure_logging
from parley.cli.observability import add_observability_options, observed, observed_grpc
from parley.cli.options import agent_url, header, seconds
from parley.cli.preflight import check_port
from parley.cli.quotas import add_quota_options, quotas_from
from parley.cli.security import add_security_options, card_signer, security_from
from parley.cli.serve import server_options
from parley.cli.serve_grpc import with_grpc
from parley.cli.tls import add_tls_options, grpc_credentials, mutual_tls_schemes, tls_from
from parley.cli.wire_compat import add_wire_compat_option
from parley.client import BearerAuth, ClientError, fetch_card
from parley.client.transport import DEFAULT_TIMEOUT
from parley.protocol.errors import A2AError
from parley.server.proxy import ProxyHandler, proxy_card

log = logging.getLogger("parley")


def add_proxy_command(commands: Any) -> None:
    proxy = commands.add_parser(
        "proxy",
        help="serve another A2A agent over every binding and version",
        description="Serve the A2A agent at --to over JSON-RPC and HTTP+JSON (and gRPC with "
        "--grpc-port), in every released protocol version, forwarding each call to it.",
    )
    proxy.add_argument(
        "--to",
        required=True,
        type=agent_url,
        metavar="URL",
        help="the upstream agent's base URL (its card is read from there)",
    )
    proxy.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    proxy.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    proxy.add_argument("--url", help="public base URL put in the card (default http://HOST:PORT)")
    proxy.add_argument(
        "--card",
        choices=["hybrid", "v1"],
        default="hybrid",
        help="card shape, as parley serve's (default hybrid)",
    )
    proxy.add_argument(
        "--grpc-port", type=int, help="also serve gRPC on this port, and put it in the card"
    )
    proxy.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        metavar="HOST",
        help="a Host name the HTTP server answers to, as parley serve's",
    )
    upstream = proxy.add_argument_group("upstream", "how the proxy calls the agent at --to")
    upstream.add_argument(
        "--upstream-header",
        metavar="NAME=VALUE",
        type=header,
        action="append",
        default=[],
        help="send this header on every call upstream (repeatable)",
    )
    upstream.add_argument(
        "--upstream-bearer", metavar="TOKEN", help="send this bearer token on every call upstream"
    )
    upstream.add_argument(
        "--forward-auth",
        action="store_true",
        help="send each caller's own Authorization header upstream (the "
        "upstream's security stays in the card)",
    )
    upstream.add_argument(
        "--upstream-timeout",
        type=seconds,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds a call upstream may take (default {DEFAULT_TIMEOUT:g}; streams: no limit)",
    )
    add_log_options(proxy)
    add_graceful_option(proxy)
    add_security_options(proxy)
    add_quota_options(proxy)
    add_tls_options(proxy)
    add_connection_options(proxy)
    add_wire_compat_option(proxy)
    add_observability_options(proxy)
    proxy.set_defaults(run=run_proxy, listen_fd=None, workers=1)  # (`server_options`)


def proxy_handler(arguments: argparse.Namespace) -> ProxyHandler:
    """The handler for `arguments`: the upstream card read now, rewritten for the proxy."""
    tls = tls_from(arguments)
    url = arguments.url or f"{'https' if tls else 'http'}://{arguments.host}:{arguments.port}"
    try:
        upstream = asyncio.run(fetch_card(arguments.to))
    except (ClientError, A2AError) as exc:
        raise SystemExit(f"parley proxy: cannot read the card at {arguments.to}: {exc}") from None
    grpc_address = None
    if arguments.grpc_port is not None:
        grpc_address = f"{urlsplit(url).hostname or arguments.host}:{arguments.grpc_port}"
    card = proxy_card(
        upstream, url, grpc_address=grpc_address, keep_security=arguments.forward_auth
    )
    bearer = arguments.upstream_bearer
    return ProxyHandler(
        arguments.to,
        card,
        security=security_from(arguments, None, mutual_tls_schemes(tls, None)),
        auth=BearerAuth(bearer) if bearer else None,
        headers=dict(arguments.upstream_header),
        forward_auth=arguments.forward_auth,
        quotas=quotas_from(arguments),
        sign_card=card_signer(arguments),
        timeout=arguments.upstream_timeout,
    )


def run_proxy(arguments: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: PLC0415 - an optional extra, needed only here
    except ImportError:
        raise SystemExit(
            "parley proxy needs the server extra: pip install 'parley-a2a[server]'"
        ) from None
    configure_logging(arguments)
    check_port(arguments.host, arguments.port)
    tls = tls_from(arguments)
    handler = proxy_handler(arguments)
    url = handler.card.supported_interfaces[0].url
    hosts = allowed_hosts(arguments.host, url, arguments.allowed_hosts)
    compat = arguments.wire_compat
    app = build_app(handler, card_mode=arguments.card, allowed_hosts=hosts, wire_compat=compat)
    options = server_options(arguments, tls)
    served = GracefulStop(observed(app, arguments))
    log.info("Parley %s proxying %s at %s", __version__, arguments.to, url)
    if arguments.grpc_port is None:
        uvicorn.run(served, **options)
        return 0
    from parley.grpc import GrpcServer  # noqa: PLC0415 - the grpc extra

    grpc_server = GrpcServer(
        handler,
        host=arguments.host,
        port=arguments.grpc_port,
        credentials=grpc_credentials(tls) if tls else None,
        wire_compat=compat,
    )
    server, failures = with_grpc(
        uvicorn.Config(served, **options), observed_grpc(grpc_server, arguments)
    )
    server.run()
    return 1 if failures else 0
