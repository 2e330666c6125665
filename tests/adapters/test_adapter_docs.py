"""The examples of docs/adapters.md run as written: each ```python block (but the one marked
`mypy: skip`, which needs Google ADK) is loaded as a module, and the `agent` it defines is
served by Parley and driven by Parley's client over HTTP."""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Any

import pytest

from parley.client import Client
from parley.model import Message, Task, TaskState
from parley.server.agent import Agent
from tests.adapters.served import on_parley, text

pytestmark = pytest.mark.anyio

PAGE = Path(__file__).parents[2] / "docs" / "adapters.md"
BLOCK = re.compile(r"(<!-- mypy: skip -->\n)?^```python\n(.*?)^```", re.S | re.M)


def examples() -> list[str]:
    return [code for skip, code in BLOCK.findall(PAGE.read_text()) if not skip]


def load(code: str, name: str) -> Agent:
    module = types.ModuleType(name)
    exec(compile(code, f"{PAGE.name}:{name}", "exec"), module.__dict__)
    agent: Any = module.__dict__["agent"]
    assert isinstance(agent, Agent)
    return agent


def answer(task: Task | Message) -> str:
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED, task.status
    return "".join(text(artifact.parts) for artifact in task.artifacts)


def test_the_page_has_its_examples() -> None:
    assert len(examples()) == 4


async def test_the_langgraph_example() -> None:
    agent = load(examples()[0], "greeter")
    async with on_parley(agent) as url, Client.connect(url) as client:
        asked = await client.send("hi")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.INPUT_REQUIRED
        assert asked.status.message is not None
        assert text(asked.status.message.parts) == "What is your name?"
        greeted = await client.send("Ada", task_id=asked.id, context_id=asked.context_id)
        later = await client.send("again", context_id=asked.context_id)
    assert answer(greeted) == "Hello, Ada!"
    assert answer(later) == "You said: hi / again"


async def test_the_pydantic_ai_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # where the second example's history.db goes
    weather = load(examples()[1], "weather")
    cleaner = load(examples()[2], "cleaner")
    remembering = load(examples()[3], "remembering")
    async with on_parley(weather) as url, Client.connect(url) as client:
        said = await client.send("Tomorrow in Paris?")
    assert answer(said) == '{"forecast":"Sunny in a."}'  # TestModel calls every tool
    async with on_parley(cleaner) as url, Client.connect(url) as client:
        asked = await client.send("Clean up")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.INPUT_REQUIRED
        done = await client.send("yes", task_id=asked.id, context_id=asked.context_id)
    assert answer(done) == '{"delete":"Deleted a."}'
    async with on_parley(remembering) as url, Client.connect(url) as client:
        assert answer(await client.send("hello"))
    assert (tmp_path / "history.db").exists()
