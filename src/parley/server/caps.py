"""Caps on what callers hold open in this process: streams per caller, running tasks per
caller and in all (DESIGN 9: on by default). A stream a client dropped does not cancel its
task (the spec's rule), so without a cap a client could leave any number of agent runs
going; at a cap the request is refused with RateLimitedError (429, RESOURCE_EXHAUSTED).

A caller is counted as the rate limits count it (`quotas.holder`: its principal, or its
address when anonymous). A run is counted from the message that begins it (a new task's or
a follow-up's) until the agent returns or asks for input: a task waiting for its caller's
answer holds no run, so a caller at its cap can still answer its tasks once a run ends.
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import AbstractContextManager, nullcontext

from parley.protocol.errors import RateLimitedError
from parley.server.context import ANONYMOUS, CallContext
from parley.server.quotas import Quotas, client_host, holder

_RETRY_SECONDS = 1
"""A cap frees up when a stream or a run ends: no telling when, so `Retry-After: 1`."""


class Caps:
    """The counts of one agent's open streams and running tasks."""

    def __init__(self, quotas: Quotas) -> None:
        self.max_streams = quotas.max_streams
        self.max_running = quotas.max_running_tasks
        self.max_total = quotas.max_running_tasks_total
        self.streams: dict[str, int] = {}
        self.running: dict[str, int] = {}
        self.total = 0
        self._runs: dict[asyncio.Task[None], str] = {}
        self._last: tuple[str | None, str] = ("", "")
        """The last anonymous caller's address and who it is counted as (the next run is
        most often from the same connection: no parsing of its address again)."""

    def stream(self, ctx: CallContext) -> AbstractContextManager[None]:
        """One of the caller's streams, held until the `with` block around the call ends
        (RateLimitedError at the cap, before the block). What an open stream holds is a
        small token, not a generator's frame."""
        if self.max_streams is None:
            return _UNCOUNTED
        who = sys.intern(holder(ctx.caller, ctx.client))  # (one string per caller, not per stream)
        count = self.streams.get(who, 0)
        if count >= self.max_streams:
            raise RateLimitedError(
                f"Too many open streams: at most {self.max_streams} per caller",
                retry_after=_RETRY_SECONDS,
            )
        self.streams[who] = count + 1
        return _Held(self.streams, who)

    def admit_run(self, ctx: CallContext) -> None:
        """Refuse a message that would begin a run when its caller, or everyone, has as
        many runs going as allowed."""
        if self.max_total is not None and self.total >= self.max_total:
            raise RateLimitedError(
                f"Too many running tasks: this agent runs at most {self.max_total} at once",
                retry_after=_RETRY_SECONDS,
            )
        mine = self.running.get(holder(ctx.caller, ctx.client), 0) if self.running else 0
        if self.max_running is not None and mine >= self.max_running:
            raise RateLimitedError(
                f"Too many running tasks: at most {self.max_running} per caller",
                retry_after=_RETRY_SECONDS,
            )

    def started(self, run: asyncio.Task[None], ctx: CallContext) -> None:
        """A run begun for `ctx`'s caller (the runner tells, and `ended` when it ends).
        On every run's path: `holder` inlined."""
        who = ctx.caller.id
        if who == ANONYMOUS:
            client = ctx.client
            last = self._last
            if client == last[0] and client:
                who = last[1]
            else:
                who = sys.intern("@" + client_host(client))  # (one per address, not per run)
                self._last = (client, who)
        self._runs[run] = who
        running = self.running
        running[who] = running.get(who, 0) + 1
        self.total += 1

    def ended(self, run: asyncio.Task[None]) -> None:
        who = self._runs.pop(run, None)
        if who is None:
            return
        self.total -= 1
        running = self.running
        left = running[who] - 1
        if left:
            running[who] = left
        else:
            del running[who]


class _Held:
    """One held stream: its caller's count goes down once, when the block ends."""

    __slots__ = ("_streams", "_who")

    def __init__(self, streams: dict[str, int], who: str) -> None:
        self._streams = streams
        self._who = who

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        streams, who = self._streams, self._who
        left = streams[who] - 1
        if left:
            streams[who] = left
        else:
            del streams[who]


_UNCOUNTED: AbstractContextManager[None] = nullcontext()
