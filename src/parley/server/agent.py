"""The authoring API: an `Agent` is a set of plain functions (skills) turned into an A2A
agent. A function gets a `TaskContext` and returns text, data, parts or an artifact
(the task completes with it), or yields chunks (they stream as one artifact), or
returns `task.reply(...)` (a direct message, no task).

    agent = Agent("Echo", description="Repeats what you say")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

A function that awaits `task.ask(...)` suspends in INPUT_REQUIRED and resumes with the
user's reply, in the same coroutine, when the follow-up message arrives.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from msgspec.structs import replace

from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    Message,
    SecurityRequirement,
    TaskState,
)
from parley.protocol.errors import InvalidAgentResponseError, PermissionDeniedError
from parley.protocol.negotiation import Version
from parley.server.auth.security import Security
from parley.server.context import CallContext
from parley.server.execution import EventSink, RequestContext
from parley.server.task_context import Failed, Rejected, TaskContext
from parley.wire.cards import GRPC_BINDING, grpc_url

AgentFunction: TypeAlias = Callable[[TaskContext], Any]
"""`(task) -> Content | Message`, sync or async, or an async generator of Content."""

SKILL_METADATA_KEY = "skill"
"""Message or request metadata naming the skill to run (else the first skill runs)."""

STREAM_RESUME_URI = "urn:parley:a2a:stream-resume:v1"
"""The extension a streaming agent's card declares: task stream events carry their
sequence number as the SSE `id:`, and SubscribeToTask with `Last-Event-ID` replays what
the client missed (docs/agents.md, "Resuming a stream")."""

STREAM_RESUME = AgentExtension(
    uri=STREAM_RESUME_URI,
    description="Task stream events carry a per-task sequence number as the SSE id; "
    "SubscribeToTask with Last-Event-ID resumes after it, replaying the events missed.",
    required=False,
)


@dataclass
class _Session:
    """One running agent function, possibly suspended waiting for the user."""

    context: TaskContext
    scopes: frozenset[str] = frozenset()
    driver: asyncio.Task[None] | None = None
    paused: asyncio.Event = field(default_factory=asyncio.Event)
    error: BaseException | None = None


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
    ) -> None:
        self._route = route
        self._scopes = scopes or _no_scopes
        self._sessions: dict[str, _Session] = {}

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

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        session = self._sessions.get(context.task_id)
        if session is None or not session.context._resume(context, events):
            session = self._start(context, events)
        session.paused.clear()
        try:
            await session.paused.wait()
        except asyncio.CancelledError:
            await self._stop(context.task_id)
            raise
        if session.driver is not None and session.driver.done():
            self._sessions.pop(context.task_id, None)
            if session.error is not None:
                raise session.error

    def _start(self, context: RequestContext, events: EventSink) -> _Session:
        self.admit(context.call, context.message, context.metadata)  # for other handlers too
        function = self._route(context)
        paused = asyncio.Event()
        session = _Session(
            TaskContext(context, events, on_pause=paused.set),
            scopes=self._scopes(context.message, context.metadata),
            paused=paused,
        )
        self._sessions[context.task_id] = session
        session.driver = asyncio.get_running_loop().create_task(self._drive(function, session))
        return session

    async def _drive(self, function: AgentFunction, session: _Session) -> None:
        task = session.context
        try:
            result = function(task)
            if inspect.isasyncgen(result):
                await _stream(task, aiter(result))
            else:
                if inspect.isawaitable(result):
                    result = await result
                await _finish(task, result)
        except Rejected as exc:
            await task._status(TaskState.REJECTED, str(exc))
        except Failed as exc:
            await task._status(TaskState.FAILED, str(exc))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # reported by execute, which fails the task
            session.error = exc
        finally:
            session.paused.set()

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
    return frozenset()


async def _finish(task: TaskContext, result: Any) -> None:
    if task.finished:
        if result is not None:
            raise InvalidAgentResponseError("The task was already finished: nothing to return")
        return
    if isinstance(result, Message):
        if task.task is None and not task.acted:
            await task._sink.emit(result)  # a direct reply: no task
            return
        await task._status(TaskState.COMPLETED, result.parts)
        return
    if result is not None:
        await task.artifact(result, last_chunk=True)
    await task._status(TaskState.COMPLETED)


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


def _endpoints(
    url: str, bindings: Sequence[str], grpc_address: str | None, version: Version
) -> list[tuple[str, str]]:
    """(binding, url) of each interface of one version: `bindings` at `url`, then gRPC."""
    out = [(binding, url) for binding in bindings]
    if grpc_address:
        out.append((GRPC_BINDING, grpc_url(grpc_address, version)))
    return out


class Agent:
    """An A2A agent made of skill functions, and the card that describes it."""

    def __init__(
        self,
        name: str,
        *,
        description: str = "",
        version: str = "0.1.0",
        streaming: bool = True,
        push_notifications: bool = False,
        input_modes: Sequence[str] = ("text/plain",),
        output_modes: Sequence[str] = ("text/plain",),
        provider: AgentProvider | None = None,
        documentation_url: str | None = None,
        extensions: Sequence[AgentExtension] = (),
        security: Security | None = None,
    ) -> None:
        self.name = name
        self.security = security
        """The schemes callers authenticate with (None: everyone is anonymous); `card()`
        declares them and `AgentService(..., security=agent.security)` enforces them."""
        self.description = description
        self.version = version
        self.capabilities = AgentCapabilities(
            streaming=streaming,
            push_notifications=push_notifications,
            extensions=tuple(extensions),
        )
        self.input_modes = tuple(input_modes)
        self.output_modes = tuple(output_modes)
        self.provider = provider
        self.documentation_url = documentation_url
        self.skills: list[AgentSkill] = []
        self._functions: dict[str, AgentFunction] = {}
        self._scopes: dict[str, frozenset[str]] = {}

    def skill(
        self,
        id: str | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Sequence[str] = (),
        examples: Sequence[str] = (),
        scopes: Sequence[str] = (),
    ) -> Callable[[AgentFunction], AgentFunction]:
        """Register a function as a skill (the first one registered is the default).

        `scopes`: what a caller needs besides authenticating (e.g. OAuth scopes of a
        `JwtBearer` token) to run it. The card declares them on the skill, and a message
        going to it from a caller without them is refused (PermissionDeniedError) before
        any task is created."""

        def register(function: AgentFunction) -> AgentFunction:
            skill_id = id or function.__name__
            doc = inspect.getdoc(function) or ""
            self.skills.append(
                AgentSkill(
                    id=skill_id,
                    name=name or skill_id.replace("_", " ").title(),
                    description=description if description is not None else doc,
                    tags=tuple(tags),
                    examples=tuple(examples),
                )
            )
            self._functions[skill_id] = function
            if scopes:
                self._scopes[skill_id] = frozenset(scopes)
            return function

        return register

    def route(self, context: RequestContext) -> AgentFunction:
        """The function for a message: the skill its metadata names, else the first."""
        if not self._functions:
            raise InvalidAgentResponseError(f"Agent {self.name!r} has no skills")
        return self._functions[self._skill_id(context.message, context.metadata)]

    def _skill_id(self, message: Message, metadata: Mapping[str, Any] | None) -> str:
        for where in (message.metadata, metadata):
            wanted = (where or {}).get(SKILL_METADATA_KEY)
            if isinstance(wanted, str) and wanted in self._functions:
                return wanted
        return next(iter(self._functions))

    def scopes_for(self, message: Message, metadata: Mapping[str, Any] | None) -> frozenset[str]:
        """The scopes of the skill a message goes to (`skill(scopes=...)`)."""
        if not self._scopes or not self._functions:
            return frozenset()
        return self._scopes.get(self._skill_id(message, metadata), frozenset())

    def executor(self) -> FunctionExecutor:
        """The executor of the skills registered so far; it checks skills' scopes only if
        one of them has some (register skills before serving)."""
        return FunctionExecutor(self.route, self.scopes_for if self._scopes else None)

    def card(
        self,
        url: str,
        *,
        bindings: Sequence[str] = ("JSONRPC", "HTTP+JSON"),
        grpc_address: str | None = None,
        security: Security | None = None,
        **changes: Any,
    ) -> AgentCard:
        """The agent card for an agent served at `url`: every binding in 1.0, then 0.3,
        with gRPC at `grpc_address` (`host:port`) if given; a streaming agent declares
        the stream-resume extension (`STREAM_RESUME`). It declares `security` (default:
        the agent's own), and each skill's scopes as that skill's requirements."""
        security = security or self.security
        capabilities = self.capabilities
        declared = {extension.uri for extension in capabilities.extensions}
        if capabilities.streaming and STREAM_RESUME_URI not in declared:
            extensions = (*capabilities.extensions, STREAM_RESUME)
            capabilities = replace(capabilities, extensions=extensions)
        interfaces = tuple(
            AgentInterface(url=where, protocol_binding=binding, protocol_version=version.value)
            for version in (Version.V1_0, Version.V0_3)
            for binding, where in _endpoints(url, bindings, grpc_address, version)
        )
        card = AgentCard(
            name=self.name,
            description=self.description,
            version=self.version,
            supported_interfaces=interfaces,
            capabilities=capabilities,
            default_input_modes=self.input_modes,
            default_output_modes=self.output_modes,
            skills=tuple(_declared(skill, security, self._scopes) for skill in self.skills),
            provider=self.provider,
            documentation_url=self.documentation_url,
        )
        if security is not None:
            card = security.apply(card)
        return replace(card, **changes) if changes else card


def _declared(
    skill: AgentSkill, security: Security | None, scopes: Mapping[str, frozenset[str]]
) -> AgentSkill:
    """A skill with scopes requires them in each of the agent's alternatives, on the
    alternative's first scheme (the scopes are checked pooled, as `Security` pools them)."""
    needed = scopes.get(skill.id)
    if security is None or not needed:
        return skill
    requirements = []
    for alternative in security.alternatives:
        first = next(iter(alternative))
        schemes = {
            name: tuple(sorted({*listed, *needed})) if name == first else listed
            for name, listed in alternative.items()
        }
        requirements.append(SecurityRequirement(schemes=schemes))
    return replace(skill, security_requirements=tuple(requirements))
