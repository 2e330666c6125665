"""The task runner: runs the agent for each user message, folds every event it emits
into the task, commits it, and fans it out, in that order (DESIGN 4: acknowledged
means durable).

Theory of operation. Each task being worked on has a `LiveTask`: a lock that orders
its events, the latest snapshot and store version, the agent's asyncio task, and a
`settled` event that a blocking send waits on. `emit` runs under the lock: fold
(`protocol.folding`, which enforces the lifecycle) -> `store.save` (versioned) ->
`broker.publish` (`emit_all`: several task updates folded, saved as one write, then
published one by one). A new task is created lazily, at the agent's first event, so an
agent may answer with a direct Message and leave no task behind — except for a
non-blocking send, which must return the created task at once. Every agent run is
owned by the runner (`shutdown` cancels and awaits them); a run that ends while its
task is still active fails the task, so no stream or blocking send waits forever. A run
ends as its coroutine returns, or when the agent function it runs pauses for the user
(`RunSink.end_run`): its asyncio task then goes on, holding the function for a later run.
A save refused as stale (the store is ahead: it completed a write whose caller was
cancelled, or another process wrote) is re-read, re-folded and saved again
(`_rebase`); a cancel stops the run under the lock, so never inside a write.
While a live task has had a subscriber, a `ReplayWindow` keeps its last published events
(numbered by the task's generation, which the events themselves do not carry), so a lost
stream can resume. A cancel also asks the
other replicas (`broker.request_stop`) to stop their run; one asked so stops its own.

Over 400 lines: the run's state machine (begin, emit, commit, cancel, stop) is one
piece; split, its lock discipline would be spread over modules.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from msgspec.structs import replace

from parley.model import (
    Message,
    Role,
    SendMessageRequest,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import folding, lifecycle
from parley.protocol.errors import (
    A2AError,
    InvalidAgentResponseError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from parley.server.broker import Broker, Entry, ReplayWindow, Subscription
from parley.server.context import CallContext
from parley.server.execution import AgentExecutor, RequestContext
from parley.server.live import LiveTask, RunSink, untouched
from parley.server.log_context import TASK_IDS
from parley.server.signals import DONE
from parley.server.stamps import new_id, utc_now
from parley.server.stores.base import StaleWriteError, StoredTask, TaskKey, TaskStore

if TYPE_CHECKING:
    from parley.server.caps import Caps

log = logging.getLogger("parley.server")

_UPDATES = (TaskStatusUpdateEvent, TaskArtifactUpdateEvent)
_EMPTY = Message(message_id="", role=Role.USER, parts=(TextPart(text=""),))
_REBASES = 8
"""Attempts at folding an event onto a task the store holds at a newer version."""


def _unfinished(live: LiveTask) -> str | None:
    """Why a run that returned fails its task (still active, or not even answered), if it
    does: nothing waits forever."""
    task = live.task
    if task is not None:
        active = task.status.state in lifecycle.ACTIVE
        return "The agent stopped without finishing the task" if active else None
    if live.reply is None and live.pending is not None:
        return "The agent stopped without answering"
    return None


def _folded(
    task: Task, events: list[TaskEvent]
) -> tuple[Task, list[TaskEvent], A2AError | None, bool]:
    """`task` after `events` in turn, and the events folded: all of them, or those before
    the first that does not fit, with its error (the first's own is raised); and whether
    one of them left the task interrupted."""
    interrupted = False
    for index, event in enumerate(events):
        try:
            task = folding.apply_event(task, event)
        except A2AError as exc:
            if index == 0:
                raise
            return task, events[:index], exc, interrupted
        interrupted = interrupted or task.status.state in lifecycle.INTERRUPTED
    return task, events, None, interrupted


class TaskRunner:
    """Owns every agent run and the live state of the tasks being worked on."""

    def __init__(
        self,
        executor: AgentExecutor,
        store: TaskStore,
        broker: Broker,
        *,
        clock: Callable[[], datetime] = utc_now,
        ids: Callable[[], str] = new_id,
        replay_limit: int = 64,
    ) -> None:
        self.executor, self.store, self.broker = executor, store, broker
        self.clock, self.ids = clock, ids
        self.replay_limit = replay_limit
        self._live: dict[TaskKey, LiveTask] = {}
        self.caps: Caps | None = None
        """Told of each run's start and end (`parley.server.caps`: runs per caller)."""
        broker.stops = self.stop_here
        holds: Callable[[str], bool] | None = getattr(executor, "holds", None)
        self._holds = holds if broker.failover else None
        """Across replicas: whether the executor keeps a task's run suspended here (a
        follow-up landing elsewhere is then handed here, `Broker.waiting`)."""

    # ----------------------------------------------------------------- live tasks

    def live_count(self) -> int:
        """Tasks with a run or a subscriber in this process (for tests and metrics)."""
        return len(self._live)

    def acquire(self, key: TaskKey, context_id: str = "") -> LiveTask:
        live = self._live.get(key)
        if live is None:
            live = self._live[key] = LiveTask(key, context_id)
        live.users += 1
        return live

    def release(self, live: LiveTask) -> None:
        live.users -= 1
        if live.users <= 0 and (live.run is None or live.run.done()):
            self._live.pop(live.key, None)

    async def load(self, live: LiveTask, scope: tuple[str, str]) -> StoredTask | None:
        """Refresh the snapshot from the store (under the lock, by the caller)."""
        stored = await self.store.get(scope, live.key.task_id)
        if stored is not None:
            if live.window is not None and stored.version != live.version:
                live.window = ReplayWindow(stored.task.generation, self.replay_limit)  # elsewhere
            live.task, live.version = stored.task, stored.version
            live.context_id = stored.task.context_id
        return stored

    # ----------------------------------------------------------------- runs

    async def begin(
        self, ctx: CallContext, request: SendMessageRequest, live: LiveTask, *, eager: bool
    ) -> None:
        """Record the user's message and start the agent on it (the caller holds `live`).

        A follow-up is folded into the existing task now; a new task is either created
        now (`eager`, for non-blocking sends) or left pending until the agent's first
        task event.
        """
        message, task_id = request.message, live.key.task_id
        if (claimed := self.broker.claim(live.key)) is not DONE:
            await claimed  # the lease, before anything of the run is written
        prior: Task | None
        lock = live.lock
        if not lock.take():
            await lock.acquire()
        try:
            live.settled.clear()
            live.reply = None
            if live.task is not None:
                message = replace(message, task_id=task_id, context_id=live.context_id)
                await self._commit(live, message)
                prior = live.task
            else:  # (the task's first message: its ids filled in by new_task)
                live.pending = folding.new_task(
                    message, task_id=task_id, context_id=live.context_id, timestamp=self.clock()
                )
                message = live.pending.history[0]
                if eager:
                    await self._create(live)
                prior = live.task
        finally:
            lock.release()
        metadata: dict[str, object] | None = dict(request.metadata) if request.metadata else None
        context = RequestContext(  # (positional: its fields in order)
            message, task_id, live.context_id, ctx, prior, request.configuration, metadata
        )
        self.start_run(live, context)

    def start_run(self, live: LiveTask, context: RequestContext) -> None:
        """Run the agent on `context` (the caller holds `live`, its lease claimed): what
        `begin` does once the message is recorded, and a failover's rerun."""
        live.users += 1  # the run holds the live task until it ends
        sink = RunSink(self, live, self.executor, partial(self.emit, live))
        run = asyncio.get_running_loop().create_task(self._run(live, context, sink))
        run.add_done_callback(sink.ended_task)
        live.run = run
        if self.caps is not None:
            self.caps.started(run, context.call)

    def _after_run(self, live: LiveTask, run: asyncio.Task[None]) -> None:
        """Runs even for a run cancelled before it started: nothing is left behind."""
        if self.caps is not None:
            self.caps.ended(run)
        if not live.cancelling:  # a cancel settles the task itself, once CANCELED
            live.settled.set()
        if live.run is run:
            live.run = None
        task = live.task  # a run stopped, or one whose task could not be ended, keeps its
        if not run.cancelled() and not (task and task.status.state in lifecycle.ACTIVE):
            self.broker.released(live.key)  # lease: it runs out, and the task is recovered
        self.release(live)

    async def _run(self, live: LiveTask, context: RequestContext, sink: RunSink) -> None:
        TASK_IDS.set((context.task_id, context.context_id))  # for log lines (log_context)
        try:
            await self.executor.execute(context, sink)
        except asyncio.CancelledError:
            raise
        except A2AError as exc:
            live.error = exc  # what a blocking send answers if no task could be written
            await self._fail(live, exc.message)
        except Exception:
            log.exception("agent failed on task %s", live.key.task_id)
            await self._fail(live, "The agent failed while working on this task")
        else:  # (sink.ended: its function, resumed by later runs, ended there)
            if not sink.ended and (unfinished := _unfinished(live)) is not None:
                await self._fail(live, unfinished)
        sink.end_run()  # recorded now (a cancelled run: once its task is done)

    async def _fail(self, live: LiveTask, text: str) -> None:
        """Fail the task unless it is terminal. Never raises: if even this write fails,
        the reason is logged and the task is left to the restart policy."""
        task = live.task or live.pending
        if task is None or lifecycle.is_terminal(task.status.state):
            return
        try:
            await self.emit(live, folding.failure(task, text, self.ids()))
        except A2AError:
            pass  # terminal meanwhile (e.g. canceled), or never created
        except Exception:
            log.exception("task %s could not be failed (%s)", live.key.task_id, text)

    async def cancel(self, live: LiveTask) -> Task:
        """Stop the agent's run if there is one, then move the task to CANCELED: the
        cancel wins, or the task was terminal first (TaskNotCancelableError)."""
        live.cancelling = True
        try:
            await self._stop(live)
            task = await self._cancel_task(live)
            await self._stop(live)  # a follow-up's run begun before the CANCELED commit
            await self.broker.request_stop(live.key)  # a run of it on another replica
            return task
        finally:
            live.cancelling = False
            live.settled.set()

    async def stop_here(self, key: TaskKey) -> None:
        """Stop this process's run of the task and let go of its lease, or stop its
        suspended function (the task was canceled on another replica)."""
        live = self._live.get(key)
        if live is not None and live.run is not None and not live.run.done():
            await self._stop(live)
            self.broker.released(key)
        elif self._holds is not None and self._holds(key.task_id):
            await self.executor.cancel(RequestContext(_EMPTY, key.task_id, "", CallContext()))

    async def _stop(self, live: LiveTask) -> None:
        """Cancel the task's run, under its lock (so between two of its writes), and wait
        for it to end."""
        run = live.run
        if run is None or run.done():
            return
        async with live.lock:
            run.cancel()
        try:
            await run
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # this cancel was itself cancelled, not only the run

    async def _cancel_task(self, live: LiveTask) -> Task:
        task = live.task
        if task is None:
            raise TaskNotCancelableError("The task has not started")
        context = RequestContext(
            message=task.history[-1] if task.history else _EMPTY,
            task_id=task.id,
            context_id=task.context_id,
            call=CallContext(),
            task=task,
        )
        try:
            await self.executor.cancel(context)
        except Exception:
            log.exception("the agent's cancel hook failed on task %s", task.id)
        status = TaskStatus(state=TaskState.CANCELED)
        try:
            await self.emit(live, TaskStatusUpdateEvent(task_id="", context_id="", status=status))
        except InvalidAgentResponseError:
            raise TaskNotCancelableError(
                f"Task {task.id} is {live.task.status.state.name if live.task else 'gone'}",
                metadata={"taskId": task.id},
            ) from None
        assert live.task is not None
        return live.task

    async def shutdown(self) -> None:
        """Cancel every run and wait for them (app shutdown)."""
        runs = [live.run for live in self._live.values() if live.run and not live.run.done()]
        for run in runs:
            run.cancel()
        if runs:
            await asyncio.wait(runs)
            await asyncio.sleep(0)  # let the runs' done callbacks release their tasks

    # ----------------------------------------------------------------- events

    async def emit(self, live: LiveTask, event: StreamEvent) -> None:
        """Fold, commit, publish. Raises A2AError for an event that does not fit.

        When a subscriber's buffer is half full, the agent then yields to the event loop
        once, so a producer that never awaits cannot overrun its own stream before a
        single event is written out."""
        lock = live.lock
        if not lock.take():
            await lock.acquire()
        try:
            if live.task is not None and isinstance(event, _UPDATES):
                # The common case (every event of a running task but its first), kept
                # short: it is the path each streamed event takes.
                event = folding.stamp(event, live.key.task_id, live.context_id, self.clock)
                await self._commit(live, event)
            else:
                await self._emit_other(live, event)
        finally:
            lock.release()
        if self.broker.pressed(live.key):
            await asyncio.sleep(0)

    async def emit_all(self, live: LiveTask, events: Sequence[StreamEvent]) -> None:
        """`emit` of each event, in order. Task updates (all of them: else one `emit` each)
        are committed as one save carrying them all, under one hold of the lock (a task
        still pending created first), then published one by one: an agent function's
        result, its artifact then COMPLETED, is one write."""
        updates: list[TaskEvent] = []
        for event in events:
            if not isinstance(event, _UPDATES):
                for each in events:
                    await self.emit(live, each)
                return
            updates.append(event)
        if not updates:
            return
        lock = live.lock
        if not lock.take():
            await lock.acquire()
        try:
            if live.task is None:
                await self._create(live)
            task_id, context_id, clock = live.key.task_id, live.context_id, self.clock
            stamped = [folding.stamp(event, task_id, context_id, clock) for event in updates]
            await self._commit_all(live, stamped)
        finally:
            lock.release()
        if self.broker.pressed(live.key):
            await asyncio.sleep(0)

    async def _emit_other(self, live: LiveTask, event: StreamEvent) -> None:
        """A direct reply, a task's first event, or a message into history."""
        task = live.task
        if isinstance(event, Message):
            if task is None:
                await self._reply(live, event)
                return
            if untouched(task):
                # A direct answer to a task created up front (non-blocking send):
                # it becomes the task's result.
                answer = replace(event, task_id=live.key.task_id, context_id=live.context_id)
                status = TaskStatus(state=TaskState.COMPLETED, message=answer)
                event = TaskStatusUpdateEvent(task_id="", context_id="", status=status)
        elif isinstance(event, Task):
            if task is not None:
                raise InvalidAgentResponseError("A task snapshot may only start a task")
            await self._create(live, event)
            return
        if task is None:
            await self._create(live)
        await self._commit(
            live, folding.stamp(event, live.key.task_id, live.context_id, self.clock)
        )

    async def _reply(self, live: LiveTask, message: Message) -> None:
        if live.reply is not None:
            raise InvalidAgentResponseError("An agent answers with one direct message")
        live.reply = replace(message, context_id=message.context_id or live.context_id)
        live.pending = None
        await self.broker.publish(live.key, live.reply, final=True)
        live.settled.set()

    async def _create(self, live: LiveTask, snapshot: Task | None = None) -> None:
        task = live.pending
        if task is None:
            raise InvalidAgentResponseError("No task to create")
        if snapshot is not None:
            if snapshot.id not in ("", task.id) or snapshot.context_id not in ("", task.context_id):
                raise InvalidAgentResponseError("A task snapshot must keep the task's ids")
            status = snapshot.status
            if status.timestamp is None:
                status = replace(status, timestamp=self.clock())
            task = replace(
                task, status=status, artifacts=snapshot.artifacts, metadata=snapshot.metadata
            )
        creating = live.creating
        if creating:
            stored = await self.store.create(live.key[:2], task, **creating)
        else:
            stored = await self.store.create(live.key[:2], task)
        live.task, live.version, live.pending = stored.task, stored.version, None
        state = stored.task.status.state
        final = state in lifecycle.ENDS_STREAM
        if (published := self._publish(live, stored.task, final)) is not DONE:
            await published
        if final and state in lifecycle.ENDS_BLOCKING_SEND:
            live.settled.set()

    async def _commit(self, live: LiveTask, event: TaskEvent) -> None:
        assert live.task is not None
        task = folding.apply_event(live.task, event)
        holds = self._holds
        if (
            holds is not None
            and task.status.state in lifecycle.INTERRUPTED
            and holds(live.key.task_id)
        ):
            await self.broker.waiting(live.key)  # recorded before a client sees the question
        try:
            stored = await self.store.save(live.key[:2], task, (event,), live.version)
        except StaleWriteError:
            stored = await self._rebase(live, (event,))
        live.task, live.version = stored.task, stored.version
        if isinstance(event, TaskArtifactUpdateEvent):
            if (published := self._publish(live, event, False)) is not DONE:
                await published  # (in process, done: the streamed event's path, kept short)
        elif isinstance(event, TaskStatusUpdateEvent):
            state = stored.task.status.state
            final = state in lifecycle.ENDS_STREAM
            if (published := self._publish(live, event, final)) is not DONE:
                await published
            if final and state in lifecycle.ENDS_BLOCKING_SEND:
                live.settled.set()

    async def _commit_all(self, live: LiveTask, events: list[TaskEvent]) -> None:
        """`_commit` of task updates, one save for all: those before one that does not fit
        are committed and published, then its error raised (as one `_commit` each)."""
        assert live.task is not None
        task, events, error, interrupted = _folded(live.task, events)
        holds = self._holds
        if holds is not None and interrupted and holds(live.key.task_id):
            await self.broker.waiting(live.key)
        try:
            stored = await self.store.save(live.key[:2], task, events, live.version)
        except StaleWriteError:
            stored = await self._rebase(live, events)
        live.task, live.version = stored.task, stored.version
        # In order, each with its own number: every one advanced the generation by one.
        sequence = stored.task.generation - len(events)
        window, publish, key = live.window, self.broker.publish, live.key
        for event in events:
            sequence += 1
            if window is not None:
                window.add(sequence, event)
            state = event.status.state if isinstance(event, TaskStatusUpdateEvent) else None
            final = state in lifecycle.ENDS_STREAM
            if (published := publish(key, event, final=final, sequence=sequence)) is not DONE:
                await published
            if final and state in lifecycle.ENDS_BLOCKING_SEND:
                live.settled.set()
        if error is not None:
            raise error

    async def _rebase(self, live: LiveTask, events: Sequence[TaskEvent]) -> StoredTask:
        """Fold the events onto the task as stored now and save again; folding raises the
        spec error if they no longer fit (e.g. the task is terminal now)."""
        scope = live.key[:2]
        for attempt in range(_REBASES):
            stored = await self.load(live, scope)
            if stored is None:
                raise TaskNotFoundError(f"Task {live.key.task_id} not found")
            task = stored.task
            for event in events:
                task = folding.apply_event(task, event)
            try:
                return await self.store.save(scope, task, events, stored.version)
            except StaleWriteError:  # still racing another process: back off, with jitter
                await asyncio.sleep(random.random() * 0.002 * 2**attempt)  # noqa: S311
        raise StaleWriteError(f"task {live.key.task_id} kept changing under {_REBASES} attempts")

    def _publish(self, live: LiveTask, event: StreamEvent, final: bool) -> Awaitable[None]:
        task = live.task  # (`live.sequence`, without the property's call)
        sequence = 0 if task is None else task.generation
        if live.window is not None:
            live.window.add(sequence, event)
        return self.broker.publish(live.key, event, final=final, sequence=sequence)

    def subscribe(self, live: LiveTask, head: tuple[Entry, ...] = ()) -> Subscription:
        """`head`, then the task's events from now on (the caller holds the lock or has not
        awaited since the last commit: no event falls in between); opens the window."""
        if live.window is None and self.replay_limit > 0:
            live.window = ReplayWindow(live.sequence, self.replay_limit)
        return self.broker.subscribe(live.key, head, after=live.sequence)

    async def resume(self, live: LiveTask, after: int | None) -> Subscription:
        """SubscribeToTask's (under the lock, the task loaded): the events after `after` if
        the window or the broker has them all, else the snapshot at its version; then live."""
        assert live.task is not None
        window = live.window
        missed = window.after(after, live.sequence) if window and after is not None else None
        if missed is None and after is not None and await self.broker.replayable(live.key, after):
            return self.broker.subscribe(live.key, after=after)
        return self.subscribe(live, tuple(missed) if missed else ((live.sequence, live.task),))
