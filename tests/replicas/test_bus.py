"""The Redis event bus between replicas (issue: many replicas, one agent): two services
over one store (SQLite file, PostgreSQL schema) and the machine's Redis, each a replica.
A stream opened on one sees the events of a task another runs, in order, to its end;
a resumed subscription replays from the bus what came after its cursor; retention;
Redis unreachable at start, or lost during a stream, gives a clear error."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from parley.model import (
    Role,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import InternalError
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.redis_bus import BusUnavailableError, RedisBus
from parley.server.service import AgentService
from parley.server.stores.base import TaskKey
from parley.server.stores.urls import open_store
from parley.server.task_context import TaskContext
from tests.ports import free_port
from tests.server.support import make_card, run, send

REDIS = "redis://127.0.0.1:6379/0"


class Gates:
    """The agent's steps wait for these (one test at a time)."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.more = asyncio.Event()


def steps_agent(gates: list[Gates]) -> Agent:
    agent = Agent("Replicated")

    @agent.skill()
    async def steps(task: TaskContext) -> AsyncIterator[str]:
        """Two chunks once `go` is set, two more once `more` is, then COMPLETED."""
        await gates[0].go.wait()
        yield "a"
        yield "b"
        await gates[0].more.wait()
        yield "c"
        yield "d"

    return agent


