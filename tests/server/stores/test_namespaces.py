"""Agent namespaces: which names can be one, how a namespace and a tenant make a stored
tenant that reads back one way only, and what namespace an AgentService takes."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from parley.server.context import CallContext, Caller
from parley.server.service import AgentService
from parley.server.stores.namespaces import (
    MAX_NAMESPACE_BYTES,
    SEPARATOR,
    check_namespace,
    owns,
    prefix,
)
from tests.server.support import ScriptedExecutor, make_card


async def _nothing(*_: object) -> None:
    """A script that emits nothing."""


@pytest.mark.parametrize(
    "name", ["", "Weather", "météo", "天気", "a b-c_d.e", "x" * MAX_NAMESPACE_BYTES]
)
def test_names_that_can_be_namespaces(name: str) -> None:
    assert check_namespace(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "a\x1fb",
        "a\x00",
        "line\n",
        "\x7f",
        "\x85",
        "x" * (MAX_NAMESPACE_BYTES + 1),
        "é" * 65,
        "\ud800",
    ],
)
def test_names_that_cannot(name: str) -> None:
    with pytest.raises(ValueError, match="namespace"):
        check_namespace(name)


@pytest.mark.parametrize("namespace", ["", "Weather", "Travel"])
@pytest.mark.parametrize("tenant", ["", "acme", "Weather"])
def test_a_stored_tenant_belongs_to_its_namespace_only(namespace: str, tenant: str) -> None:
    stored = prefix(namespace) + tenant
    for other in ("", "Weather", "Travel", "Weather" + SEPARATOR + "acme"):
        assert owns(other, stored) is (other == namespace)


def test_the_empty_namespace_leaves_the_scope_as_it_was() -> None:
    assert prefix("") == ""
    assert prefix("Weather") == "Weather" + SEPARATOR


def test_an_agent_service_is_namespaced_by_its_card_name_unless_told() -> None:
    card = make_card()
    ctx = CallContext(caller=Caller(id="alice"), tenant="acme")
    named = AgentService(ScriptedExecutor(_nothing), card)
    assert named.namespace == card.name
    assert named.store_scope(ctx) == (card.name + SEPARATOR + "acme", "alice")
    chosen = AgentService(ScriptedExecutor(_nothing), card, namespace="billing")
    assert chosen.store_scope(ctx) == ("billing" + SEPARATOR + "acme", "alice")
    unscoped = AgentService(ScriptedExecutor(_nothing), card, namespace="")
    assert unscoped.store_scope(ctx) == ctx.scope == ("acme", "alice")
    with pytest.raises(ValueError, match="namespace"):
        AgentService(ScriptedExecutor(_nothing), replace(card, name="two\nlines"))
