"""The operations table agrees with REFERENCE §3.1 and covers every operation."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.model import AgentCapabilities, AgentCard
from parley.protocol.errors import PushNotificationNotSupportedError, UnsupportedOperationError
from parley.protocol.negotiation import Version
from parley.protocol.operations import (
    JSONRPC_METHODS,
    OPERATIONS,
    Capability,
    Operation,
    require_capability,
)

REFERENCE = Path(__file__).parents[2] / "spec" / "REFERENCE.md"


def _name_map() -> list[list[str]]:
    text = REFERENCE.read_text()
    section = text[text.index("### 3.1 Name map") : text.index("### 3.2")]
    rows = [
        [cell.split()[0].strip("`") for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| Operation")
    ]
    return rows


def test_names_agree_with_reference_3_1() -> None:
    rows = _name_map()
    assert len(rows) == len(Operation)
    for _, jsonrpc03, jsonrpc10, grpc03, grpc10 in rows:
        operation, version = JSONRPC_METHODS[jsonrpc10]
        assert version is Version.V1_0
        spec = OPERATIONS[operation]
        assert spec.bindings[Version.V1_0].grpc_method == grpc10
        if jsonrpc03.startswith("—"):
            assert Version.V0_3 not in spec.bindings
            continue
        assert JSONRPC_METHODS[jsonrpc03] == (operation, Version.V0_3)
        assert spec.bindings[Version.V0_3].grpc_method == grpc03


def test_every_1_0_route_has_a_tenant_form() -> None:
    for spec in OPERATIONS.values():
        routes = spec.bindings[Version.V1_0].routes
        plain = [r for r in routes if not r.path.startswith("/{tenant}")]
        assert plain
        for route in plain:
            assert any(r.verb == route.verb and r.path == "/{tenant}" + route.path for r in routes)


def test_streaming_operations_need_the_streaming_capability() -> None:
    for spec in OPERATIONS.values():
        assert spec.streaming == (spec.capability is Capability.STREAMING)


def _card(
    *, streaming: bool = False, push_notifications: bool = False, extended_agent_card: bool = False
) -> AgentCard:
    return AgentCard(
        name="a",
        description="",
        version="1",
        supported_interfaces=(),
        capabilities=AgentCapabilities(
            streaming=streaming,
            push_notifications=push_notifications,
            extended_agent_card=extended_agent_card,
        ),
        default_input_modes=(),
        default_output_modes=(),
        skills=(),
    )


@pytest.mark.parametrize(
    ("operation", "error"),
    [
        (Operation.SEND_STREAMING_MESSAGE, UnsupportedOperationError),
        (Operation.SUBSCRIBE_TO_TASK, UnsupportedOperationError),
        (Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, PushNotificationNotSupportedError),
        (Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, PushNotificationNotSupportedError),
        (Operation.GET_EXTENDED_AGENT_CARD, UnsupportedOperationError),
    ],
)
def test_capability_gating(operation: Operation, error: type[Exception]) -> None:
    """R-CAP-1, R-STREAM-12, R-PUSH-8, R-XCARD-10: undeclared capability -> the spec error."""
    with pytest.raises(error):
        require_capability(_card(), operation)
    require_capability(
        _card(streaming=True, push_notifications=True, extended_agent_card=True), operation
    )
    require_capability(_card(), Operation.SEND_MESSAGE)
