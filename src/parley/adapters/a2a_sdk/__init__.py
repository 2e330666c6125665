"""Serving an official a2a-sdk (1.x) `AgentExecutor` on Parley, unchanged:

    from parley.adapters.a2a_sdk import from_executor

    agent = from_executor(MyAgentExecutor(), card=my_agent_card)

`agent` is a target of `parley serve module:agent` (or `AgentService(agent.executor(),
agent.card(url))`): Parley stores its tasks, speaks both protocol versions over every
binding it serves, and lists its own interfaces in the card; the rest of the card (name,
description, skills, capabilities, modes, provider, declared security) is the SDK card's.
Needs the a2a-sdk extra (`pip install 'parley-a2a[a2a-sdk]'`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

try:
    from parley.adapters.a2a_sdk import convert
    from parley.adapters.a2a_sdk.executor import SdkExecutor
except ImportError as exc:  # pragma: no cover - the extra is installed in tests
    raise ImportError(
        f"parley.adapters.a2a_sdk needs the a2a-sdk extra: pip install 'parley-a2a[a2a-sdk]' "
        f"({exc})"
    ) from exc
from parley.model import AgentCard, AgentInterface
from parley.protocol.negotiation import Version
from parley.server.agent import STREAM_RESUME, STREAM_RESUME_URI
from parley.server.auth.security import Security
from parley.wire.cards import GRPC_BINDING, grpc_url


class SdkAgent:
    """An a2a-sdk executor and its card, as Parley serves them (what `from_executor` makes)."""

    def __init__(self, executor: Any, card: Any, *, security: Security | None = None) -> None:
        self.sdk_executor = executor
        self.declared = convert.card(card)
        """The SDK card's content in Parley's model (its interfaces are Parley's own)."""
        self.name = self.declared.name
        self.security = security
        """Schemes Parley enforces (None: the card's security is declared, not enforced,
        as on the SDK's own server)."""

    def executor(self) -> SdkExecutor:
        return SdkExecutor(self.sdk_executor)

    def card(
        self,
        url: str,
        *,
        bindings: Sequence[str] = ("JSONRPC", "HTTP+JSON"),
        grpc_address: str | None = None,
        security: Security | None = None,
        **changes: Any,
    ) -> AgentCard:
        """The SDK card served at `url`: every binding in 1.0, then 0.3 (gRPC at
        `grpc_address` if given), the stream-resume extension if it streams, no extended
        card and no signatures (`parley serve --sign-card` signs the card as served). With
        `security` (default: the agent's own), its schemes replace the declared ones."""
        capabilities = self.declared.capabilities
        if capabilities.streaming and all(
            extension.uri != STREAM_RESUME_URI for extension in capabilities.extensions
        ):
            capabilities = replace(
                capabilities, extensions=(*capabilities.extensions, STREAM_RESUME)
            )
        card = replace(
            self.declared,
            supported_interfaces=_interfaces(url, bindings, grpc_address),
            capabilities=replace(capabilities, extended_agent_card=False),
            signatures=(),
        )
        security = security or self.security
        if security is not None:
            card = security.apply(card)
        return replace(card, **changes) if changes else card


def from_executor(executor: Any, *, card: Any, security: Security | None = None) -> SdkAgent:
    """An a2a-sdk 1.x `AgentExecutor` with its `AgentCard` (the SDK's protobuf types), as an
    agent Parley serves. `security`: schemes Parley enforces and declares in the card."""
    return SdkAgent(executor, card, security=security)


def _interfaces(
    url: str, bindings: Sequence[str], grpc_address: str | None
) -> tuple[AgentInterface, ...]:
    interfaces = []
    for version in (Version.V1_0, Version.V0_3):
        for binding in bindings:
            interfaces.append(
                AgentInterface(url=url, protocol_binding=binding, protocol_version=version.value)
            )
        if grpc_address:
            interfaces.append(
                AgentInterface(
                    url=grpc_url(grpc_address, version),
                    protocol_binding=GRPC_BINDING,
                    protocol_version=version.value,
                )
            )
    return tuple(interfaces)


__all__ = ["SdkAgent", "SdkExecutor", "from_executor"]
