"""What the client tests send and how they read the answers: unique texts, a message asking
for a skill, a message's text, a send that must answer a Task, a stream read to its end,
and a wait for a condition."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import anyio

from parley.client import Client, ClientStream, StreamItem, user_message
from parley.model import Message, Task, TextPart


def key(prefix: str) -> str:
    """`prefix` made unique: the text of a message whose gates and probes are its own."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def ask(text: str, skill: str, **ids: str) -> Message:
    """A user message asking the agent's `skill`."""
    return user_message(text, metadata={"skill": skill}, **ids)


def text_of(parts: object) -> str:
    assert isinstance(parts, tuple)
    return "".join(p.text for p in parts if isinstance(p, TextPart))


async def task_of(client: Client, message: Message, *, return_immediately: bool = False) -> Task:
    result = await client.send(message, return_immediately=return_immediately)
    assert isinstance(result, Task)
    return result


async def collect(stream: ClientStream) -> list[StreamItem]:
    async with stream:
        return [item async for item in stream]


async def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    with anyio.fail_after(timeout):
        while not check():
            await anyio.sleep(0.005)
