"""The in-process state of a task being worked on (`LiveTask`), the sink of one of its runs
(`RunSink`), and the runner's default clock and id source. No I/O."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

import msgspec

from parley.model import Message, StreamEvent, Task, TaskState
from parley.protocol.errors import A2AError
from parley.server.broker import ReplayWindow
from parley.server.signals import Mutex, Signal
from parley.server.stores.base import InlineConfigs, TaskKey

if TYPE_CHECKING:
    from parley.server.runner import TaskRunner


_NO_OPTIONS: Mapping[str, InlineConfigs] = MappingProxyType({})


def untouched(task: Task | None) -> bool:
    """A task the agent has not acted on yet (created up front, still SUBMITTED)."""
    return task is not None and task.status.state is TaskState.SUBMITTED and not task.artifacts


class LiveTask(msgspec.Struct, eq=False, weakref=True):
    """The in-process state of a task that has a run or a subscriber."""

    key: TaskKey
    context_id: str
    task: Task | None = None
    version: int = 0
    reply: Message | None = None
    run: asyncio.Task[None] | None = None
    lock: Mutex = msgspec.field(default_factory=Mutex)
    turn_lock: asyncio.Lock | None = None
    settled: Signal = msgspec.field(default_factory=Signal)
    users: int = 0
    cancelling: bool = False
    pending: Task | None = None
    """A new task not yet created: created at the agent's first task event."""
    error: A2AError | None = None
    """What ended the last run with an error (a blocking send's answer when it left no
    task, e.g. the store was unreachable)."""
    creating: Mapping[str, InlineConfigs] = _NO_OPTIONS
    """`TaskStore.create`'s options for the pending task: `configs`, push configs to set
    in its creation's transaction."""
    window: ReplayWindow | None = None
    """From the first subscription on, the last `replay_limit` events (0: no window)."""

    @property
    def turn(self) -> asyncio.Lock:
        """Held by a follow-up from its checks until its run has started (made for the
        first follow-up: most tasks have none)."""
        turn = self.turn_lock
        if turn is None:
            turn = self.turn_lock = asyncio.Lock()
        return turn

    @property
    def sequence(self) -> int:
        """Where the task's stream stands: its generation, which every published event
        advances (0 before the task exists). Streams number their events with it."""
        task = self.task
        return 0 if task is None else task.generation


class RunSink(msgspec.Struct, eq=False):
    """The EventSink an executor gets for one run: every emit goes through the runner.
    `end_run` ends the run at once, even while its asyncio task goes on, holding an agent
    function that waits for the user (`FunctionExecutor`, if called by the runner itself:
    `executor`). One asyncio task per run, not one for the run and one for the function.
    (A Struct: made in C, once a run; `TaskRunner.start_run` fills it in.)"""

    _runner: TaskRunner
    _live: LiveTask
    executor: object
    emit: Callable[[StreamEvent], Coroutine[None, None, None]]
    """`runner.emit(live, event)`: a partial, no frame of its own per event."""
    ended: bool = False

    def emit_all(self, events: Sequence[StreamEvent]) -> Coroutine[None, None, None]:
        """`runner.emit_all(live, events)`: task updates committed as one write."""
        return self._runner.emit_all(self._live, events)

    def ended_task(self, run: asyncio.Task[None]) -> None:
        if not self.ended:  # else `end_run` recorded the run's end
            self._runner._after_run(self._live, run)

    def end_run(self) -> None:
        run = asyncio.current_task()
        if not self.ended and run is not None:
            self.ended = True  # the task's end then concerns no run (`start_run`, `_run`)
            self._runner._after_run(self._live, run)
