"""Rate limits per caller and operation class (R-OPS-14, R-OPS-15): rates in the `limits`
library's syntax, counted in this process or in Redis through `limits` (so that every
replica of an agent counts against one limit; `parley.server.quota_counts`).

Who is counted: an authenticated caller by its principal; an anonymous one by its network
address (a proxy in front must pass the client's address on, e.g. uvicorn's
`--forwarded-allow-ips`). What is counted: every operation against `Quotas.rate`, and each
operation against the rate of its class (`send`, `subscribe`, `read`, `cancel`,
`configure`) or of its own name (`SendMessage`) when one is set. Each rate is a fixed
window (`10/second`, `500/hour`; several joined by `;`). A refused credential counts
against its address's anonymous rate, so guessing keys is rate-limited too (R-OPS-9).

The bindings call `RateLimiter.admit` once a request's caller and operation are known,
before it is decoded; what it returns becomes the `X-RateLimit-*` headers (HTTP) or
metadata (gRPC), and an exhausted limit a RateLimitedError (429 with `Retry-After`,
RESOURCE_EXHAUSTED). The caps on open streams and running tasks are `parley.server.caps`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import msgspec

from parley.protocol.errors import RateLimitedError
from parley.protocol.operations import Operation
from parley.server.context import ANONYMOUS, Caller
from parley.server.quota_counts import MemoryCounts, counts_at

log = logging.getLogger("parley.quotas")

_O = Operation
OPERATION_CLASSES: Mapping[Operation, str] = {
    _O.SEND_MESSAGE: "send",
    _O.SEND_STREAMING_MESSAGE: "send",
    _O.SUBSCRIBE_TO_TASK: "subscribe",
    _O.GET_TASK: "read",
    _O.LIST_TASKS: "read",
    _O.GET_TASK_PUSH_NOTIFICATION_CONFIG: "read",
    _O.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: "read",
    _O.GET_EXTENDED_AGENT_CARD: "read",
    _O.CANCEL_TASK: "cancel",
    _O.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "configure",
    _O.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: "configure",
}
"""The class each operation is counted in, besides its own name."""

_EVERY = "*"
_PLANS_KEPT = 10_000
"""Callers' counter keys remembered (forgotten all at once beyond)."""
_QUIET_SECONDS = 30.0
"""At most one warning this often while the rate-limit storage cannot be reached."""


class Quotas(msgspec.Struct, frozen=True):
    """What each caller may cost. `rate`: every operation together, per caller (`None`: no
    rate limit); `operations`: a rate per operation class or operation name, counted as
    well; `anonymous_rate`: per network address, for anonymous callers and refused
    credentials (default: `rate`); `storage`: `memory` (this process) or a Redis URL
    (`redis://host:6379/0`: shared by the replicas). The caps (this process, per caller
    as counted above): `max_streams` open streams, `max_running_tasks` tasks being worked
    on, `max_running_tasks_total` for all callers; `None` lifts one."""

    rate: str | None = None
    operations: Mapping[str, str] = msgspec.field(default_factory=dict)
    anonymous_rate: str | None = None
    storage: str = "memory"
    max_streams: int | None = 1000
    max_running_tasks: int | None = 1000
    max_running_tasks_total: int | None = 10_000

    @property
    def limits_rates(self) -> bool:
        """Whether any rate is set (else no RateLimiter is built)."""
        return bool(self.rate or self.operations or self.anonymous_rate)


DEFAULT_QUOTAS = Quotas()


class Allowance(NamedTuple):
    """What is left of the caller's tightest rate limit after this request: `limit`
    requests per window, `remaining` of them, the window ending at `reset` (Unix time).
    (A tuple: one is made per request.)"""

    limit: int
    remaining: int
    reset: int


def holder(caller: Caller, client: str | None) -> str:
    """Who a request is counted against: its principal, or `@address` for an anonymous
    caller (`client` as `host:port`, `[v6]:port` or gRPC's `ipv4:host:port`)."""
    if caller.id != ANONYMOUS:
        return caller.id
    return "@" + client_host(client)


def client_host(client: str | None) -> str:
    """The host of a peer address, without port or gRPC's `ipv4:`/`ipv6:` prefix."""
    if not client:
        return "unknown"
    host, _, port = client.rpartition(":")
    if not port.isdigit():
        host = client
    if host.startswith(("ipv4:", "ipv6:", "unix:")):
        host = host[5:]
    return host[1:-1] if host.startswith("[") else host


def _rates(text: str, what: str) -> tuple[Any, ...]:
    from limits import parse_many  # noqa: PLC0415 - the quotas need the `limits` extra

    try:
        return tuple(parse_many(text))
    except ValueError:
        raise ValueError(
            f"{what}: {text!r} is not a rate (e.g. 10/second, 100/minute; several joined by ;)"
        ) from None


Rules = tuple[tuple[Any, str], ...]
"""A request's rates, each with the name it is counted under (`*`: every operation)."""
Plan = tuple[tuple[str, int, int], ...]
"""A caller's counters for one operation: key, requests allowed, period in seconds."""


