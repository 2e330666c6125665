"""Following a task to the end of its turn (terminal, or interrupted: input or
authorization required): `Client.wait`, and what a blocking send does when the server
answered before that (a SUBMITTED or WORKING Task, as some servers do) or when its
request timed out on a task whose id the client knows (a follow-up).

It subscribes (SubscribeToTask, resumed after drops by `ClientStream`) when the agent's
card declares streaming, else polls GetTask with backoff (0.2 s, growing by half, at most
5 s); the task as GetTask returns it at the end is the answer. In a version whose tasks
carry generations (the A2A 1.1 draft) it long-polls instead: GetTask with the generation
it holds, which the server answers once the task moves (backoff only after a call that
came back with nothing new). A hard `deadline` bounds
the whole wait and raises `ClientTimeoutError` carrying the task id.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from parley.client.errors import ClientError, ClientTimeoutError
from parley.client.retry import RetryPolicy
from parley.client.transport import DEFAULT, Timeout
from parley.model import SendMessageResult, Task, TaskStatusUpdateEvent
from parley.protocol import lifecycle
from parley.protocol.errors import UnsupportedOperationError
from parley.protocol.negotiation import NUMBERED_VERSIONS

if TYPE_CHECKING:
    from parley.client.client import Client

POLLING = RetryPolicy(attempts=0, backoff=0.2, multiplier=1.5, max_backoff=5.0)
"""The pauses between two GetTask calls of a wait that polls (`delay(n)`)."""
LONG_POLL = 90.0
"""The request timeout of a long-polling GetTask: above what a server holds one (30 s for
Parley); the wait's own `deadline` bounds the whole."""


def turn_ended(item: Task | TaskStatusUpdateEvent) -> bool:
    """Whether a blocking send would have answered with the task in this state: terminal
    or interrupted."""
    return lifecycle.ends_blocking_send(item.status.state)


@asynccontextmanager
async def deadline_of(seconds: float | None, task_id: Callable[[], str]) -> AsyncIterator[None]:
    """Bound the block by `seconds` (None: no bound); past it, ClientTimeoutError with the
    task id known by then (`task_id()`, "" if none)."""
    if seconds is None:
        yield
        return
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError:
        known = task_id()
        about = f"; task {known} is still running" if known else ""
        raise ClientTimeoutError(
            f"No answer within the deadline of {seconds:g} s{about}", task_id=known
        ) from None


def _streams(client: Client) -> bool:
    try:
        card = client.card
    except ClientError:  # a client made without a card
        return False
    return card is not None and bool(card.capabilities.streaming)


async def wait(
    client: Client,
    task: Task | str,
    *,
    history_length: int | None = None,
    deadline: float | None = None,
    extensions: Sequence[str] = (),
) -> Task:
    """The task once its turn has ended (`Client.wait`)."""
    task_id = task if isinstance(task, str) else task.id
    async with deadline_of(deadline, lambda: task_id):
        if _streams(client) and client.version not in NUMBERED_VERSIONS:
            await _subscribed(client, task_id, extensions)
        else:
            return await _polled(client, task_id, history_length, extensions)
        return await client.get_task(task_id, history_length=history_length, extensions=extensions)


async def _subscribed(client: Client, task_id: str, extensions: Sequence[str]) -> None:
    """Until the task's stream reaches the end of its turn, or ends."""
    try:
        async with client.subscribe(task_id, extensions=extensions) as stream:
            async for item in stream:
                if isinstance(item, Task | TaskStatusUpdateEvent) and turn_ended(item):
                    return
    except UnsupportedOperationError:
        return  # terminal already: nothing to subscribe to (GetTask tells how it ended)


async def _polled(
    client: Client, task_id: str, history_length: int | None, extensions: Sequence[str]
) -> Task:
    """GetTask until the turn ends: a long-poll where the version numbers tasks (and the
    task is numbered), else every so often."""
    numbered = client.version in NUMBERED_VERSIONS

    async def get(after: int) -> Task:
        return await client.get_task(
            task_id,
            history_length=history_length,
            current_generation=after or None,
            extensions=extensions,
            timeout=LONG_POLL if after else DEFAULT,
        )

    task = await get(0)
    idle = 0 if numbered and task.generation else 1
    while not turn_ended(task):
        if idle:  # the last call brought nothing new
            await asyncio.sleep(POLLING.delay(idle))
        before = task.generation if numbered else 0
        task = await get(before)
        idle = 0 if before and task.generation > before else idle + 1
    return task


async def sent(
    client: Client,
    send: Callable[[Timeout], Awaitable[SendMessageResult]],
    *,
    task_id: str,
    blocking: bool,
    timeout: Timeout,
    deadline: float | None,
    history_length: int | None,
    extensions: Sequence[str],
) -> SendMessageResult:
    """`send` (SendMessage, given its request timeout), then, for a blocking send, the task
    followed to the end of its turn when the answer came before it, or when the request
    timed out on a follow-up (whose task id the client knows) — unless a `deadline` was
    given: it bounds the whole (by default the request has no timeout of its own then),
    and its error carries the task id when known."""
    follow = _Follow(client, task_id, blocking, history_length, extensions)
    if deadline is None:
        return await follow.sent(send, timeout, soft=True)
    async with deadline_of(deadline, lambda: follow.task_id):
        return await follow.sent(send, None if timeout is DEFAULT else timeout, soft=False)


class _Follow:
    """One send and what follows it; `task_id` is the task's once known."""

    def __init__(
        self,
        client: Client,
        task_id: str,
        blocking: bool,
        history_length: int | None,
        extensions: Sequence[str],
    ) -> None:
        self.client = client
        self.task_id = task_id
        self.blocking = blocking
        self.history_length = history_length
        self.extensions = extensions

    async def sent(
        self, send: Callable[[Timeout], Awaitable[SendMessageResult]], timeout: Timeout, soft: bool
    ) -> SendMessageResult:
        try:
            result = await send(timeout)
        except ClientTimeoutError as error:
            error.task_id = error.task_id or self.task_id
            if not (soft and self.blocking and self.task_id):
                raise
            return await self.followed(self.task_id)  # the follow-up's task, past the timeout
        if not isinstance(result, Task) or not self.blocking or turn_ended(result):
            return result
        self.task_id = result.id
        return await self.followed(result)

    async def followed(self, task: Task | str) -> Task:
        return await wait(
            self.client, task, history_length=self.history_length, extensions=self.extensions
        )
