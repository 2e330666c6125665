"""Skills from plain functions: a function of one `str` gets the message's text (sync,
async or a generator), and what a skill produces is declared on its card entry, inferred
from its return annotation or given; the client names the skill with `skill=`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from parley import Agent, AgentService, Client, Message, Task, TaskContext
from parley.client.errors import ClientError
from parley.model import TextPart
from parley.protocol.errors import ContentTypeNotSupportedError
from parley.testing import InMemoryTransport
from tests.contracts.support import run


async def word_stats(text: str) -> dict[str, int]:
    """Counts the words."""
    return {"words": len(text.split())}


def shout(text: str) -> str:
    return text.upper()


async def spell(text: str) -> AsyncIterator[str]:
    for letter in text:
        yield letter + "."


def make_agent() -> Agent:
    agent = Agent("Plain")
    agent.skill()(word_stats)
    agent.skill()(shout)
    agent.skill()(spell)

    @agent.skill(output_modes=["text/csv"], input_modes=["text/plain"])
    async def report(task: TaskContext) -> str:
        return "a,b"

    return agent


async def ask(agent: Agent) -> list[Task | Message]:
    service = AgentService(agent.executor(), agent.card("memory://plain"))
    async with Client(InMemoryTransport(service)) as client:
        return [
            await client.send("two words"),
            await client.send("hey", skill="shout"),
            await client.send("ab", skill="spell"),
        ]


def test_a_function_of_text_is_a_skill_as_it_is() -> None:
    stats, shouted, spelled = run(ask(make_agent()))
    assert isinstance(stats, Task)
    assert isinstance(shouted, Task)
    assert isinstance(spelled, Task)
    assert stats.artifacts[0].parts[0].data == {"words": 2}  # type: ignore[union-attr]
    assert (shouted.text, spelled.text) == ("HEY", "a.b.")


def test_the_card_declares_what_each_skill_produces() -> None:
    card = make_agent().card("http://x")
    modes = {skill.id: (skill.input_modes, skill.output_modes) for skill in card.skills}
    assert modes == {
        "word_stats": ((), ("application/json",)),
        "shout": ((), ()),
        "spell": ((), ()),
        "report": (("text/plain",), ("text/csv",)),
    }
    assert card.skills[0].description == "Counts the words."


def test_a_client_that_takes_only_json_is_served_by_a_json_skill() -> None:
    """R-SEND-9: accepted output modes are checked against the agent's and its skills'."""

    async def scenario(agent: Agent) -> Task | Message:
        service = AgentService(agent.executor(), agent.card("memory://plain"))
        async with Client(InMemoryTransport(service)) as client:
            return await client.send("a b c", accepted_output_modes=["application/json"])

    answered = run(scenario(make_agent()))
    assert isinstance(answered, Task)
    only_text = Agent("Text")
    only_text.skill()(shout)
    with pytest.raises(ContentTypeNotSupportedError):
        run(scenario(only_text))


def test_a_client_without_a_card_says_so() -> None:
    agent = make_agent()
    client = Client(InMemoryTransport(AgentService(agent.executor(), agent.card("memory://"))))
    with pytest.raises(ClientError, match="no agent card"):
        _ = client.card
    client.card = agent.card("memory://given")
    assert client.card.name == "Plain"


def test_a_function_of_the_context_is_left_alone() -> None:
    agent = Agent("Context")

    @agent.skill()
    async def echo(task: TaskContext) -> list[TextPart]:
        return [TextPart(text=task.text)]

    assert agent.card("http://x").skills[0].output_modes == ()
