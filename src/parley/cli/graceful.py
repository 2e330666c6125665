"""`parley serve`'s graceful stop. On SIGTERM (or Ctrl-C) uvicorn stops accepting
connections and waits up to `--graceful-timeout` seconds for the requests in flight: a
blocking send gets its answer, a stream its last event. What still runs then is cut:
`GracefulStop` answers a request cut before its answer began with 503 and Retry-After
(not a 500 and a traceback), and ends a stream cut midway cleanly. The agent's run is
cancelled without failing its task, which stays as it was in the store: another replica
takes it over (`--bus`), or a restart applies the restart policy."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from typing import Any

GRACEFUL_TIMEOUT = 20.0
"""Seconds a stopping server gives the requests in flight (`--graceful-timeout`): within
the 30 s a container is usually given between SIGTERM and SIGKILL."""
STOPPING = json.dumps(
    {"error": "the server is stopping; try again (a task it was running stays stored)"}
).encode()


def add_graceful_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--graceful-timeout",
        type=float,
        default=GRACEFUL_TIMEOUT,
        metavar="S",
        help="on SIGTERM or Ctrl-C, seconds for running blocking sends and open streams to "
        f"finish before they are cut (default {GRACEFUL_TIMEOUT:g})",
    )


class GracefulStop:
    """ASGI middleware: a request cancelled (uvicorn cancels what outlives the graceful
    timeout) ends with a 503 or, once its answer has begun, with the end of its body."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        except asyncio.CancelledError:
            if scope["type"] != "http":
                raise
            await _last_words(send)


async def _last_words(send: Any) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"retry-after", b"1"),
        (b"connection", b"close"),
    ]
    try:
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        body = STOPPING
    except Exception:
        body = b""
    with contextlib.suppress(Exception):  # the connection is gone: nothing to end
        await send({"type": "http.response.body", "body": body, "more_body": False})
