"""What `AgentService`'s options do to it (`parley.server.service`): `push` makes both cards
declare delivery exactly when it is on, and needs an outbox to deliver; `sign_card` signs
last, the public card, a fixed extended card and, per call, an extended card a function
makes (after the security's schemes are declared on it); a namespace is checked; rate
limits and run caps are only built when configured; stores given or not."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from parley.model import AgentCard, AgentCardSignature, GetExtendedAgentCardRequest
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, Security
from parley.server.context import CallContext, Caller
from parley.server.push.delivery import PushSettings
from parley.server.quotas import Quotas
from parley.server.service import AgentService
from parley.server.stores.memory import InMemoryPushConfigStore, InMemoryTaskStore
from parley.server.task_context import TaskContext
from tests.server.support import run

ALICE = CallContext(caller=Caller(id="alice"))


def agent(**options: Any) -> Agent:
    made = Agent("Options", **options)

    @made.skill()
    async def answer(task: TaskContext) -> str:
        return task.text

    return made


def card(**options: Any) -> AgentCard:
    return agent(**options).card("http://test")


def service(**options: Any) -> AgentService:
    served = card()
    if "extended_card" in options:  # declared, as Agent(extended_card=...) does
        capabilities = replace(served.capabilities, extended_agent_card=True)
        served = replace(served, capabilities=capabilities)
    return AgentService(agent().executor(), served, **options)


@pytest.mark.parametrize(
    ("push", "declared"), [(True, True), (False, False), (PushSettings(), True)]
)
def test_push_makes_both_cards_declare_delivery_exactly_when_on(push: Any, declared: bool) -> None:
    extended = replace(card(), name="Options (extended)")
    made = AgentService(
        agent().executor(), card(push_notifications=not declared), extended_card=extended, push=push
    )
    assert made.card.capabilities.push_notifications is declared
    assert isinstance(made.extended_card, AgentCard)
    assert made.extended_card.capabilities.push_notifications is declared
    assert (made.push_worker is not None) is declared


def test_without_the_push_option_the_card_says_what_it_says() -> None:
    made = AgentService(agent().executor(), card(push_notifications=True))
    assert made.card.capabilities.push_notifications is True
    assert made.push_worker is not None  # the memory stores have an outbox


def test_delivery_needs_an_outbox() -> None:
    configs_only: Any = object()  # a push-config store without an outbox
    store = InMemoryTaskStore()
    with pytest.raises(ValueError, match="outbox"):
        AgentService(agent().executor(), card(), store=store, push_store=configs_only, push=True)
    kept = AgentService(
        agent().executor(), card(push_notifications=True), store=store, push_store=configs_only
    )
    assert kept.push_worker is None  # configs kept, not delivered


def signed(made: AgentCard) -> AgentCard:
    """A stand-in signer: records what it signed in the signature's header."""
    signature = AgentCardSignature(protected="p", signature=made.name, header={"by": "test"})
    return replace(made, signatures=(*made.signatures, signature))


def test_sign_card_signs_the_public_and_a_fixed_extended_card_as_served() -> None:
    security = Security(ApiKeys({"k": "alice"}))
    extended = replace(card(), name="Extended")
    made = service(sign_card=signed, security=security, extended_card=extended)
    assert [s.signature for s in made.card.signatures] == ["Options"]
    assert made.card.security_schemes  # declared before signing
    assert isinstance(made.extended_card, AgentCard)
    assert [s.signature for s in made.extended_card.signatures] == ["Extended"]
    assert made.extended_card.security_schemes


def test_an_extended_card_made_per_caller_is_declared_and_signed_per_call() -> None:
    security = Security(ApiKeys({"k": "alice"}))
    asked: list[str] = []

    async def per_caller(caller: Caller) -> AgentCard:
        asked.append(caller.id)
        return replace(card(), name=f"For {caller.id}")

    made = service(sign_card=signed, security=security, extended_card=per_caller)
    got = run(made.get_extended_agent_card(ALICE, GetExtendedAgentCardRequest()))
    assert asked == ["alice"]
    assert got.name == "For alice"
    assert [s.signature for s in got.signatures] == ["For alice"]
    assert got.security_schemes


def test_a_plain_function_may_make_the_extended_card() -> None:
    made = service(extended_card=lambda caller: replace(card(), name=f"Hi {caller.id}"))
    got = run(made.get_extended_agent_card(ALICE, GetExtendedAgentCardRequest()))
    assert got.name == "Hi alice"
    assert got.signatures == ()


@pytest.mark.parametrize("namespace", ["bad\x00name", "x" * 129, "\ud800"])
def test_a_namespace_that_cannot_be_one_is_refused(namespace: str) -> None:
    with pytest.raises(ValueError, match="namespace"):
        service(namespace=namespace)


def test_the_namespace_defaults_to_the_cards_name() -> None:
    assert service().namespace == "Options"
    assert service(namespace="").namespace == ""


def test_rate_limits_are_built_only_when_a_rate_is_set() -> None:
    assert service().rate_limiter is None
    assert service(quotas=Quotas(rate="10/second")).rate_limiter is not None


def test_runs_are_counted_only_when_they_are_capped() -> None:
    capped = service()
    assert capped.runner.caps is capped.caps
    free = service(quotas=Quotas(max_running_tasks=None, max_running_tasks_total=None))
    assert free.runner.caps is not free.caps


def test_without_stores_the_memory_stores_share_configs_with_tasks() -> None:
    made = service()
    assert isinstance(made.store, InMemoryTaskStore)
    assert made.store.shares_configs(made.push_store)


def test_a_task_store_alone_gets_a_push_store_of_its_own() -> None:
    store = InMemoryTaskStore()
    made = service(store=store)
    assert made.store is store
    assert isinstance(made.push_store, InMemoryPushConfigStore)
    assert not store.shares_configs(made.push_store)
