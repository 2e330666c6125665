"""Running agent functions (`FunctionExecutor`, what `Agent.executor()` makes): each run
calls the function the message routes to; its result completes the task, its yielded
chunks stream as one artifact; a function that awaits `task.ask(...)` stays suspended
between runs and the follow-up message resumes it, in the same coroutine.

Theory of operation. Called by the task runner itself, a new function runs in the run's
own asyncio task; when it pauses, it tells the runner (`end_run` on the sink)
that the run is over, and the task goes on, holding it. Otherwise (a wrapper between runner
and executor, which must see each run end), a driver task runs it and `execute` waits
for it to pause or end. A follow-up resumes a suspended function in whichever task holds
it and waits likewise.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from contextlib import suppress
from inspect import isawaitable
from types import AsyncGeneratorType, CoroutineType
from typing import Any, TypeAlias

import msgspec

from parley.model import Message, TaskState
from parley.protocol.errors import InvalidAgentResponseError, PermissionDeniedError
from parley.server.context import CallContext
from parley.server.execution import EventSink, RequestContext
from parley.server.live import RunSink
from parley.server.signals import DONE, Signal
from parley.server.task_context import Failed, Rejected, TaskContext

AgentFunction: TypeAlias = Callable[[TaskContext], Any]
"""`(task) -> Content | Message`, sync or async, or an async generator of Content."""


_NO_SCOPES: frozenset[str] = frozenset()
"""One for all (each `frozenset()` is a new 216-byte object)."""


class _Session(msgspec.Struct):
    """One running agent function, possibly suspended waiting for the user."""

    context: TaskContext
    scopes: frozenset[str] = _NO_SCOPES
    driver: asyncio.Task[None] | None = None
    """The asyncio task the function runs in (a run's own, or one of its own)."""
    paused: Signal | None = None
    """What `_follow` waits on (made there: a function run in its run's own task has none)."""
    error: BaseException | None = None
    over: bool = False
    """The function has returned (or raised)."""
    ends_run: Callable[[], None] | None = None
    """While it runs in the task of the run that started it: what ends that run."""

    def pause(self) -> None:
        """The function waits for the user's next message."""
        if self.paused is not None:
            self.paused.set()
        ends_run, self.ends_run = self.ends_run, None
        if ends_run is not None:
            ends_run()


class FunctionExecutor:
    """An AgentExecutor that runs agent functions, keeping suspended ones between runs.

    Each `execute` returns when the function finishes or pauses (ask / auth_required);
    a follow-up message resumes the paused function. A suspended function lives until
    the reply arrives, the task is canceled, or the executor is closed.
    """

    def __init__(
        self,
        route: Callable[[RequestContext], AgentFunction],
        scopes: Callable[[Message, Mapping[str, Any] | None], frozenset[str]] | None = None,
        *,
        resumable: bool = False,
    ) -> None:
        self._route = route
        self._scopes = scopes or _no_scopes
        self._sessions: dict[str, _Session] = {}
        self.resumable = resumable
        """Whether a task whose replica died is run again (from its last user message) by
        the replica that recovers it, instead of failed."""

    def admit(
        self, call: CallContext, message: Message, metadata: Mapping[str, Any] | None = None
    ) -> None:
        """PermissionDeniedError if the caller lacks the scopes of the skill the message
        goes to: the suspended one it resumes, else the one it names or the default.
        `AgentService` calls it before a task is created or a follow-up recorded."""
        if self._scopes is _no_scopes:
            return
        session = self._sessions.get(message.task_id) if message.task_id else None
        needed = session.scopes if session is not None else self._scopes(message, metadata)
        missing = needed - call.caller.scopes
        if missing:
            raise PermissionDeniedError(
                f"This skill needs the scopes: {', '.join(sorted(missing))}"
            )

    def execute(self, context: RequestContext, events: EventSink) -> Coroutine[Any, Any, None]:
        """(No coroutine function: a new function run in the run's own task is awaited by
        the run directly, with no frame of `execute` in between.)"""
        session = self._sessions.get(context.task_id)
        if session is not None and session.context._resume(context, events):
            return self._follow(session)
        session, function = self._open(context, events)
        driving = self._drive(function, session)
        if type(events) is RunSink and events.executor is self:
            session.driver, session.ends_run = asyncio.current_task(), events.end_run
            return driving
        session.driver = asyncio.get_running_loop().create_task(driving)
        return self._follow(session)

    async def _follow(self, session: _Session) -> None:
        """Until the function, running in another task, pauses or ends; its error."""
        paused = session.paused = Signal()
        try:
            await paused.wait()
        except asyncio.CancelledError:
            await self._stop(session.context.task_id)
            raise
        if session.over and session.error is not None:
            raise session.error

    def _open(self, context: RequestContext, events: EventSink) -> tuple[_Session, AgentFunction]:
        """A new session, and the function it runs."""
        scopes = _NO_SCOPES
        if self._scopes is not _no_scopes:
            self.admit(context.call, context.message, context.metadata)  # for other handlers
            scopes = self._scopes(context.message, context.metadata)
        function = self._route(context)
        session = _Session(TaskContext(context, events), scopes)
        session.context._on_pause = session.pause
        self._sessions[context.task_id] = session
        return session, function

    async def _drive(self, function: AgentFunction, session: _Session) -> None:
        task = session.context
        try:
            result = function(task)
            if isinstance(result, AsyncGeneratorType):
                await _stream(task, aiter(result))
            else:
                if type(result) is CoroutineType or isawaitable(result):
                    result = await result
                await _finish(task, result)
        except Rejected as exc:
            await task._status(TaskState.REJECTED, str(exc))
        except Failed as exc:
            await task._status(TaskState.FAILED, str(exc))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # this run's error, or the resuming run's (`_follow`)
            session.error = exc
        finally:
            session.over = True
            if self._sessions.get(task.task_id) is session:
                del self._sessions[task.task_id]
            if session.paused is not None:
                session.paused.set()
        if session.ends_run is not None and session.error is not None:
            raise session.error  # run in its run's own task, and never paused

    async def _stop(self, task_id: str) -> None:
        session = self._sessions.pop(task_id, None)
        if session is not None and session.driver is not None and not session.driver.done():
            session.driver.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await session.driver

    async def cancel(self, context: RequestContext) -> None:
        await self._stop(context.task_id)

    async def aclose(self) -> None:
        for task_id in list(self._sessions):
            await self._stop(task_id)

    def session_count(self) -> int:
        return len(self._sessions)

    def holds(self, task_id: str) -> bool:
        """Whether the task's function is suspended here, waiting for a follow-up."""
        session = self._sessions.get(task_id)
        return session is not None and session.context._waiting


def _no_scopes(message: Message, metadata: Mapping[str, Any] | None) -> frozenset[str]:
    return _NO_SCOPES


def _finish(task: TaskContext, result: Any) -> Awaitable[None]:
    """What the function's result does (no coroutine of its own: `_drive` awaits it)."""
    if task.finished:
        if result is not None:
            raise InvalidAgentResponseError("The task was already finished: nothing to return")
        return DONE
    if isinstance(result, Message):
        if task.task is None and not task.acted:
            return task._sink.emit(result)  # a direct reply: no task
        return task._status(TaskState.COMPLETED, result.parts)
    if result is not None:
        return task._result(result)
    return task._status(TaskState.COMPLETED)


async def _stream(task: TaskContext, chunks: AsyncIterator[Any]) -> None:
    """Yielded chunks become one artifact, sent as they come; the last one is marked
    `lastChunk` (so each chunk is sent when the next arrives, when the generator ends,
    or just before the function changes the task's status itself)."""
    held = _HeldChunk(task)
    await task._status(TaskState.WORKING)
    task.before_status = held.flush
    try:
        async for chunk in chunks:
            if isinstance(chunk, Message):
                raise InvalidAgentResponseError("An agent generator yields content, not messages")
            await held.flush(last=False)
            held.chunk, held.present = chunk, True
        await held.flush(last=True)
    finally:
        task.before_status = None
    if not task.finished:
        await task._status(TaskState.COMPLETED)


class _HeldChunk:
    """The chunk a streaming function yielded last, not sent yet."""

    def __init__(self, task: TaskContext) -> None:
        self.task = task
        self.chunk: Any = None
        self.present = False
        self.artifact_id = ""
        self.sent = 0

    async def flush(self, last: bool) -> None:
        if not self.present:
            return
        self.present = False
        self.artifact_id = await self.task.artifact(
            self.chunk, artifact_id=self.artifact_id, append=self.sent > 0, last_chunk=last
        )
        self.sent += 1
