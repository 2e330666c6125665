"""The agent card: who an agent is, where and how to reach it, what it can do."""

from __future__ import annotations

from collections.abc import Mapping

from parley.model._base import JSONObject, Model
from parley.model.security import SecurityRequirement, SecurityScheme


class AgentInterface(Model, frozen=True, kw_only=True):
    """One (URL, binding, protocol version) an agent serves; the first is preferred.

    `protocol_binding` is `JSONRPC`, `GRPC`, `HTTP+JSON` or a URI for a custom binding;
    `protocol_version` is `Major.Minor`.
    """

    url: str
    protocol_binding: str
    protocol_version: str
    tenant: str = ""


class AgentProvider(Model, frozen=True, kw_only=True):
    """The organization behind an agent."""

    organization: str
    url: str


class AgentExtension(Model, frozen=True, kw_only=True):
    """A protocol extension the agent supports (`required`: clients must activate it)."""

    uri: str
    description: str = ""
    required: bool = False
    params: JSONObject | None = None


class AgentCapabilities(Model, frozen=True, kw_only=True):
    """Optional capabilities. `None` means not stated (treated as false)."""

    streaming: bool | None = None
    push_notifications: bool | None = None
    extended_agent_card: bool | None = None
    extensions: tuple[AgentExtension, ...] = ()
    state_transition_history: bool | None = None
    """0.3 only; dropped by 1.0."""


class AgentSkill(Model, frozen=True, kw_only=True):
    """Something the agent can do."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...]
    examples: tuple[str, ...] = ()
    input_modes: tuple[str, ...] = ()
    output_modes: tuple[str, ...] = ()
    security_requirements: tuple[SecurityRequirement, ...] = ()


class AgentCardSignature(Model, frozen=True, kw_only=True):
    """A detached JWS over the canonical card (RFC 7515, RFC 8785)."""

    protected: str
    signature: str
    header: JSONObject | None = None


class AgentCard(Model, frozen=True, kw_only=True):
    """An agent's self-description, published at `/.well-known/agent-card.json`."""

    name: str
    description: str
    version: str
    supported_interfaces: tuple[AgentInterface, ...]
    capabilities: AgentCapabilities
    default_input_modes: tuple[str, ...]
    default_output_modes: tuple[str, ...]
    skills: tuple[AgentSkill, ...]
    provider: AgentProvider | None = None
    documentation_url: str | None = None
    icon_url: str | None = None
    security_schemes: Mapping[str, SecurityScheme] = {}
    security_requirements: tuple[SecurityRequirement, ...] = ()
    signatures: tuple[AgentCardSignature, ...] = ()
