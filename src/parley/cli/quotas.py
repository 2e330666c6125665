"""`parley serve`'s rate limits and caps (`parley.server.quotas`, `parley.server.caps`):
`--rate-limit 10/second` for every operation of a caller, `--rate-limit-for send=2/second`
per operation class or operation, `--anonymous-rate-limit` per address of anonymous
callers, their storage (the `--bus` Redis by default, so that replicas share the counts),
and the caps on open streams and running tasks. In a `--config` file the same keys:

    rate-limit = "10/second"
    rate-limit-for = ["send=2/second", "read=100/minute"]
    max-streams = 20
"""

from __future__ import annotations

import argparse
from typing import Any

from parley.server.quotas import DEFAULT_QUOTAS, OPERATION_CLASSES, Quotas


def _cap(text: str) -> int | None:
    number = int(text)
    if number < 0:
        raise ValueError("a cap is a number of at least 0 (0: no cap)")
    return number or None


def add_quota_options(parser: argparse.ArgumentParser) -> None:
    kinds = ", ".join(sorted(set(OPERATION_CLASSES.values())))
    parser.add_argument(
        "--rate-limit",
        metavar="RATE",
        help="requests per caller (principal; anonymous: per address), every operation "
        "together, e.g. 10/second or '10/second;1000/hour'; over it: 429 with Retry-After "
        "(gRPC RESOURCE_EXHAUSTED)",
    )
    parser.add_argument(
        "--rate-limit-for",
        action="append",
        metavar="CLASS=RATE",
        help=f"a rate for one operation class ({kinds}) or operation (e.g. SendMessage), "
        "counted besides --rate-limit (repeatable)",
    )
    parser.add_argument(
        "--anonymous-rate-limit",
        metavar="RATE",
        help="requests per address of anonymous callers, and of refused credentials "
        "(default: --rate-limit)",
    )
    parser.add_argument(
        "--rate-limit-storage",
        metavar="URL",
        help="where rates are counted: memory, or redis://host:port/db to share the counts "
        "between processes (default: the --bus URL, else memory)",
    )
    parser.add_argument(
        "--max-streams",
        type=_cap,
        default=DEFAULT_QUOTAS.max_streams,
        metavar="N",
        help=f"open streams per caller (default {DEFAULT_QUOTAS.max_streams}; 0: no cap)",
    )
    parser.add_argument(
        "--max-running-tasks",
        type=_cap,
        default=DEFAULT_QUOTAS.max_running_tasks,
        metavar="N",
        help="tasks being worked on per caller (default "
        f"{DEFAULT_QUOTAS.max_running_tasks}; 0: no cap)",
    )
    parser.add_argument(
        "--max-running-tasks-total",
        type=_cap,
        default=DEFAULT_QUOTAS.max_running_tasks_total,
        metavar="N",
        help="tasks being worked on for all callers of the agent, in this process (default "
        f"{DEFAULT_QUOTAS.max_running_tasks_total}; 0: no cap)",
    )


def quotas_from(arguments: argparse.Namespace) -> Quotas:
    """The options' Quotas, their rates checked (SystemExit naming the option)."""
    operations: dict[str, str] = {}
    for given in getattr(arguments, "rate_limit_for", None) or ():
        name, equals, rate = given.partition("=")
        if not equals or not name.strip() or not rate.strip():
            raise SystemExit(f"parley serve: --rate-limit-for {given!r}: expected CLASS=RATE")
        operations[name.strip()] = rate.strip()
    storage = getattr(arguments, "rate_limit_storage", None)
    bus = getattr(arguments, "bus", None)
    if not storage and bus:  # the bus's Redis, without its own options (?prefix=, ?lease=)
        storage = bus.partition("?")[0]
    quotas = Quotas(
        rate=getattr(arguments, "rate_limit", None),
        operations=operations,
        anonymous_rate=getattr(arguments, "anonymous_rate_limit", None),
        storage=storage or "memory",
        max_streams=getattr(arguments, "max_streams", DEFAULT_QUOTAS.max_streams),
        max_running_tasks=getattr(arguments, "max_running_tasks", DEFAULT_QUOTAS.max_running_tasks),
        max_running_tasks_total=getattr(
            arguments, "max_running_tasks_total", DEFAULT_QUOTAS.max_running_tasks_total
        ),
    )
    if quotas.limits_rates:
        _check(quotas)
    return quotas


def _check(quotas: Quotas) -> Any:
    """Build a limiter once, so a bad rate or storage stops the command at start."""
    from parley.server.quotas import RateLimiter  # noqa: PLC0415

    try:
        return RateLimiter(quotas)
    except ImportError:
        raise SystemExit(
            "parley serve: rate limits need the `limits` package: pip install 'parley-a2a[server]'"
        ) from None
    except ValueError as exc:
        raise SystemExit(f"parley serve: {exc}") from None
