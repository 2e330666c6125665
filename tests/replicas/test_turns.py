"""Follow-ups across replicas (issue: many replicas, one agent, "a follow-up message that
lands on any replica reaches the task's run"): an agent function suspended in
`task.ask()` on one replica resumes, in the same coroutine, when the reply lands on
another; blocking and streaming follow-ups; a cancel elsewhere stops the suspended
function; errors come back as the holder raised them; a holder that is gone leaves the
follow-up to run where it landed, as after a restart."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
import redis.asyncio as aioredis

from parley.model import CancelTaskRequest, Task, TaskState, TaskStatusUpdateEvent, TextPart
from parley.protocol.errors import PermissionDeniedError
from parley.server.agent import Agent, FunctionExecutor
from parley.server.broker import Turn
from parley.server.context import CallContext
from parley.server.redis_bus import RedisBus
from parley.server.service import AgentService
from parley.server.stores.base import TaskKey
from parley.server.task_context import TaskContext
from tests.replicas.test_bus import REDIS, describe, prefix, reaches, serving, until
from tests.server.support import run, send

__all__ = ["prefix"]  # fixture: a bus prefix, cleaned


@dataclass
class Marks:
    starts: dict[str, int] = field(default_factory=dict)
    cancelled: list[str] = field(default_factory=list)


def asking_agent(marks: Marks) -> Agent:
    agent = Agent("Replicated")

    @agent.skill()
    async def ask(task: TaskContext) -> str:
        """Ask for a name, then for a greeting (unless the name is "short"): "<greeting>
        <name>". Counts its starts; a cancel while it waits is marked."""
        marks.starts[task.task_id] = marks.starts.get(task.task_id, 0) + 1
        try:
            name = (await task.ask("Who is there?")).parts[0]
            assert isinstance(name, TextPart)
            if name.text == "short":
                return "hello short"
            greeting = (await task.ask("Which greeting?")).parts[0]
            assert isinstance(greeting, TextPart)
        except asyncio.CancelledError:
            marks.cancelled.append(task.task_id)
            raise
        return f"{greeting.text} {name.text}"

    return agent


@contextlib.asynccontextmanager
async def askers(store_url: str, prefix: str) -> AsyncIterator[tuple[list[AgentService], Marks]]:
    marks = Marks()
    async with serving(store_url, prefix, asking_agent(marks), 3) as services:
        yield services, marks


async def blocking(service: AgentService, text: str, task_id: str = "") -> Task:
    result = await service.send_message(CallContext(), send(text, task_id=task_id))
    assert isinstance(result, Task)
    return result


def sessions(service: AgentService) -> int:
    executor = service.runner.executor
    assert isinstance(executor, FunctionExecutor)
    return executor.session_count()


def answer(task: Task) -> str:
    return "".join(getattr(part, "text", "") for a in task.artifacts for part in a.parts)


def test_a_reply_on_another_replica_resumes_the_suspended_function(
    durable_url: str, prefix: str
) -> None:
    async def main() -> None:
        async with askers(durable_url, prefix) as ([a, b, c], marks):
            asked = await blocking(a, "hi")
            assert asked.status.state is TaskState.INPUT_REQUIRED
            assert (sessions(a), sessions(b)) == (1, 0)
            second = await blocking(b, "Ada", asked.id)  # taken by a, answered here
            assert second.status.state is TaskState.INPUT_REQUIRED
            done = await blocking(c, "hello", asked.id)
            assert done.status.state is TaskState.COMPLETED
            assert answer(done) == "hello Ada"
            assert marks.starts == {asked.id: 1}  # one coroutine, resumed twice
            assert [sessions(s) for s in (a, b, c)] == [0, 0, 0]
            texts = [getattr(m.parts[0], "text", "") for m in done.history if m.role.value]
            assert texts.count("Ada") == 1
            assert texts.count("hello") == 1

    run(main(), timeout=40)


