"""`parley serve --a2a-1.1-draft`: serve the A2A 1.1 draft as well (`A2A-Version: 1.1`,
task generations). Off by default: a draft is served only when asked for. With the
option, the agent's card lists 1.1 interfaces too (the same endpoints, after the 1.0
ones), and the app and gRPC server serve what the card lists (`negotiation.served_by`).
A request handler or an app given as the target is served as it is."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from parley.cli.wire_compat import add_wire_compat_option
from parley.model import AgentCard
from parley.protocol.negotiation import DRAFT_VERSIONS, RELEASED_VERSIONS, Version
from parley.server.auth.security import Security
from parley.server.execution import AgentExecutor
from parley.server.servable import Servable, is_servable

DEFAULT_SERVED: tuple[Version, ...] = RELEASED_VERSIONS
"""What a server serves without the option: every released version, newest first."""
DRAFT_SERVED: tuple[Version, ...] = (RELEASED_VERSIONS[0], *DRAFT_VERSIONS, *RELEASED_VERSIONS[1:])
"""What it serves with it: 1.0, the draft, 0.3."""


def add_release_options(parser: argparse.ArgumentParser) -> None:
    """`--wire-compat` (`parley.cli.wire_compat`) and `--a2a-1.1-draft`: which spec
    releases the server speaks."""
    add_wire_compat_option(parser)
    add_a2a_draft_option(parser)


def add_a2a_draft_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--a2a-1.1-draft",
        dest="a2a_draft",
        action="store_true",
        help="also serve the A2A 1.1 draft (task generations: long-polling, "
        "ifGenerationMatch, streams resumed by generation) and list it in the card",
    )


def served_versions(arguments: argparse.Namespace) -> tuple[Version, ...]:
    """The versions `parley serve` serves: the draft's too with `--a2a-1.1-draft`."""
    return DRAFT_SERVED if getattr(arguments, "a2a_draft", False) else DEFAULT_SERVED


def drafted(target: Any, arguments: argparse.Namespace) -> Any:
    """The loaded target, its card listing the draft when the option asks for it."""
    if served_versions(arguments) == DEFAULT_SERVED or not is_servable(target):
        return target
    return DraftAgent(target)


class DraftAgent:
    """An agent whose card lists the draft's interfaces too; the rest is the agent's."""

    def __init__(self, agent: Servable) -> None:
        self._agent = agent

    @property
    def security(self) -> Security | None:
        return self._agent.security

    def card(
        self, url: str, *, grpc_address: str | None = None, security: Security | None = None
    ) -> AgentCard:
        card = self._agent.card(url, grpc_address=grpc_address, security=security)
        return with_interfaces(card, DRAFT_SERVED)

    def executor(self) -> AgentExecutor:
        return self._agent.executor()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)


def with_interfaces(card: AgentCard, versions: Sequence[Version]) -> AgentCard:
    """`card` listing the draft's interfaces too when `versions` serves it: each 1.0
    interface again, as 1.1 (the same endpoints serve both), after the 1.0 ones."""
    drafts = [v for v in DRAFT_VERSIONS if v in versions]
    if not drafts:
        return card
    released = RELEASED_VERSIONS[0].value
    current = [i for i in card.supported_interfaces if i.protocol_version == released]
    added = [replace(i, protocol_version=v.value) for v in drafts for i in current]
    interfaces = list(card.supported_interfaces)
    at = max((n + 1 for n, i in enumerate(interfaces) if i in current), default=0)
    return replace(card, supported_interfaces=(*interfaces[:at], *added, *interfaces[at:]))
