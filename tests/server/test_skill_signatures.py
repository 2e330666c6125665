"""What `Agent.skill` reads from a function's signature (`parley.server.skills`), function
by function: which take the message's text (exactly one parameter annotated `str`) and
keep their name, doc and kind (async, generator); which return annotations declare JSON
output (a mapping, or a list of anything but parts); and that a signature or annotation
that cannot be read leaves the function as it is. The agent-level behaviour is
tests/server/test_skills."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Mapping
from typing import Any, Optional

import pytest

from parley.model import DataPart, Role, TaskState, TextPart, UrlPart
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.execution import RequestContext
from parley.server.skills import JSON_MODE, declared_output_modes, taking_text
from parley.server.task_context import TaskContext
from tests.server.support import ALICE, as_task, run, send, serve, user


class Sink:
    async def emit(self, event: object) -> None:
        pass


def context(text: str = "hello") -> TaskContext:
    return TaskContext(RequestContext(user(text), "t", "c", CallContext()), Sink())


def shout(text: str) -> str:
    """Shouts."""
    return text.upper()


async def later(text: str) -> str:
    return text[::-1]


async def chunks(text: str) -> AsyncIterator[str]:
    for word in text.split():
        yield word


def test_a_function_of_text_is_called_with_the_messages_text() -> None:
    skill: Any = taking_text(shout)
    assert skill is not shout
    assert skill(context("hi there")) == "HI THERE"
    assert (skill.__name__, skill.__doc__) == ("shout", "Shouts.")


def test_an_async_function_of_text_stays_awaitable() -> None:
    result = taking_text(later)(context("abc"))
    assert inspect.iscoroutine(result)
    assert run(result) == "cba"


def test_a_generator_of_text_stays_a_generator() -> None:
    produced = taking_text(chunks)(context("a b c"))
    assert inspect.isasyncgen(produced)

    async def drain() -> list[object]:
        return [each async for each in produced]

    assert run(drain()) == ["a", "b", "c"]


def untyped(text):  # type: ignore[no-untyped-def]
    return text


def two(text: str, more: str) -> str:
    return text + more


def of_context(task: TaskContext) -> str:
    return task.text


def of_bytes(data: bytes) -> bytes:
    return data


def unresolvable(text: NoSuchName) -> str:  # type: ignore[name-defined]  # noqa: F821
    return str(text)


@pytest.mark.parametrize(
    "function",
    [untyped, two, of_context, of_bytes, unresolvable, print, len],
    ids=["untyped", "two-parameters", "context", "bytes", "unresolvable", "builtin", "len"],
)
def test_anything_else_is_left_as_it_is(function: Any) -> None:
    """Only one parameter annotated `str` marks a function of text; a signature or an
    annotation that cannot be read changes nothing."""
    assert taking_text(function) is function


class Doubler:
    def __call__(self, text: str) -> str:
        return text * 2


def test_a_callable_object_of_text_is_wrapped_and_named_generically() -> None:
    skill = taking_text(Doubler())
    assert skill(context("ab")) == "abab"
    assert skill.__name__ == "skill"


def returning_dict() -> dict[str, int]:
    return {}


def returning_mapping() -> Mapping[str, Any]:
    return {}


def returning_list() -> list[int]:
    return []


def returning_bare_list() -> list:  # type: ignore[type-arg]
    return []


def returning_parts() -> list[TextPart]:
    return []


def returning_mixed_parts() -> list[TextPart | DataPart | UrlPart]:
    return []


def returning_parts_and_data() -> list[TextPart | int]:
    return []


def returning_text() -> str:
    return ""


def returning_optional() -> Optional[dict[str, int]]:  # noqa: UP045 - the spelling under test
    return None


def returning_nothing_said():  # type: ignore[no-untyped-def]
    return None


def returning_unknown() -> Nowhere:  # type: ignore[name-defined]  # noqa: F821
    return None


@pytest.mark.parametrize(
    ("function", "modes"),
    [
        (returning_dict, (JSON_MODE,)),
        (returning_mapping, (JSON_MODE,)),
        (returning_list, (JSON_MODE,)),
        (returning_bare_list, (JSON_MODE,)),
        (returning_parts, ()),
        (returning_mixed_parts, ()),
        (returning_parts_and_data, (JSON_MODE,)),
        (returning_text, ()),
        (returning_optional, ()),
        (returning_nothing_said, ()),
        (returning_unknown, ()),
    ],
    ids=lambda value: getattr(value, "__name__", repr(value)),
)
def test_declared_output_modes(function: Any, modes: tuple[str, ...]) -> None:
    """JSON for what becomes a data part; the agent's defaults for text and parts."""
    assert declared_output_modes(function) == modes


def test_the_role_of_a_shouted_reply_is_the_agents() -> None:
    """A function of text answers through the same TaskContext: its reply is the agent's."""
    task = context("hey")
    assert task.reply(taking_text(shout)(task)).role is Role.AGENT


class Producing:
    def __call__(self, task: TaskContext) -> dict[str, int]:
        return {"n": 1}


def test_a_callable_objects_return_annotation_is_read_too() -> None:
    producing = Producing()
    assert declared_output_modes(producing) == (JSON_MODE,)
    assert taking_text(producing) is producing  # it takes the context


def test_a_callable_object_of_text_serves_as_a_skill() -> None:
    """Its `__call__`'s annotations are read as a function's are: before, the object was
    called with the TaskContext and failed the task."""
    agent = Agent("Doubler")
    agent.skill("double")(Doubler())
    service, _ = serve(agent)
    task = as_task(run(service.send_message(ALICE, send("ab"))))
    assert task.status.state is TaskState.COMPLETED
    assert task.text == "abab"
