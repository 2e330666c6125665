"""GetTask as a long-poll (A2A 1.1 draft, `currentGeneration`): answered at once when the
task is past that generation (or terminal), else once an event of the task arrives and
the task read again is past it, or at the server's timeout with the task as it stands.

Waiting is a broker subscription to the task, taken before the store is read, so an
event committed between the read and the wait is not missed; with the Redis bus it
wakes on another replica's events too. The subscription is the request's: closed when
it returns or is cancelled (the client went away).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from parley.model import GetTaskRequest, Task
from parley.protocol import generations
from parley.protocol.errors import A2AError
from parley.server.broker import Broker, Subscription
from parley.server.stores.base import TaskKey

DEFAULT_TIMEOUT = 30.0
"""Seconds a long-poll is held at most (the draft leaves the timeout to the server)."""

Read = Callable[[], Awaitable[Task]]


async def get_after(
    broker: Broker, key: TaskKey, request: GetTaskRequest, read: Read, timeout: float
) -> Task:
    """The task once `generations.answers_now` (`read` loads it; it raises for an unknown
    task), or as it stands after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        events = broker.subscribe(key)
        try:
            task = await read()
            if generations.answers_now(task, request.current_generation):
                return task
            if not await _next(events, deadline - loop.time()):
                return await read()
        finally:
            events.close()


async def _next(events: Subscription, remaining: float) -> bool:
    """Whether an event of the task came (or its subscription ended: an interrupted or
    terminal state ends it) before `remaining` seconds passed."""
    if remaining <= 0:
        return False
    try:
        async with asyncio.timeout(remaining):
            await anext(events, None)
    except (TimeoutError, A2AError):  # A2AError: the bus failed it; answer as it stands
        return False
    return True