def _table(every: tuple[Any, ...], own: Mapping[str, tuple[Any, ...]]) -> dict[Operation, Rules]:
    """Each operation's rules: the rates of every operation, then its class's and its own."""
    table: dict[Operation, Rules] = {}
    for operation, kind in OPERATION_CLASSES.items():
        rules = [(item, _EVERY) for item in every]
        for name in (kind, operation.value):
            rules.extend((item, name) for item in own.get(name, ()))
        table[operation] = tuple(rules)
    return table


class RateLimiter:
    """The rates of one agent (its `namespace` keeps its counters apart from other agents'
    in a shared Redis), checked per request."""

    def __init__(self, quotas: Quotas, namespace: str = "") -> None:
        every = _rates(quotas.rate, "rate") if quotas.rate else ()
        classes = set(OPERATION_CLASSES.values()) | {op.value for op in Operation}
        for name in quotas.operations:
            if name not in classes:
                kinds = ", ".join(sorted(set(OPERATION_CLASSES.values())))
                raise ValueError(f"rate for {name!r}: name an operation class ({kinds}) or one")
        own = {name: _rates(rate, f"rate for {name}") for name, rate in quotas.operations.items()}
        anonymous = (
            _rates(quotas.anonymous_rate, "anonymous rate") if quotas.anonymous_rate else every
        )
        self._rules = _table(every, own)
        self._anonymous_rules = _table(anonymous, own)
        self._refused = tuple((item, _EVERY) for item in anonymous)
        self.counts = counts_at(quotas.storage)
        self._memory = self.counts if isinstance(self.counts, MemoryCounts) else None
        self.namespace = namespace
        self._plans: dict[tuple[str, Operation | None], Plan] = {}
        self._quiet_until = 0.0

    async def admit(
        self, caller: Caller, client: str | None, operation: Operation
    ) -> Allowance | None:
        """Count the request; its caller's tightest allowance left (None: no rate applies),
        or RateLimitedError when any of its rates is used up."""
        who = caller.id if caller.id != ANONYMOUS else "@" + client_host(client)
        plan = self._plans.get((who, operation))
        if plan is None:
            rules = (self._anonymous_rules if who[0] == "@" else self._rules)[operation]
            plan = self._plan(who, operation, rules)
        return await self._count(plan) if plan else None

    async def refused(self, client: str | None) -> None:
        """A refused credential from `client`: counted against its address's anonymous
        rate; RateLimitedError once that is used up (then the caller gets 429, not 401)."""
        if self._refused:
            who = "@" + client_host(client)
            await self._count(self._plans.get((who, None)) or self._plan(who, None, self._refused))

    def _plan(self, who: str, operation: Operation | None, rules: Rules) -> Plan:
        """The counters one caller's requests of one operation hit (remembered)."""
        plan = tuple(
            (item.key_for(self.namespace, who, name), item.amount, item.get_expiry())
            for item, name in rules
        )
        if len(self._plans) >= _PLANS_KEPT:
            self._plans.clear()
        self._plans[who, operation] = plan
        return plan

    async def _count(self, plan: Plan) -> Allowance | None:
        tightest: Allowance | None = None
        exhausted: Allowance | None = None
        until = 0.0  # when the last exhausted window ends
        memory = self._memory
        for key, amount, period in plan:
            try:
                if memory is not None:  # no await: the common case, kept cheap
                    used, end = memory.count(key, period)
                else:
                    used, end = await self.counts.hit(key, period)
            except Exception as exc:  # the storage is down: serve rather than refuse all
                self._warn(exc)
                return None
            allowance = Allowance(amount, max(0, amount - used), math.ceil(end))
            if used > amount and end > until:
                exhausted, until = allowance, end
            if tightest is None or allowance.remaining < tightest.remaining:
                tightest = allowance
        if exhausted is not None:
            wait = max(1, math.ceil(until - time.time()))
            raise RateLimitedError(
                f"Rate limit of {exhausted.limit} requests exceeded; retry in {wait} s",
                retry_after=wait,
                limit=exhausted.limit,
                reset=exhausted.reset,
            )
        return tightest

    def _warn(self, exc: Exception) -> None:
        now = time.monotonic()
        if now >= self._quiet_until:
            self._quiet_until = now + _QUIET_SECONDS
            log.warning("rate limits not applied: their storage failed (%s)", type(exc).__name__)


def quota_metadata(allowance: Allowance) -> list[tuple[str, str]]:
    """The `X-RateLimit-*` headers as gRPC metadata (lower-case keys)."""
    return [
        ("x-ratelimit-limit", str(allowance.limit)),
        ("x-ratelimit-remaining", str(allowance.remaining)),
        ("x-ratelimit-reset", str(allowance.reset)),
    ]


def rate_limiter_of(handler: object) -> RateLimiter | None:
    """A handler's rate limiter (`AgentService.rate_limiter`), if it has one."""
    limiter: RateLimiter | None = getattr(handler, "rate_limiter", None)
    return limiter


__all__ = [
    "DEFAULT_QUOTAS",
    "OPERATION_CLASSES",
    "Allowance",
    "Quotas",
    "RateLimiter",
    "client_host",
    "holder",
    "quota_metadata",
    "rate_limiter_of",
]
