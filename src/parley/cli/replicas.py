"""`parley serve`'s option for running several replicas of one agent: `--bus`, the Redis
event bus that carries task events between them (`parley.server.redis_bus`)."""

from __future__ import annotations

import argparse

from parley.server.redis_bus import RedisBus


def add_bus_option(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "replicas", "several processes serving one agent over one shared store"
    )
    group.add_argument(
        "--bus",
        metavar="redis://HOST:PORT/DB",
        help="carry task events between replicas through this Redis (streams and "
        "subscriptions see the events of tasks run by any replica); needs a shared store "
        "(postgresql:// or one SQLite file); ?prefix=NAME keys it apart (default parley)",
    )


def event_bus(url: str | None, store: str) -> RedisBus | None:
    """The bus `--bus` names, or None; SystemExit for a store replicas cannot share."""
    if url is None:
        return None
    if not url.lower().startswith(("redis://", "rediss://", "unix://")):
        raise SystemExit(f"parley serve: --bus: expected redis://host:port/db, got {url!r}")
    if store.strip() in ("memory", "memory://"):
        raise SystemExit(
            "parley serve: --bus needs a store the replicas share (postgresql://... or "
            "sqlite:///path.db), not memory"
        )
    return RedisBus(url)