@pytest.fixture
def prefix() -> Iterator[str]:
    name = f"parley-test-{uuid.uuid4().hex[:10]}"
    yield name

    async def clean() -> None:
        client = aioredis.from_url(REDIS)
        keys = [key async for key in client.scan_iter(match=f"{name}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()

    asyncio.run(clean())


@contextlib.asynccontextmanager
async def serving(
    store_url: str, prefix: str, agent: Agent, count: int, **bus: float
) -> AsyncIterator[list[AgentService]]:
    """`count` started services of `agent`, replicas over one store and one bus."""
    services = []
    for _ in range(count):
        tasks, configs = open_store(store_url)
        # Its connections are named by the prefix: a test that kills them kills only its own.
        named = f"{REDIS}?client_name={prefix}"
        broker = RedisBus(named, prefix=prefix, **bus)  # type: ignore[arg-type]
        service = AgentService(
            agent.executor(), make_card(), store=tasks, push_store=configs, broker=broker
        )
        await service.startup()
        services.append(service)
    try:
        yield services
    finally:
        for service in services:
            await service.shutdown()


@contextlib.asynccontextmanager
async def replicas(
    store_url: str, prefix: str, count: int = 2, **bus: float
) -> AsyncIterator[tuple[list[AgentService], list[Gates]]]:
    gates = [Gates()]
    async with serving(store_url, prefix, steps_agent(gates), count, **bus) as services:
        yield services, gates


def describe(events: list[StreamEvent]) -> list[str]:
    out = []
    for event in events:
        if isinstance(event, Task):
            out.append(f"task:{event.status.state.name}")
        elif isinstance(event, TaskArtifactUpdateEvent):
            out.append(
                "chunk:" + "".join(getattr(part, "text", "") for part in event.artifact.parts)
            )
        elif isinstance(event, TaskStatusUpdateEvent):
            out.append(f"status:{event.status.state.name}")
    return out


async def collect(
    stream: AsyncIterator[StreamEvent], into: list[tuple[int | None, StreamEvent]]
) -> None:
    async for event in stream:
        into.append((getattr(stream, "sequence", None), event))


async def started(service: AgentService) -> Task:
    result = await service.send_message(CallContext(), send("go", return_immediately=True))
    assert isinstance(result, Task)
    return result


async def until(predicate: object, what: str, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, f"waited for {what}"
        await asyncio.sleep(0.01)


def test_a_stream_on_one_replica_sees_a_task_run_by_another(durable_url: str, prefix: str) -> None:
    async def main() -> None:
        async with replicas(durable_url, prefix) as ([a, b], gates):
            task = await started(a)
            seen: list[tuple[int | None, StreamEvent]] = []
            stream = b.subscribe_to_task(CallContext(), SubscribeToTaskRequest(id=task.id))
            reader = asyncio.create_task(collect(stream, seen))
            await until(lambda: seen, "the snapshot")
            gates[0].go.set()
            gates[0].more.set()
            await asyncio.wait_for(reader, 10)
            described = describe([event for _, event in seen])
            assert described[0].startswith("task:")  # SUBMITTED or WORKING, then the rest
            assert [each for each in described[1:] if each != "status:WORKING"] == [
                "chunk:a",
                "chunk:b",
                "chunk:c",
                "chunk:d",
                "status:COMPLETED",
            ]
            numbers = [number or 0 for number, _ in seen]
            assert all(numbers)
            assert numbers == sorted(numbers)
            assert len(set(numbers)) == len(numbers)
            stored = await a.store.get(a.store_scope(CallContext()), task.id)
            assert stored is not None
            assert numbers[-1] == stored.version
            assert b.broker.reader_count() == 0  # type: ignore[attr-defined]

    run(main(), timeout=30)


def test_a_streaming_send_gets_its_own_events_through_the_bus(
    durable_url: str, prefix: str
) -> None:
    async def main() -> None:
        async with replicas(durable_url, prefix, count=1) as ([a], gates):
            gates[0].go.set()
            gates[0].more.set()
            events = [event async for event in a.send_streaming_message(CallContext(), send("x"))]
            assert describe(events)[-1] == "status:COMPLETED"
            assert describe(events).count("chunk:a") == 1
            assert len(events) == 7

    run(main(), timeout=30)


def test_a_resumed_subscription_replays_from_the_bus(durable_url: str, prefix: str) -> None:
    """Last-Event-ID on another replica (no replay window there): the events after it, not
    the snapshot; a cursor older than what the bus keeps gets the snapshot."""

    async def main() -> None:
        async with replicas(durable_url, prefix) as ([a, b], gates):
            task = await started(a)
            seen: list[tuple[int | None, StreamEvent]] = []
            watch = a.subscribe_to_task(  # a's own subscription: the numbers
                CallContext(), SubscribeToTaskRequest(id=task.id)
            )
            reader = asyncio.create_task(collect(watch, seen))
            await until(lambda: seen, "the snapshot")  # subscribed before the agent goes on
            gates[0].go.set()
            # "b" is held until the next chunk (to mark the last one): "a" is what comes
            await until(lambda: "chunk:a" in describe([e for _, e in seen]), "the first chunk")
            first = describe([event for _, event in seen]).index("chunk:a")
            cursor = seen[first - 1][0]  # the event before the first chunk
            assert cursor is not None
            resumed = CallContext(resume_after=cursor)
            later: list[tuple[int | None, StreamEvent]] = []
            stream = b.subscribe_to_task(resumed, SubscribeToTaskRequest(id=task.id))
            catching = asyncio.create_task(collect(stream, later))
            await until(lambda: later, "the replayed chunk")
            gates[0].more.set()
            await asyncio.wait_for(asyncio.gather(reader, catching), 10)
            assert describe([event for _, event in later]) == [
                "chunk:a",
                "chunk:b",
                "chunk:c",
                "chunk:d",
                "status:COMPLETED",
            ]
            assert [number for number, _ in later] == [number for number, _ in seen[first:]]

    run(main(), timeout=30)


def test_a_cursor_the_bus_no_longer_holds_gets_the_snapshot(durable_url: str, prefix: str) -> None:
    async def main() -> None:
        async with replicas(durable_url, prefix, max_events=2) as ([a, b], gates):
            task = await started(a)
            gates[0].go.set()
            client = aioredis.from_url(REDIS)
            stream = b.broker.stream((*b.store_scope(CallContext())[:2], task.id))  # type: ignore[attr-defined]
            for _ in range(200):
                if await client.xlen(stream) >= 2:
                    break
                await asyncio.sleep(0.01)
            await client.xtrim(stream, maxlen=1, approximate=False)  # as retention does
            await client.aclose()
            later: list[tuple[int | None, StreamEvent]] = []
            resumed = CallContext(resume_after=1)
            reader = asyncio.create_task(
                collect(b.subscribe_to_task(resumed, SubscribeToTaskRequest(id=task.id)), later)
            )
            await until(lambda: later, "the snapshot")
            assert isinstance(later[0][1], Task)
            gates[0].more.set()
            await asyncio.wait_for(reader, 10)
            assert describe([event for _, event in later])[-1] == "status:COMPLETED"

    run(main(), timeout=30)


def test_a_finished_task_s_stream_expires(durable_url: str, prefix: str) -> None:
    async def main() -> None:
        async with replicas(durable_url, prefix, count=1, retention=30) as ([a], gates):
            gates[0].go.set()
            gates[0].more.set()
            events = [event async for event in a.send_streaming_message(CallContext(), send("x"))]
            task_id = events[0].id  # type: ignore[union-attr]
            client = aioredis.from_url(REDIS)
            key = a.broker.stream((*a.store_scope(CallContext()), task_id))  # type: ignore[attr-defined]
            assert await client.xlen(key) == 7
            assert 0 < await client.ttl(key) <= 30
            await client.aclose()

    run(main(), timeout=30)


def test_an_unreachable_bus_fails_the_start_clearly(durable_url: str) -> None:
    async def main() -> None:
        bus = RedisBus("redis://127.0.0.1:1/0")
        with pytest.raises(BusUnavailableError, match=r"redis://127\.0\.0\.1:1/0 is unreachable"):
            await bus.start()

    run(main())


def test_a_stream_whose_bus_connection_dies_ends_with_a_clear_error(
    durable_url: str, prefix: str
) -> None:
    async def main() -> None:
        async with replicas(durable_url, prefix) as ([a, b], gates):
            task = await started(a)
            seen: list[tuple[int | None, StreamEvent]] = []
            stream = b.subscribe_to_task(CallContext(), SubscribeToTaskRequest(id=task.id))
            reader = asyncio.create_task(collect(stream, seen))
            await until(lambda: seen, "the snapshot")
            admin = aioredis.from_url(REDIS)
            blocked: list[dict[str, str]] = []

            async def reading() -> bool:  # this test's bus, blocked in its read
                clients = await admin.client_list()
                blocked[:] = [
                    c for c in clients if (c.get("name"), c.get("cmd")) == (prefix, "xread")
                ]
                return bool(blocked)

            deadline = asyncio.get_running_loop().time() + 10
            while not await reading():
                assert asyncio.get_running_loop().time() < deadline, "no blocked read"
                await asyncio.sleep(0.01)
            for each in blocked:
                await admin.client_kill_filter(_id=each["id"])
            await admin.aclose()
            with pytest.raises(InternalError, match="event bus is unavailable"):
                await asyncio.wait_for(reader, 10)
            gates[0].go.set()
            gates[0].more.set()

    run(main(), timeout=30)


def test_events_reach_every_replica_in_order_under_concurrency(
    durable_url: str, prefix: str
) -> None:
    """Three replicas, a task on each, every replica subscribed to every task."""

    async def main() -> None:
        async with replicas(durable_url, prefix, count=3) as (services, gates):
            tasks = [await started(service) for service in services]
            seen: dict[tuple[int, int], list[tuple[int | None, StreamEvent]]] = {}
            readers = []
            for watcher, service in enumerate(services):
                for number, task in enumerate(tasks):
                    into = seen[(watcher, number)] = []
                    request = SubscribeToTaskRequest(id=task.id)
                    readers.append(
                        asyncio.create_task(
                            collect(service.subscribe_to_task(CallContext(), request), into)
                        )
                    )
            await until(lambda: all(seen.values()), "every snapshot")
            gates[0].go.set()
            gates[0].more.set()
            await asyncio.wait_for(asyncio.gather(*readers), 15)
            for events in seen.values():
                described = describe([event for _, event in events])
                assert described[-1] == "status:COMPLETED"
                chunks = [each for each in described if each.startswith("chunk:")]
                assert chunks == ["chunk:a", "chunk:b", "chunk:c", "chunk:d"]
                numbers = [number or 0 for number, _ in events]
                assert all(numbers)
                assert numbers == sorted(set(numbers))
            assert {event.status.state for events in seen.values() for _, event in events[-1:]} == {  # type: ignore[union-attr]
                TaskState.COMPLETED
            }

    run(main(), timeout=40)


def sleepy_agent(marks: list[str]) -> Agent:
    agent = Agent("Replicated")

    @agent.skill()
    async def sleepy(task: TaskContext) -> str:
        await task.update("sleeping")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            marks.append(task.task_id)
            raise
        return "woke"

    return agent


@contextlib.asynccontextmanager
async def sleepers(
    store_url: str, prefix: str, count: int = 2
) -> AsyncIterator[tuple[list[AgentService], list[str]]]:
    marks: list[str] = []
    async with serving(store_url, prefix, sleepy_agent(marks), count, lease=1.0) as services:
        yield services, marks


async def reaches(service: AgentService, task_id: str, state: TaskState, tries: int = 500) -> None:
    """Wait until the store holds the task in `state` (`tries` looks, 10 ms apart)."""
    scope = service.store_scope(CallContext())
    for _ in range(tries):
        stored = await service.store.get(scope, task_id)
        if stored is not None and stored.task.status.state is state:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"task {task_id} did not reach {state.name}")


async def working(service: AgentService) -> Task:
    task = await started(service)
    await reaches(service, task.id, TaskState.WORKING)
    return task


async def leases_of(prefix: str) -> list[bytes]:
    client = aioredis.from_url(REDIS)
    members = await client.zrange(f"{prefix}:leases", 0, -1)
    await client.aclose()
    return [member for member in members if isinstance(member, bytes)]


def test_a_dead_replica_s_task_is_failed_once_by_another(durable_url: str, prefix: str) -> None:
    """Replica a dies (its runs stop, its leases are no longer renewed): within the lease
    and a sweep, b fails the task, with the reason, exactly once."""
    from parley.server.failover import REPLICA_LOST  # noqa: PLC0415

    async def main() -> None:
        async with sleepers(durable_url, prefix, count=3) as ([a, b, c], _):
            task = await working(a)
            assert len(await leases_of(prefix)) == 1
            watched: list[tuple[int | None, StreamEvent]] = []
            stream = b.subscribe_to_task(CallContext(), SubscribeToTaskRequest(id=task.id))
            reader = asyncio.create_task(collect(stream, watched))
            a.broker._keeper.cancel()  # type: ignore[attr-defined]  # a dies: no renewals
            await a.runner.shutdown()
            await asyncio.wait_for(reader, 15)
            updates = [e for _, e in watched if isinstance(e, TaskStatusUpdateEvent)]
            failed = [e for e in updates if e.status.state is not TaskState.WORKING]
            assert [e.status.state for e in failed] == [TaskState.FAILED]  # once
            note = failed[0].status.message
            assert note is not None
            assert getattr(note.parts[0], "text", "") == REPLICA_LOST
            stored = await c.store.get(c.store_scope(CallContext()), task.id)
            assert stored is not None
            assert stored.task.status.state is TaskState.FAILED
            assert await leases_of(prefix) == []

    run(main(), timeout=40)


def test_a_resumable_agent_s_task_runs_again_once_on_another_replica(
    durable_url: str, prefix: str
) -> None:
    """`Agent(resumable=True)`: the dead replica's task is not failed but run again from
    its last user message, by one replica, once; the message is not recorded twice."""
    runs: list[str] = []
    agent = Agent("Replicated", resumable=True)

    @agent.skill()
    async def sleepy(task: TaskContext) -> str:
        runs.append(task.text)
        await task.update("sleeping")
        if len(runs) == 1:
            await asyncio.sleep(60)  # the first run: its replica dies meanwhile
        return f"done {task.text}"

    async def main() -> None:
        async with serving(durable_url, prefix, agent, 3, lease=1.0) as [a, _, c]:
            task = await working(a)
            a.broker._keeper.cancel()  # type: ignore[attr-defined]  # a dies
            await a.runner.shutdown()
            await reaches(c, task.id, TaskState.COMPLETED, tries=1500)
            stored = await c.store.get(c.store_scope(CallContext()), task.id)
            assert stored is not None
            assert stored.task.status.state is TaskState.COMPLETED
            parts = stored.task.artifacts[0].parts
            assert [getattr(part, "text", "") for part in parts] == ["done go"]
            users = [m for m in stored.task.history if m.role is Role.USER]
            assert [getattr(m.parts[0], "text", "") for m in users] == ["go"]
            await asyncio.sleep(1.5)  # a later sweep recovers nothing more
            assert runs == ["go", "go"]
            assert await leases_of(prefix) == []

    run(main(), timeout=40)


def test_a_finished_run_lets_go_of_its_lease(durable_url: str, prefix: str) -> None:
    async def main() -> None:
        async with replicas(durable_url, prefix, count=1) as ([a], gates):
            gates[0].go.set()
            gates[0].more.set()
            await a.send_message(CallContext(), send("x"))
            for _ in range(100):
                if not await leases_of(prefix):
                    break
                await asyncio.sleep(0.01)
            assert await leases_of(prefix) == []

    run(main(), timeout=30)


def test_a_cancel_on_another_replica_answers_once_the_run_stopped(
    durable_url: str, prefix: str
) -> None:
    """The cancel, sent to b, returns after a stopped its run (as in one process), and
    a's stopped run lets go of its lease."""
    from parley.model import CancelTaskRequest  # noqa: PLC0415

    async def main() -> None:
        async with sleepers(durable_url, prefix) as ([a, b], marks):
            task = await working(a)
            canceled = await b.cancel_task(CallContext(), CancelTaskRequest(id=task.id))
            assert canceled.status.state is TaskState.CANCELED
            assert marks == [task.id]  # already stopped when the cancel answered
            for _ in range(100):
                if not await leases_of(prefix):
                    break
                await asyncio.sleep(0.01)
            assert await leases_of(prefix) == []
            assert a.runner.live_count() == 0

    run(main(), timeout=30)


def test_a_replica_that_lost_its_lease_stops_its_run(durable_url: str, prefix: str) -> None:
    """a stalls (renews nothing) past its lease while its run goes on: b recovers the
    task; a, renewing again, finds the lease gone and stops its run, writing nothing."""

    async def main() -> None:
        async with sleepers(durable_url, prefix) as ([a, b], marks):
            task = await working(a)
            a.broker._keeper.cancel()  # type: ignore[attr-defined]  # a stalls
            scope = b.store_scope(CallContext())
            stored = None
            for _ in range(1000):
                stored = await b.store.get(scope, task.id)
                if stored is not None and stored.task.status.state is TaskState.FAILED:
                    break
                await asyncio.sleep(0.01)
            assert stored is not None
            assert stored.task.status.state is TaskState.FAILED
            assert marks == []  # a's run still goes on
            await a.broker.leases.renew_held()  # type: ignore[attr-defined]  # a is back
            for _ in range(500):
                if marks:
                    break
                await asyncio.sleep(0.01)
            assert marks == [task.id]
            after = await b.store.get(scope, task.id)
            assert after is not None
            assert after.version == stored.version  # the stopped run wrote nothing

    run(main(), timeout=40)


def test_a_run_goes_on_without_a_lease_when_redis_is_unreachable(
    durable_url: str, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> None:
        async with replicas(durable_url, prefix, count=1) as ([a], gates):
            leases = a.broker.leases  # type: ignore[attr-defined]
            reachable = leases.client
            leases.client = aioredis.from_url("redis://127.0.0.1:1/0")
            gates[0].go.set()
            gates[0].more.set()
            try:
                result = await a.send_message(CallContext(), send("x"))
            finally:
                await leases.client.aclose()
                leases.client = reachable
            assert isinstance(result, Task)
            assert result.status.state is TaskState.COMPLETED

    run(main(), timeout=30)
    assert "runs without a lease" in caplog.text


def test_the_bus_url_sets_the_prefix_and_the_lease() -> None:
    bus = RedisBus(f"{REDIS}?prefix=mine&lease=2.5")
    assert (bus.prefix, bus.lease, bus.url) == ("mine", 2.5, REDIS)
    for wrong in ("lease=soon", "lease=0", "lease=-1"):
        with pytest.raises(ValueError, match="lease"):
            RedisBus(f"{REDIS}?{wrong}")


def test_a_recovery_that_fails_is_tried_again(durable_url: str, prefix: str) -> None:
    """The replica that won a dead replica's lease cannot fail the task (its store is
    down, say): the lease goes back, and a later sweep recovers the task."""

    async def main() -> None:
        async with sleepers(durable_url, prefix) as ([a, b], _):
            task = await working(a)
            recover = b.broker.recover
            tries: list[str] = []

            async def failing_once(key: TaskKey) -> None:
                tries.append(key[2])
                if len(tries) == 1:
                    raise ConnectionError("the store is down")
                await recover(key)

            b.broker.recover = failing_once
            a.broker._keeper.cancel()  # type: ignore[attr-defined]  # a dies
            await a.runner.shutdown()
            scope = b.store_scope(CallContext())
            for _ in range(1000):
                stored = await b.store.get(scope, task.id)
                if stored is not None and stored.task.status.state is TaskState.FAILED:
                    break
                await asyncio.sleep(0.01)
            assert tries[:2] == [task.id, task.id]
            stored = await b.store.get(scope, task.id)
            assert stored is not None
            assert stored.task.status.state is TaskState.FAILED

    run(main(), timeout=40)


def test_a_redis_restart_ends_streams_clearly_and_new_ones_work(
    durable_url: str, tmp_path: Path
) -> None:
    """A Redis of the test's own is killed during a stream and started again (empty, as
    without persistence): the stream ends with the bus error, a blocking send still
    works meanwhile, and a new subscription afterwards gets the snapshot and what
    follows."""
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"

    def redis_server() -> subprocess.Popen[bytes]:
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", str(tmp_path)]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                return server
            time.sleep(0.02)
        raise AssertionError("redis-server did not start")

    async def main() -> None:
        server = redis_server()
        gates = [Gates()]
        tasks, configs = open_store(durable_url)
        service = AgentService(
            steps_agent(gates).executor(),
            make_card(),
            store=tasks,
            push_store=configs,
            broker=RedisBus(url, lease=1.0),
        )
        await service.startup()
        try:
            task = await started(service)
            seen: list[tuple[int | None, StreamEvent]] = []
            stream = service.subscribe_to_task(CallContext(), SubscribeToTaskRequest(id=task.id))
            reader = asyncio.create_task(collect(stream, seen))
            await until(lambda: seen, "the snapshot")
            server.kill()
            server.wait(10)
            with pytest.raises(InternalError, match="event bus is unavailable"):
                await asyncio.wait_for(reader, 20)
            server = redis_server()
            later: list[tuple[int | None, StreamEvent]] = []
            again = service.subscribe_to_task(CallContext(), SubscribeToTaskRequest(id=task.id))
            reader = asyncio.create_task(collect(again, later))
            await until(lambda: later, "the snapshot again")
            assert isinstance(later[0][1], Task)
            gates[0].go.set()
            gates[0].more.set()
            await asyncio.wait_for(reader, 20)
            assert describe([event for _, event in later])[-1] == "status:COMPLETED"
        finally:
            await service.shutdown()
            server.kill()
            server.wait(10)

    run(main(), timeout=60)
