"""`parley push list | retry`: the push notifications waiting in a store's outbox (pending,
being retried) or given up on (dead), and dead ones sent again (`--store URL`, default: what
`parley serve` uses). Safe while a server runs on the same store: a retried notification is
picked up by its delivery worker within a second."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import UTC, datetime
from typing import Any

from parley.cli.db import add_store_argument
from parley.server.push.outbox import DEAD, PENDING, Delivery, Outbox
from parley.server.stores import SchemaError, Stores, describe, open_store


def add_push_command(commands: Any) -> None:
    push = commands.add_parser(
        "push",
        help="inspect and retry push-notification deliveries",
        description="Inspect the push notifications a store holds for delivery, and send "
        "dead ones again.",
    )
    actions = push.add_subparsers(dest="push_command", required=True, metavar="ACTION")
    listing = actions.add_parser(
        "list",
        help="list pending (or --dead) notifications",
        description="List the notifications waiting for delivery, oldest first: pending ones "
        "(not yet delivered, or being retried), or with --dead those given up on.",
    )
    listing.add_argument("--dead", action="store_true", help="list dead notifications")
    listing.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    retry = actions.add_parser(
        "retry",
        help="send dead notifications again",
        description="Make dead notifications pending again, due now (by id, or --all).",
    )
    retry.add_argument("ids", nargs="*", type=int, metavar="ID", help="notification ids")
    retry.add_argument("--all", action="store_true", help="every dead notification")
    for parser, run in ((listing, _list), (retry, _retry)):
        add_store_argument(parser)
        parser.set_defaults(run=run)


def _outbox(url: str) -> tuple[Stores, Outbox]:
    try:
        stores = open_store(url)
    except (ValueError, ImportError) as exc:
        raise SystemExit(f"parley push: {exc}") from None
    outbox = getattr(stores.push_configs, "outbox", None)
    if outbox is None or url.strip() == "memory":
        raise SystemExit("parley push: a memory store keeps nothing to inspect; name --store")
    return stores, outbox


def _run(stores: Stores, work: Any) -> Any:
    async def opened() -> Any:
        try:
            await stores.tasks.open()
            return await work()
        finally:
            await stores.tasks.close()

    try:
        return asyncio.run(opened())
    except SchemaError as exc:
        raise SystemExit(f"parley push: {exc}") from None


def _list(arguments: argparse.Namespace) -> int:
    if arguments.limit < 1:
        raise SystemExit("parley push list: --limit must be at least 1")
    stores, outbox = _outbox(arguments.store)
    state = DEAD if arguments.dead else PENDING
    found: list[Delivery] = _run(stores, lambda: outbox.inspect(state=state, limit=arguments.limit))
    if arguments.json:
        for each in found:
            sys.stdout.write(json.dumps(_as_json(each)) + "\n")
        return 0
    kind = "dead" if arguments.dead else "pending"
    if not found:
        sys.stdout.write(f"{describe(arguments.store)}: no {kind} notifications\n")
        return 0
    for each in found:
        when = "" if each.state == DEAD else f"  due {_iso(each.due_at)}"
        sys.stdout.write(
            f"{each.id}  {each.sent_id}  task {each.task_id}  config {each.config_id}"
            f"  attempts {each.attempts}{when}\n"
        )
        if each.last_error:
            sys.stdout.write(f"    last error: {each.last_error}\n")
    return 0


def _retry(arguments: argparse.Namespace) -> int:
    if bool(arguments.ids) == arguments.all:
        raise SystemExit("parley push retry: name notification ids, or --all")
    stores, outbox = _outbox(arguments.store)
    ids = None if arguments.all else arguments.ids
    now = time.time_ns() // 1000
    count: int = _run(stores, lambda: outbox.requeue(ids, now))
    sys.stdout.write(f"{describe(arguments.store)}: {count} dead notifications pending again\n")
    return 0 if arguments.all or count == len(arguments.ids) else 1


def _iso(micros: int) -> str:
    return datetime.fromtimestamp(micros / 1e6, UTC).isoformat(timespec="seconds")


def _as_json(each: Delivery) -> dict[str, Any]:
    return {
        "id": each.id,
        "notificationId": each.sent_id,
        "tenant": each.scope[0],
        "owner": each.scope[1],
        "taskId": each.task_id,
        "configId": each.config_id,
        "state": "dead" if each.state == DEAD else "pending",
        "attempts": each.attempts,
        "dueAt": _iso(each.due_at),
        "createdAt": _iso(each.created_at),
        "lastError": each.last_error,
    }
