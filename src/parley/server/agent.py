"""The authoring API: an `Agent` is a set of plain functions (skills) turned into an A2A
agent. A function gets a `TaskContext` and returns text, data, parts or an artifact
(the task completes with it), or yields chunks (they stream as one artifact), or
returns `task.reply(...)` (a direct message, no task).

    agent = Agent("Echo", description="Repeats what you say")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

A function that awaits `task.ask(...)` suspends in INPUT_REQUIRED and resumes with the
user's reply, in the same coroutine, when the follow-up message arrives. A function of
one `str` (`async def f(text: str)`) gets the message's text instead of the context.

`agent.asgi()` is the one door from here to the HTTP binding above (`parley.asgi`),
imported when called, so that this module stays free of it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

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
)
from parley.protocol.errors import InvalidAgentResponseError
from parley.protocol.negotiation import Version
from parley.server.auth.security import Security
from parley.server.execution import RequestContext
from parley.server.functions import AgentFunction, FunctionExecutor
from parley.server.skills import declared_output_modes, taking_text
from parley.wire.cards import GRPC_BINDING, grpc_url

if TYPE_CHECKING:
    from parley.asgi.embedding import AgentApp, AgentAppOptions

F = TypeVar("F", bound=Callable[..., Any])

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
        resumable: bool = False,
        extended_card: Callable[[AgentCard], AgentCard] | None = None,
    ) -> None:
        self.name = name
        self.extended_card = extended_card
        """Makes the card authenticated callers get (GetExtendedAgentCard) from the public
        card as served, e.g. with more skills; with it, the public card declares
        `extendedAgentCard` (0.3: `supportsAuthenticatedExtendedCard`)."""
        self.resumable = resumable
        """Whether a task whose replica died is run again by the replica that recovers it
        (its skill called anew on the task's last user message), instead of failed: for
        skills that may run twice (docs/deploy.md, "Failover")."""
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
        input_modes: Sequence[str] = (),
        output_modes: Sequence[str] | None = None,
    ) -> Callable[[F], F]:
        """Register a function as a skill (the first one registered is the default); it
        takes a `TaskContext`, or one `str` (the message's text).

        `scopes`: what a caller needs besides authenticating (e.g. OAuth scopes of a
        `JwtBearer` token) to run it. The card declares them on the skill, and a message
        going to it from a caller without them is refused (PermissionDeniedError) before
        any task is created. `input_modes`, `output_modes`: the media types the skill
        takes and produces, when they differ from the agent's; by default a function
        annotated to return a `dict` or `list` declares `application/json`."""

        def register(function: F) -> F:
            skill_id = id or function.__name__
            doc = inspect.getdoc(function) or ""
            outputs = declared_output_modes(function) if output_modes is None else output_modes
            self.skills.append(
                AgentSkill(
                    id=skill_id,
                    name=name or skill_id.replace("_", " ").title(),
                    description=description if description is not None else doc,
                    tags=tuple(tags),
                    examples=tuple(examples),
                    input_modes=tuple(input_modes),
                    output_modes=tuple(outputs),
                )
            )
            self._functions[skill_id] = taking_text(function)
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
            wanted = where.get(SKILL_METADATA_KEY) if where else None
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
        scopes = self.scopes_for if self._scopes else None
        return FunctionExecutor(self.route, scopes, resumable=self.resumable)

    def asgi(self, url: str | None = None, **options: Unpack[AgentAppOptions]) -> AgentApp:
        """This agent as an ASGI app, to serve (`uvicorn.run(agent.asgi())`) or to mount
        (`app.mount("/agent", agent.asgi())`; `parley.asgi.mount_into`). Register skills
        first.

        `url`: its public URL, for its card; by default each request's own (scheme, Host,
        mount path). `store`: a `TaskStore` or a store URL, `memory` (the default),
        `sqlite:///agent.db`, `postgresql://…` (`parley.server.stores.open_store`); it is
        opened by the ASGI lifespan, the host's (`lifespan`), or the first request.
        `push_store`, `broker`, `namespace`, `security`, `push`, `quotas`: as
        `AgentService`'s; `limits`, `allowed_hosts`, `card_mode`, `served_versions`: as
        `parley.asgi.build_app`'s."""
        from parley.asgi.embedding import agent_app  # noqa: PLC0415 - the layer above

        return agent_app(self, url, **options)

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
        with gRPC at `grpc_address` (`host:port`, listed as `grpc_url` says) if given; a
        streaming agent declares the stream-resume extension (`STREAM_RESUME`). It declares
        `security` (default: the agent's own), and each skill's scopes as that skill's
        requirements."""
        security = security or self.security
        capabilities = self.capabilities
        declared = {extension.uri for extension in capabilities.extensions}
        if capabilities.streaming and STREAM_RESUME_URI not in declared:
            extensions = (*capabilities.extensions, STREAM_RESUME)
            capabilities = replace(capabilities, extensions=extensions)
        if self.extended_card is not None:
            capabilities = replace(capabilities, extended_agent_card=True)
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


__all__ = [
    "SKILL_METADATA_KEY",
    "STREAM_RESUME",
    "STREAM_RESUME_URI",
    "Agent",
    "AgentFunction",
    "FunctionExecutor",
]
