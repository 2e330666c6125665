"""When a new task becomes visible to its caller: at its agent's first event (lazy
creation), or, for an agent that stays silent, `visible_after` seconds into its run —
created SUBMITTED in the store and published, so its stream starts (response headers,
the Task, then keep-alives) and GetTask, ListTasks and CancelTask find it, on every
replica that shares the store.

Theory of operation. Each new task whose creation is deferred is appended to `fresh`, by
weak reference (no timer, no asyncio task and no write per send: an agent that answers
at once pays a list append, and its live state is not kept past its run). One timer per
service ticks every `visible_after / 2` while a list is not empty: a tick moves `fresh`
to `aging` and reveals what was in `aging` and is still pending with its run going, so a
silent task is created between half and all of `visible_after` into its run. A reveal is
one asyncio task, owned here (`close` cancels and awaits them), which emits the pending
task as the run's first event through the runner: the task's lock orders it with the
agent's own events, and if the agent spoke first (or answered, or failed), the runner
refuses it and nothing happens.
"""

from __future__ import annotations

import asyncio
import logging
import weakref

from parley.protocol.errors import A2AError
from parley.server.live import LiveTask
from parley.server.runner import TaskRunner

log = logging.getLogger("parley.server")

DEFAULT_VISIBLE_AFTER = 1.0
"""Seconds of an agent's silence after which its new task is created (`AgentService`)."""


def _silent(live: LiveTask) -> bool:
    """Still not created, not answered, and its run still going."""
    run = live.run
    return live.pending is not None and live.task is None and run is not None and not run.done()


class Visibility:
    """Creates the tasks of agents silent for `visible_after` seconds (None: never, the
    task appears at the agent's first event)."""

    def __init__(self, runner: TaskRunner, visible_after: float | None) -> None:
        if visible_after is not None and visible_after <= 0:
            raise ValueError("visible_after must be positive (or None)")
        self._runner = runner
        self._tick_every = visible_after / 2 if visible_after is not None else None
        self._fresh: list[weakref.ref[LiveTask]] = []
        self._aging: list[weakref.ref[LiveTask]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._reveals: set[asyncio.Task[None]] = set()

    def watch(self, live: LiveTask) -> None:
        """Right after `TaskRunner.begin` (no await since): a new task it left pending is
        watched; anything else is not."""
        if live.pending is None or self._tick_every is None:
            return
        self._fresh.append(weakref.ref(live))
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._tick_every, self._tick)

    def _tick(self) -> None:
        due, self._aging, self._fresh = self._aging, self._fresh, []
        loop = asyncio.get_running_loop()
        for watched in due:
            live = watched()
            if live is not None and _silent(live):
                reveal = loop.create_task(self._reveal(live))
                self._reveals.add(reveal)
                reveal.add_done_callback(self._reveals.discard)
        assert self._tick_every is not None
        self._timer = loop.call_later(self._tick_every, self._tick) if self._aging else None

    async def _reveal(self, live: LiveTask) -> None:
        pending = live.pending
        if pending is None or not _silent(live):
            return
        try:
            await self._runner.emit(live, pending)  # the runner's first event: the task
        except A2AError:
            pass  # the agent spoke (or answered, or failed) first: its event created it
        except Exception:  # the store, say: the agent's first event tries again
            log.exception("the silent task %s could not be created early", live.key.task_id)

    def pending_count(self) -> int:
        """Tasks watched and not yet looked at again (for tests)."""
        return len(self._fresh) + len(self._aging)

    async def close(self) -> None:
        """Stop the timer; cancel and await the reveals under way (app shutdown)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._fresh, self._aging = [], []
        reveals = list(self._reveals)
        for reveal in reveals:
            reveal.cancel()
        if reveals:
            await asyncio.wait(reveals)
