"""`parley serve --reload`: for development, the server restarts when a Python file under
the current folder changes. uvicorn's reloader runs the app in a child process, started
anew on each change; the child builds the app from the same command line (handed over in
`$PARLEY_SERVE_ARGV`), so the agent's module is imported afresh."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

ARGV_ENV = "PARLEY_SERVE_ARGV"
"""The command line the reloaded child builds its app from (JSON)."""


def add_reload_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reload",
        action="store_true",
        help="development: restart when a Python file under the current folder changes "
        "(one process, without connection limits; not with --workers or --grpc-port)",
    )


def run_reloading(arguments: argparse.Namespace, options: dict[str, Any]) -> int:
    """Serve `arguments` under uvicorn's reloader (its options `options`)."""
    import uvicorn  # noqa: PLC0415 - the server extra, checked by run_serve

    if arguments.workers > 1 or arguments.grpc_port is not None:
        raise SystemExit(
            "parley serve: --reload runs one process serving HTTP: leave out --workers and "
            "--grpc-port"
        )
    argv = [word for word in getattr(arguments, "argv", []) if word != "--reload"]
    if "serve" not in argv:
        argv = ["serve", *arguments.target]
    os.environ[ARGV_ENV] = json.dumps(argv)
    # The child gets the options pickled: the connection guard's protocol, made per
    # command, is left out (a development server needs no connection limits).
    kept = {name: value for name, value in options.items() if name != "http"}
    uvicorn.run(f"{__name__}:app", factory=True, reload=True, reload_dirs=[str(Path.cwd())], **kept)
    return 0


def app() -> Any:
    """The reloaded child's app (uvicorn's factory): `parley serve` of `$PARLEY_SERVE_ARGV`
    with the `--config` file and environment applied, as the parent had them."""
    from parley.cli.config import apply_config  # noqa: PLC0415
    from parley.cli.main import build_parser  # noqa: PLC0415 - the command, built here
    from parley.cli.serve import _PARSERS, serve_app  # noqa: PLC0415

    argv = json.loads(os.environ[ARGV_ENV])
    arguments = build_parser().parse_args(argv)
    arguments.argv = argv
    apply_config(arguments, _PARSERS[-1])
    return serve_app(arguments)
