"""What an agent function sees and can do: the incoming message and its task, and the
moves of the protocol (ask for input, ask for authorization, report progress, emit
artifacts, reject, fail, reply directly).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NoReturn

from parley.model import (
    Artifact,
    DataPart,
    JSONValue,
    Message,
    Part,
    RawPart,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UrlPart,
)
from parley.protocol import lifecycle
from parley.server.context import Caller
from parley.server.execution import EventSink, RequestContext
from parley.server.stamps import new_id

Content = str | Part | Sequence[Part] | dict[str, Any] | list[Any] | Artifact | None
"""What an agent function may return or yield: text, parts, JSON data, an artifact."""


class Rejected(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by `TaskContext.reject`: the task ends REJECTED."""


class Failed(Exception):  # noqa: N818
    """Raised by `TaskContext.fail`: the task ends FAILED."""


def to_parts(content: Content) -> tuple[Part, ...]:
    """Text becomes a text part, dicts and lists a data part; parts pass through."""
    if content is None:
        return ()
    if isinstance(content, str):
        return (TextPart(text=content),)
    if isinstance(content, TextPart | RawPart | UrlPart | DataPart):
        return (content,)
    if isinstance(content, Artifact):
        return content.parts
    if isinstance(content, dict):
        return (DataPart(data=content, media_type="application/json"),)
    if isinstance(content, list) and (
        not content
        or not all(isinstance(p, TextPart | RawPart | UrlPart | DataPart) for p in content)
    ):
        return (DataPart(data=content, media_type="application/json"),)
    return tuple(content)


def agent_message(content: Content, *, context_id: str = "", task_id: str = "") -> Message:
    return Message(
        message_id=new_id(),
        role=Role.AGENT,
        parts=to_parts(content) or (TextPart(text=""),),
        context_id=context_id,
        task_id=task_id,
    )


