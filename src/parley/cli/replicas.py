"""`parley serve`'s options for running several replicas of one agent: `--bus`, the Redis
event bus that carries task events between them (`parley.server.redis_bus`), and
`--workers N`, N replicas on this machine sharing one listening socket."""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from parley.server.stores.urls import describe

if TYPE_CHECKING:
    from parley.server.redis_bus import RedisBus

log = logging.getLogger("parley")

START_GRACE = 5.0
"""Seconds after its start within which a worker's exit is an error of the command, not
a crash to recover from."""


def add_bus_option(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "replicas", "several processes serving one agent over one shared store"
    )
    group.add_argument(
        "--bus",
        metavar="redis://HOST:PORT/DB",
        help="carry task events between replicas through this Redis (streams and "
        "subscriptions see the events of tasks run by any replica); needs a shared store "
        "(postgresql:// or one SQLite file); ?prefix=NAME keys it apart (default parley), "
        "?lease=SECONDS sets how soon a dead replica's tasks are failed over (default 6)",
    )
    add_workers_options(group)  # type: ignore[arg-type]


def event_bus(url: str | None, store: str) -> RedisBus | None:
    """The bus `--bus` names, or None; SystemExit for a store replicas cannot share."""
    if url is None:
        return None
    if not url.lower().startswith(("redis://", "rediss://", "unix://")):
        shown = describe(url)  # never its password
        raise SystemExit(f"parley serve: --bus: expected redis://host:port/db, got {shown!r}")
    if store.strip() in ("memory", "memory://"):
        raise SystemExit(
            "parley serve: --bus needs a store the replicas share (postgresql://... or "
            "sqlite:///path.db), not memory"
        )
    from parley.server.redis_bus import RedisBus  # noqa: PLC0415 - with --bus only

    try:
        return RedisBus(url)
    except ValueError as exc:
        raise SystemExit(f"parley serve: --bus: {exc}") from None


def add_workers_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="serve from N processes sharing the port (N > 1 needs --bus and a shared "
        "store: the processes are replicas); a worker that dies is replaced",
    )
    parser.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)


def listen_options(arguments: argparse.Namespace) -> dict[str, object]:
    """uvicorn's: the socket a worker was given, else the host and port to bind."""
    if arguments.listen_fd is not None:
        return {"fd": arguments.listen_fd}
    if arguments.workers < 1:
        raise SystemExit("parley serve: --workers must be at least 1")
    return {"host": arguments.host, "port": arguments.port}


def worker_argv(argv: Sequence[str], fd: int) -> list[str]:
    """A worker's command line: the server's, without --workers, listening on `fd`."""
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == "--workers":
            skip = True
        elif not word.startswith("--workers="):
            kept.append(word)
    return [*kept, "--listen-fd", str(fd)]


def run_workers(arguments: argparse.Namespace, store: str) -> int:
    """Bind the port here and run `--workers` processes serving it (`Workers`)."""
    if arguments.bus is None:
        raise SystemExit(
            "parley serve: --workers N > 1 runs N replicas: give them --bus redis://... "
            "(and a shared store)"
        )
    event_bus(arguments.bus, store)  # the same checks the workers make, said once
    listener = socket.create_server((arguments.host, arguments.port))
    listener.set_inheritable(True)
    argv = worker_argv(getattr(arguments, "argv", sys.argv[1:]), listener.fileno())
    workers = Workers([sys.executable, "-m", "parley.cli", *argv], listener.fileno())
    for each in (signal.SIGINT, signal.SIGTERM):
        signal.signal(each, workers.forward)
    log.info("serving with %d workers at %s:%d", arguments.workers, arguments.host, arguments.port)
    return workers.run(arguments.workers)


class Workers:
    """N processes of one command sharing the listening socket `fd`: one that dies is
    replaced, one that dies at start (within `START_GRACE`) stops them all with its exit
    code (its error is the answer); SIGINT and SIGTERM are passed on."""

    def __init__(self, command: list[str], fd: int) -> None:
        self.command = command
        self.fd = fd
        self.running: list[tuple[subprocess.Popen[bytes], float]] = []
        self.stopping = False

    def spawn(self) -> tuple[subprocess.Popen[bytes], float]:
        process = subprocess.Popen(self.command, pass_fds=[self.fd])  # noqa: S603 - our own
        return process, time.monotonic()

    def forward(self, signum: int, _frame: object = None) -> None:
        self.stopping = True
        for process, _ in self.running:
            if process.poll() is None:
                process.send_signal(signum)

    def run(self, count: int) -> int:
        self.running = [self.spawn() for _ in range(count)]
        while not self.stopping or any(p.poll() is None for p, _ in self.running):
            for number, (process, since) in enumerate(self.running):
                code = process.poll()
                if code is None or self.stopping:
                    continue
                if time.monotonic() - since < START_GRACE:
                    self.forward(signal.SIGTERM)
                    for other, _ in self.running:
                        other.wait(30)
                    return code or 1
                log.warning("worker %d ended (exit %s); starting another", process.pid, code)
                self.running[number] = self.spawn()
            time.sleep(0.2)
        return 0
