"""The client's interface choice (`parley.client.card.select_interface`) against a model of
its rule over any card (REFERENCE §5.3: the client picks among the card's interfaces): the
first of the wanted versions the card offers on an allowed binding, and among those the
card's first; relative URLs resolved against the card's URL, a gRPC address never; and no
compatible interface is one error naming what the card offers."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.client import (
    GRPC_BINDING,
    HTTP_JSON_BINDING,
    JSONRPC_BINDING,
    NoCompatibleInterfaceError,
    select_interface,
)
from parley.client.card import PREFERRED_VERSIONS, interface_version
from parley.model import AgentCapabilities, AgentCard, AgentInterface
from parley.protocol.negotiation import Version

BINDINGS = (JSONRPC_BINDING, HTTP_JSON_BINDING, GRPC_BINDING, "SOAP")
VERSION_TEXTS = ("1.0", "1.0.3", "0.3", "0.3.0", "1.1", "2.0", "1", "")
HTTP_URLS = ("http://agent.example/a2a", "/rpc", "v0/")
GRPC_ADDRESS = "grpc.example:443"


def card(interfaces: Sequence[AgentInterface]) -> AgentCard:
    return AgentCard(
        name="Agent",
        description="",
        version="1",
        supported_interfaces=tuple(interfaces),
        capabilities=AgentCapabilities(),
        default_input_modes=("text/plain",),
        default_output_modes=("text/plain",),
        skills=(),
    )


versions_offered = st.sampled_from(VERSION_TEXTS)
interfaces = st.builds(
    AgentInterface,
    url=st.sampled_from(HTTP_URLS),
    protocol_binding=st.sampled_from([b for b in BINDINGS if b != GRPC_BINDING]),
    protocol_version=versions_offered,
) | st.builds(
    AgentInterface,
    url=st.just(GRPC_ADDRESS),
    protocol_binding=st.just(GRPC_BINDING),
    protocol_version=versions_offered,
)
cards = st.lists(interfaces, max_size=6).map(card)
wanted_versions = st.lists(st.sampled_from(list(Version)), min_size=1, max_size=3, unique=True)
allowed_bindings = st.lists(st.sampled_from(BINDINGS[:3]), min_size=1, max_size=3, unique=True)


def expected(
    agent: AgentCard, versions: Sequence[Version], bindings: Sequence[str]
) -> tuple[int, Version] | None:
    """The rule, written plainly: the index of the chosen interface and its version."""
    for version in versions:
        for index, offered in enumerate(agent.supported_interfaces):
            if offered.protocol_binding in bindings and interface_version(offered) is version:
                return index, version
    return None


@given(cards, wanted_versions, allowed_bindings)
def test_the_choice_follows_the_rule_on_any_card(
    agent: AgentCard, versions: list[Version], bindings: list[str]
) -> None:
    rule = expected(agent, versions, bindings)
    if rule is None:
        with pytest.raises(NoCompatibleInterfaceError):
            select_interface(agent, versions=versions, bindings=bindings)
        return
    chosen, version = select_interface(agent, versions=versions, bindings=bindings)
    index, rule_version = rule
    assert chosen == agent.supported_interfaces[index]
    assert version is rule_version


@given(cards)
def test_by_default_the_newest_version_on_json_rpc_or_rest(agent: AgentCard) -> None:
    rule = expected(agent, PREFERRED_VERSIONS, (JSONRPC_BINDING, HTTP_JSON_BINDING))
    if rule is None:
        with pytest.raises(NoCompatibleInterfaceError):
            select_interface(agent)
        return
    chosen, version = select_interface(agent)
    assert chosen.protocol_binding != GRPC_BINDING
    assert (chosen, version) == (agent.supported_interfaces[rule[0]], rule[1])


def test_the_preferred_versions_are_newest_first() -> None:
    assert list(PREFERRED_VERSIONS) == sorted(
        Version, key=lambda v: tuple(map(int, v.value.split("."))), reverse=True
    )


@given(cards, st.sampled_from(["http://host:8000/agents/x/", "https://h/card.json", ""]))
def test_the_chosen_url_is_absolute_unless_grpc_or_no_base(agent: AgentCard, base: str) -> None:
    bindings = (JSONRPC_BINDING, HTTP_JSON_BINDING, GRPC_BINDING)
    rule = expected(agent, PREFERRED_VERSIONS, bindings)
    if rule is None:
        return
    chosen, _ = select_interface(agent, bindings=bindings, base_url=base)
    original = agent.supported_interfaces[rule[0]]
    if not base or original.protocol_binding == GRPC_BINDING or "://" in original.url:
        assert chosen == original
    else:
        assert chosen.url.startswith(("http://host:8000/", "https://h/"))
        assert (chosen.protocol_binding, chosen.protocol_version) == (
            original.protocol_binding,
            original.protocol_version,
        )


@pytest.mark.parametrize(
    ("base", "relative", "url"),
    [
        ("http://host:8000/agents/x/", "/rpc", "http://host:8000/rpc"),
        ("http://host:8000/agents/x/", "rpc", "http://host:8000/agents/x/rpc"),
        ("http://host:8000/agents/x", "rpc", "http://host:8000/agents/rpc"),
        ("https://h/cards/me.json", "v0/", "https://h/cards/v0/"),
        ("https://h/", "//other.example/a2a", "https://other.example/a2a"),
    ],
)
def test_a_relative_url_is_joined_to_the_cards(base: str, relative: str, url: str) -> None:
    agent = card([AgentInterface(url=relative, protocol_binding="JSONRPC", protocol_version="1.0")])
    chosen, _ = select_interface(agent, base_url=base)
    assert chosen.url == url


def test_a_grpc_address_is_never_joined() -> None:
    agent = card(
        [AgentInterface(url="agent:50051", protocol_binding="GRPC", protocol_version="1.0")]
    )
    chosen, _ = select_interface(agent, bindings=[GRPC_BINDING], base_url="http://card.example/")
    assert chosen.url == "agent:50051"


def test_an_interface_without_a_version_is_taken_as_0_3() -> None:
    """A 0.3 card's interfaces name no version: a missing version means 0.3 (R-VER-6)."""
    agent = card([AgentInterface(url="http://a", protocol_binding="JSONRPC", protocol_version="")])
    assert select_interface(agent)[1] is Version.V0_3
    with pytest.raises(NoCompatibleInterfaceError):
        select_interface(agent, versions=[Version.V1_0])


@pytest.mark.parametrize("text", ["2.0", "1", "0.3.x", "one"])
def test_a_version_parley_does_not_speak_is_skipped(text: str) -> None:
    offered = AgentInterface(url="http://a", protocol_binding="JSONRPC", protocol_version=text)
    assert interface_version(offered) is None


def test_the_error_names_the_card_what_it_offers_and_what_was_wanted() -> None:
    agent = card(
        [
            AgentInterface(url="a:1", protocol_binding="GRPC", protocol_version="1.0"),
            AgentInterface(url="http://a", protocol_binding="SOAP", protocol_version="0.3"),
        ]
    )
    with pytest.raises(NoCompatibleInterfaceError) as raised:
        select_interface(agent, versions=[Version.V1_0, Version.V0_3], bindings=["JSONRPC"])
    assert raised.value.message == (
        "The card of 'Agent' offers GRPC 1.0, SOAP 0.3; this client speaks JSONRPC in A2A 1.0, 0.3"
    )
