"""`parley serve`'s bounds on slow and greedy HTTP clients: how many bytes a request's
headers may take, how long its headers and its body may take to arrive, and how many
connections one server process keeps open (`ConnectionLimits`, from the options
`--max-header-bytes`, `--header-timeout`, `--body-timeout`, `--max-connections`).

`connection_options` is what uvicorn is given: its HTTP/1.1 protocol with the guard of
`parley.cli.connection_guard` mixed in, with or without TLS, in every worker."""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import Any

from msgspec import Struct

log = logging.getLogger("parley")

DESCRIPTOR_MARGIN = 100
"""Descriptors left to the process (stores, gRPC, files) under its soft limit."""


class ConnectionLimits(Struct, frozen=True):
    """The bounds: bytes from a request's first byte until its headers are complete (more:
    431); seconds for the headers to arrive, from the request's first byte or the
    connection's start (more: 408); seconds for the body to arrive once the headers are
    in (more: 408); open connections in this process (more: the least recently active
    connection not running a request is closed, or, when every one is, the new one is
    refused with 503)."""

    max_header_bytes: int = 64 * 1024
    header_timeout: float = 10.0
    body_timeout: float = 60.0
    max_connections: int = 1000


DEFAULT_CONNECTION_LIMITS = ConnectionLimits()


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    default = DEFAULT_CONNECTION_LIMITS
    group = parser.add_argument_group(
        "connections", "what one HTTP client may hold: header size, time to send, connections"
    )
    group.add_argument(
        "--max-header-bytes",
        type=int,
        metavar="N",
        help="answer 431 to a request whose request line and headers pass N bytes "
        f"(default {default.max_header_bytes})",
    )
    group.add_argument(
        "--header-timeout",
        type=float,
        metavar="SECONDS",
        help="answer 408 to a request whose headers are not in within SECONDS of its first "
        f"byte (default {default.header_timeout:g})",
    )
    group.add_argument(
        "--body-timeout",
        type=float,
        metavar="SECONDS",
        help="answer 408 to a request whose body is not in within SECONDS of its headers "
        f"(default {default.body_timeout:g}); responses (streams) are not timed",
    )
    group.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="keep at most N connections open per process, closing idle or slow ones to "
        f"make room (default {default.max_connections}, at most the descriptor limit "
        f"less {DESCRIPTOR_MARGIN})",
    )


def connection_limits(arguments: argparse.Namespace) -> ConnectionLimits:
    """The limits the options set (SystemExit for a value out of range); the cap on
    connections lowered to what the process's descriptor limit allows."""
    default = DEFAULT_CONNECTION_LIMITS
    header_bytes = _given(arguments, "max_header_bytes", default.max_header_bytes)
    header_timeout = _given(arguments, "header_timeout", default.header_timeout)
    body_timeout = _given(arguments, "body_timeout", default.body_timeout)
    requested = _given(arguments, "max_connections", None)
    if header_bytes < 1024:
        raise SystemExit("parley serve: --max-header-bytes must be at least 1024")
    if header_timeout <= 0 or body_timeout <= 0:
        raise SystemExit("parley serve: --header-timeout and --body-timeout must be above 0")
    if requested is not None and requested < 1:
        raise SystemExit("parley serve: --max-connections must be at least 1")
    cap = connection_cap(requested)
    return ConnectionLimits(header_bytes, header_timeout, body_timeout, cap)


def _given(arguments: argparse.Namespace, name: str, default: Any) -> Any:
    value = getattr(arguments, name, None)
    return default if value is None else value


def connection_cap(requested: int | None) -> int:
    """`requested` (None: the default), never above the soft descriptor limit less
    `DESCRIPTOR_MARGIN` (a larger request is lowered, with a warning)."""
    wanted = DEFAULT_CONNECTION_LIMITS.max_connections if requested is None else requested
    ceiling = _descriptor_ceiling()
    if ceiling is None or wanted <= ceiling:
        return wanted
    if requested is not None:
        log.warning(
            "--max-connections %d is above what the descriptor limit allows: %d connections",
            requested,
            ceiling,
        )
    return ceiling


def _descriptor_ceiling() -> int | None:
    try:
        import resource  # noqa: PLC0415 - not on every platform
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    return max(1, soft - DESCRIPTOR_MARGIN)


def connection_options(
    limits: ConnectionLimits, protocol: type[asyncio.Protocol] | None = None
) -> dict[str, Any]:
    """`uvicorn.Config` keywords: `protocol` (default: uvicorn's own choice, httptools if
    installed, else h11) guarded by `limits`, and h11's buffer sized to the header bound."""
    from parley.cli.connection_guard import guarded  # noqa: PLC0415 - needs the server extra

    return {
        "http": guarded(protocol or _uvicorn_protocol(), limits),
        "h11_max_incomplete_event_size": limits.max_header_bytes,
    }


def _uvicorn_protocol() -> type[asyncio.Protocol]:
    try:
        from uvicorn.protocols.http.httptools_impl import (  # noqa: PLC0415 - the server extra
            HttpToolsProtocol,
        )
    except ImportError:  # pragma: no cover - depends on the installed extras
        from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415

        return H11Protocol
    return HttpToolsProtocol
