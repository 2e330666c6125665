"""`parley serve --inspector`: also serve the web inspector (`parley.inspector`) at
`/inspector/` of each agent, where a browser at `/` is sent. Off by default; when the agent
has security, everything the page shows needs the caller's credentials. In a `--config`
file: `inspector = true`."""

from __future__ import annotations

import argparse
from typing import Any

from parley.asgi.app import A2AApp


def add_inspector_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--inspector",
        action="store_true",
        help="serve the web inspector at /inspector/ (the card and its checks, a chat, the "
        "tasks, push deliveries); a browser at / goes there",
    )


def inspected(app: Any, arguments: argparse.Namespace) -> Any:
    """`app` with the inspector when `--inspector` is given (an agent's or a request
    handler's app; SystemExit for an ASGI app of another kind), else `app` itself."""
    if not getattr(arguments, "inspector", False):
        return app
    if not isinstance(app, A2AApp):
        raise SystemExit("parley serve: --inspector needs an agent or a request handler")
    from parley.inspector import with_inspector  # noqa: PLC0415 - with --inspector only

    return with_inspector(app)
