"""`parley mcp URL`: the A2A agent at URL as an MCP server, each skill a tool
(`parley.adapters.mcp_bridge`), over stdio (the default, for an MCP client that starts it)
or Streamable HTTP (`--http`, on loopback by default). The card is fetched once, at start;
stdout belongs to MCP, so everything else goes to stderr."""

from __future__ import annotations

import argparse
from typing import Any

from parley.cli.errors import EXIT_CODES
from parley.cli.hosts import is_loopback
from parley.cli.options import common_options, connected
from parley.cli.output import Output
from parley.cli.talk import execute


def add_mcp_command(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp",
        parents=[common_options()],
        help="serve an agent's skills as MCP tools",
        description="Serve the A2A agent at URL to MCP clients: one tool per skill, over "
        "stdio (default) or Streamable HTTP (--http). Needs the mcp extra.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mcp.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="with --http: interface (127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8001, help="with --http: port (default 8001)")
    mcp.add_argument(
        "--path", default="/mcp", help="with --http: the endpoint's path (default /mcp)"
    )
    mcp.add_argument(
        "--call-timeout",
        type=float,
        metavar="S",
        help="seconds a tool call may wait for its task (default: as long as it takes)",
    )
    mcp.set_defaults(run=run_mcp)


def run_mcp(arguments: argparse.Namespace) -> int:
    try:
        from parley.adapters import mcp_bridge  # noqa: PLC0415, F401 - the mcp extra
    except ImportError as exc:
        raise SystemExit(f"parley mcp: {exc}") from None
    if arguments.http and not is_loopback(arguments.host):
        import logging  # noqa: PLC0415

        logging.getLogger("parley").warning(
            "parley mcp: serving on %s: every caller that reaches it talks to the agent "
            "with this command's credentials",
            arguments.host,
        )
    return execute(_serve, arguments)


async def _serve(arguments: argparse.Namespace, output: Output) -> int:
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    from parley.adapters.mcp_bridge import Bridge, mcp_server  # noqa: PLC0415

    async with connected(arguments) as client:
        server = mcp_server(Bridge(client, deadline=arguments.call_timeout))
        if arguments.http:
            await _serve_http(server, arguments)
            return 0
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    return 0


async def _serve_http(server: Any, arguments: argparse.Namespace) -> None:
    try:
        import uvicorn  # noqa: PLC0415
    except ImportError:
        raise SystemExit(
            "parley mcp --http needs the server extra: pip install 'parley-a2a[server]'"
        ) from None
    app = server.streamable_http_app(streamable_http_path=arguments.path, host=arguments.host)
    config = uvicorn.Config(app, host=arguments.host, port=arguments.port, log_level="warning")
    await uvicorn.Server(config).serve()