def test_a_streaming_reply_on_another_replica_streams_the_resumed_run(
    durable_url: str, prefix: str
) -> None:
    async def main() -> None:
        async with askers(durable_url, prefix) as ([a, b, _], marks):
            asked = await blocking(a, "hi")
            stream = b.send_streaming_message(CallContext(), send("Ada", task_id=asked.id))
            events = [event async for event in stream]
            assert describe(events) == [
                "task:INPUT_REQUIRED",  # as the message left it
                "status:WORKING",
                "status:INPUT_REQUIRED",  # the second question, from a
            ]
            first = events[0]
            assert isinstance(first, Task)
            assert getattr(first.history[-1].parts[0], "text", "") == "Ada"
            last = events[-1]
            assert isinstance(last, TaskStatusUpdateEvent)
            assert last.status.message is not None
            assert getattr(last.status.message.parts[0], "text", "") == "Which greeting?"
            assert marks.starts == {asked.id: 1}
            await until(lambda: b.broker.subscriber_count() == 0, "the stream to close")

    run(main(), timeout=40)


def test_a_non_blocking_reply_elsewhere_answers_with_the_task_as_the_message_left_it(
    durable_url: str, prefix: str
) -> None:
    async def main() -> None:
        async with askers(durable_url, prefix) as ([a, b, _], marks):
            asked = await blocking(a, "hi")
            request = send("short", task_id=asked.id, return_immediately=True)
            result = await b.send_message(CallContext(), request)
            assert isinstance(result, Task)
            assert result.status.state is TaskState.INPUT_REQUIRED
            assert getattr(result.history[-1].parts[0], "text", "") == "short"
            await reaches(b, asked.id, TaskState.COMPLETED)
            stored = await b.store.get(b.store_scope(CallContext()), asked.id)
            assert stored is not None
            assert answer(stored.task) == "hello short"
            assert marks.starts == {asked.id: 1}

    run(main(), timeout=40)


def test_a_cancel_on_another_replica_stops_the_suspended_function(
    durable_url: str, prefix: str
) -> None:
    async def main() -> None:
        async with askers(durable_url, prefix) as ([a, b, _], marks):
            asked = await blocking(a, "hi")
            canceled = await b.cancel_task(CallContext(), CancelTaskRequest(id=asked.id))
            assert canceled.status.state is TaskState.CANCELED
            await until(lambda: marks.cancelled == [asked.id], "the function to be cancelled")
            await until(lambda: sessions(a) == 0, "the session to end")

    run(main(), timeout=40)


def test_the_holder_s_error_comes_back_as_raised(durable_url: str, prefix: str) -> None:
    async def main() -> None:
        async with askers(durable_url, prefix) as ([a, b, _], _marks):
            asked = await blocking(a, "hi")

            async def refuse(key: TaskKey, request: object, ctx: CallContext) -> Turn:
                raise PermissionDeniedError("This skill needs the scopes: admin")

            assert isinstance(a.broker, RedisBus)
            assert a.broker.turns is not None
            a.broker.turns.takes = refuse
            with pytest.raises(PermissionDeniedError) as raised:
                await blocking(b, "Ada", asked.id)
            assert raised.value.message == "This skill needs the scopes: admin"

    run(main(), timeout=40)


def test_a_reply_whose_holder_is_gone_runs_where_it_landed(durable_url: str, prefix: str) -> None:
    """The holder stopped (its channel has no listener): the follow-up starts the agent
    again where it landed, as a single server does after a restart, and the record goes."""

    async def main() -> None:
        async with askers(durable_url, prefix) as ([a, b, _], marks):
            asked = await blocking(a, "hi")
            client = aioredis.from_url(REDIS)
            try:
                assert len([k async for k in client.scan_iter(match=f"{prefix}:turns:*")]) == 1
                await a.broker.stop()  # a is gone from the bus
                again = await blocking(b, "Ada", asked.id)
                assert again.status.state is TaskState.INPUT_REQUIRED  # asked anew, on b
                assert marks.starts == {asked.id: 2}
                assert sessions(b) == 1
                records = [k async for k in client.scan_iter(match=f"{prefix}:turns:*")]
                assert len(records) == 1  # b's own record now
                assert isinstance(b.broker, RedisBus)
                assert b.broker.turns is not None
                assert await client.get(records[0]) == b.broker.turns.replica.encode()
            finally:
                await client.aclose()

    run(main(), timeout=40)