class TaskContext:
    """The agent's handle on one task. Methods that change the task are coroutines."""

    __slots__ = (
        "_on_pause",
        "_reply",
        "_request",
        "_sink",
        "acted",
        "before_status",
        "finished",
        "message",
    )

    def __init__(
        self,
        request: RequestContext,
        sink: EventSink,
        *,
        on_pause: Callable[[], None] | None = None,
    ) -> None:
        self._request = request
        self._sink = sink
        self._on_pause = on_pause
        self._reply: asyncio.Future[Message] | None = None
        self.finished = False
        """True once the task reached a terminal state (then returning adds nothing)."""
        self.acted = False
        """True once this function emitted a task event (so the task exists)."""
        self.before_status: Callable[[bool], Awaitable[None]] | None = None
        """Called before a status update (with: does it end the task?) — the streaming
        driver flushes the chunk it holds back."""
        self.message = request.message

    # --- what came in --------------------------------------------------------------

    @property
    def task_id(self) -> str:
        return self._request.task_id

    @property
    def context_id(self) -> str:
        return self._request.context_id

    @property
    def task(self) -> Task | None:
        """The task before the current message (None for a brand-new conversation)."""
        return self._request.task

    @property
    def history(self) -> tuple[Message, ...]:
        return self._request.task.history if self._request.task else (self.message,)

    @property
    def caller(self) -> Caller:
        return self._request.call.caller

    @property
    def extensions(self) -> tuple[str, ...]:
        """The extensions the client activated for this call."""
        return self._request.call.activated_extensions

    @property
    def metadata(self) -> dict[str, JSONValue]:
        """The message's metadata, then the request's (the request's win)."""
        merged: dict[str, JSONValue] = dict(self.message.metadata or {})
        merged.update(self._request.metadata or {})  # type: ignore[arg-type]
        return merged

    @property
    def parts(self) -> tuple[Part, ...]:
        return self.message.parts

    @property
    def text(self) -> str:
        """The text of the message's text parts, joined by newlines."""
        parts = self.message.parts
        if len(parts) == 1 and type(part := parts[0]) is TextPart:
            return part.text  # the usual message: one text part
        return "\n".join(p.text for p in parts if isinstance(p, TextPart))

    @property
    def files(self) -> tuple[RawPart | UrlPart, ...]:
        return tuple(p for p in self.message.parts if isinstance(p, RawPart | UrlPart))

    @property
    def data(self) -> tuple[JSONValue, ...]:
        return tuple(p.data for p in self.message.parts if isinstance(p, DataPart))

    # --- moves -----------------------------------------------------------------------

    async def update(self, content: Content) -> None:
        """A progress update: the task stays WORKING with this status message."""
        await self._status(TaskState.WORKING, content)

    async def artifact(
        self,
        content: Content,
        *,
        artifact_id: str = "",
        name: str = "",
        append: bool = False,
        last_chunk: bool = False,
    ) -> str:
        """Emit an artifact (or a chunk of one); returns its id for further chunks."""
        event = self._artifact_event(content, artifact_id, name, append, last_chunk)
        self.acted = True
        await self._sink.emit(event)
        return event.artifact.artifact_id

    async def ask(self, content: Content) -> Message:
        """Ask the user: the task goes INPUT_REQUIRED; returns the user's reply."""
        return await self._interrupt(TaskState.INPUT_REQUIRED, content)

    async def auth_required(self, content: Content) -> Message:
        """Ask for authorization: the task goes AUTH_REQUIRED; returns the next message."""
        return await self._interrupt(TaskState.AUTH_REQUIRED, content)

    async def complete(self, content: Content = None) -> None:
        """End the task COMPLETED now, with an optional status message."""
        await self._status(TaskState.COMPLETED, content)

    def reject(self, reason: str = "The agent declined this task") -> NoReturn:
        raise Rejected(reason)

    def fail(self, reason: str = "The agent could not complete this task") -> NoReturn:
        raise Failed(reason)

    def reply(self, content: Content) -> Message:
        """A direct message answer (return it from the agent function)."""
        return agent_message(content, context_id=self.context_id)

    # --- plumbing used by the executor ------------------------------------------------

    def _artifact_event(
        self, content: Content, artifact_id: str, name: str, append: bool, last_chunk: bool
    ) -> TaskArtifactUpdateEvent:
        if isinstance(content, Artifact):
            artifact = content
        else:
            artifact = Artifact(
                artifact_id=artifact_id or new_id(), parts=to_parts(content), name=name
            )
        request = self._request
        return TaskArtifactUpdateEvent(
            task_id=request.task_id,
            context_id=request.context_id,
            artifact=artifact,
            append=append,
            last_chunk=last_chunk,
        )

    def _status_event(self, state: TaskState, content: Content) -> TaskStatusUpdateEvent:
        request = self._request
        task_id, context_id = request.task_id, request.context_id
        note = (
            agent_message(content, context_id=context_id, task_id=task_id)
            if content is not None
            else None
        )
        return TaskStatusUpdateEvent(
            task_id=task_id, context_id=context_id, status=TaskStatus(state=state, message=note)
        )

    async def _status(self, state: TaskState, content: Content = None) -> None:
        if self.before_status is not None:
            await self.before_status(lifecycle.is_terminal(state))
        self.acted = True
        await self._sink.emit(self._status_event(state, content))
        self.finished = state in lifecycle.TERMINAL

    async def _result(self, content: Content) -> None:
        """What a function returned: an artifact of it, then COMPLETED. A sink with
        `emit_all` (the runner's) commits the two as one write."""
        emit_all: Callable[[Sequence[StreamEvent]], Awaitable[None]] | None = getattr(
            self._sink, "emit_all", None
        )
        if emit_all is None or self.before_status is not None:
            await self.artifact(content, last_chunk=True)
            await self._status(TaskState.COMPLETED)
            return
        artifact = self._artifact_event(content, "", "", False, True)
        self.acted = True
        await emit_all((artifact, self._status_event(TaskState.COMPLETED, None)))
        self.finished = True

    async def _interrupt(self, state: TaskState, content: Content) -> Message:
        self._reply = asyncio.get_running_loop().create_future()
        await self._status(state, content)
        if self._on_pause is not None:
            self._on_pause()  # the run that carried this message is over
        reply = await self._reply
        self.message = reply
        await self._status(TaskState.WORKING)  # resumed: clients see the task working again
        return reply

    def _resume(self, request: RequestContext, sink: EventSink) -> bool:
        """Deliver a follow-up message to a suspended ask; False if none is waiting."""
        if self._reply is None or self._reply.done():
            return False
        self._request, self._sink = request, sink
        self._reply.set_result(request.message)
        return True

    @property
    def _waiting(self) -> bool:
        return self._reply is not None and not self._reply.done()
