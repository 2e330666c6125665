"""GetTask as a long-poll (`parley.server.long_poll.get_after`, A2A 1.1 draft) over the
in-process broker and a scripted store read: answered at once when the task is past the
client's generation or terminal; else at the next event that moves it past; else, at the
timeout, as it stands. The subscription is the request's: none is left behind however the
poll ends (answered, timed out, failed, cancelled, or the task is unknown)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import cast

import pytest
from msgspec.structs import replace

from parley.model import GetTaskRequest, Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from parley.protocol.errors import TaskNotFoundError, UnavailableError
from parley.server.broker import EventBroker
from parley.server.long_poll import get_after
from parley.server.stores.base import TaskKey
from tests.server.support import run, settle

KEY = cast(TaskKey, ("", "alice", "t-1"))  # the key as the bus carries it
HOUR = 3600.0


def at(generation: int, state: TaskState = TaskState.WORKING) -> Task:
    return Task(id="t-1", context_id="c", status=TaskStatus(state=state), generation=generation)


EVENT = TaskStatusUpdateEvent(
    task_id="t-1", context_id="c", status=TaskStatus(state=TaskState.WORKING)
)


class Store:
    """The task as the store holds it; counts reads."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.reads = 0

    async def read(self) -> Task:
        self.reads += 1
        return self.task


def poll(generation: int | None) -> GetTaskRequest:
    return GetTaskRequest(id="t-1", current_generation=generation)


@pytest.mark.parametrize(
    ("task", "generation"),
    [(at(5), None), (at(5), 4), (at(3, TaskState.COMPLETED), 3), (at(3, TaskState.CANCELED), 9)],
    ids=["no-generation", "ahead", "terminal", "terminal-behind"],
)
def test_answers_at_once_without_waiting(task: Task, generation: int | None) -> None:
    broker, store = EventBroker(), Store(task)
    answer = run(get_after(broker, KEY, poll(generation), store.read, HOUR))
    assert answer is task
    assert store.reads == 1
    assert broker.subscriber_count() == 0


def test_an_event_that_moves_the_task_past_answers_the_poll() -> None:
    broker, store = EventBroker(), Store(at(3))

    async def main() -> Task:
        waiting = asyncio.ensure_future(get_after(broker, KEY, poll(3), store.read, HOUR))
        await settle()
        assert broker.subscriber_count(KEY) == 1  # subscribed before it read
        store.task = at(4)
        broker.publish(KEY, EVENT, sequence=4)
        return await waiting

    assert run(main()) == at(4)
    assert store.reads == 2
    assert broker.subscriber_count() == 0


def test_an_event_that_leaves_it_behind_keeps_it_waiting() -> None:
    """An event of the task wakes the poll; the task read again is still at the client's
    generation (the event was seen by an older read), so it waits for the next one."""
    broker, store = EventBroker(), Store(at(3))

    async def main() -> Task:
        waiting = asyncio.ensure_future(get_after(broker, KEY, poll(3), store.read, HOUR))
        await settle()
        broker.publish(KEY, EVENT, sequence=3)
        await settle()
        assert not waiting.done()
        assert broker.subscriber_count(KEY) == 1  # subscribed again
        store.task = at(5)
        broker.publish(KEY, EVENT, sequence=5)
        return await waiting

    assert run(main()).generation == 5
    assert store.reads == 3


def test_another_tasks_events_do_not_wake_it() -> None:
    broker, store = EventBroker(), Store(at(3))
    other = cast(TaskKey, ("", "alice", "t-2"))

    async def main() -> None:
        waiting = asyncio.ensure_future(get_after(broker, KEY, poll(3), store.read, HOUR))
        await settle()
        broker.publish(other, EVENT, sequence=9)
        broker.publish(
            cast(TaskKey, ("", "bob", "t-1")), EVENT, sequence=9
        )  # same id, other caller
        await settle()
        assert not waiting.done()
        assert store.reads == 1
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    run(main())
    assert broker.subscriber_count() == 0


def test_the_end_of_the_tasks_stream_answers_with_the_task_read_again() -> None:
    """An interrupted or terminal update ends the subscription: the poll reads once more."""
    broker, store = EventBroker(), Store(at(3))

    async def main() -> Task:
        waiting = asyncio.ensure_future(get_after(broker, KEY, poll(3), store.read, HOUR))
        await settle()
        store.task = at(4, TaskState.INPUT_REQUIRED)
        broker.publish(KEY, EVENT, final=True, sequence=4)
        return await waiting

    assert run(main()).status.state is TaskState.INPUT_REQUIRED


@pytest.mark.parametrize("timeout", [0.0, -1.0, 0.002])
def test_at_the_timeout_the_task_is_answered_as_it_stands(timeout: float) -> None:
    broker, store = EventBroker(), Store(at(3))
    answer = run(get_after(broker, KEY, poll(3), store.read, timeout))
    assert answer == at(3)
    assert store.reads == 2
    assert broker.subscriber_count() == 0


def test_a_failed_subscription_answers_the_task_as_it_stands() -> None:
    """The bus going away is not the client's error: it gets the task it can have."""
    broker, store = EventBroker(), Store(at(3))

    async def main() -> Task:
        waiting = asyncio.ensure_future(get_after(broker, KEY, poll(3), store.read, HOUR))
        await settle()
        [subscription] = broker._subscribers[KEY]
        subscription.fail(UnavailableError("bus down"))
        return await waiting

    assert run(main()) == at(3)
    assert broker.subscriber_count() == 0


def test_an_unknown_task_is_the_reads_error_and_leaves_no_subscription() -> None:
    broker = EventBroker()

    async def missing() -> Task:
        raise TaskNotFoundError("no t-1")

    with pytest.raises(TaskNotFoundError):
        run(get_after(broker, KEY, poll(1), missing, HOUR))
    assert broker.subscriber_count() == 0


def test_a_cancelled_poll_unsubscribes() -> None:
    """The client went away: its request's subscription goes with it."""
    broker, store = EventBroker(), Store(at(3))

    async def main() -> None:
        waiting = asyncio.ensure_future(get_after(broker, KEY, poll(3), store.read, HOUR))
        await settle()
        assert broker.subscriber_count(KEY) == 1
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    run(main())
    assert broker.subscriber_count() == 0


def test_many_polls_of_one_task_are_answered_by_one_event() -> None:
    broker, store = EventBroker(), Store(at(3))

    def polls() -> Iterator[asyncio.Future[Task]]:
        for _ in range(5):
            yield asyncio.ensure_future(get_after(broker, KEY, poll(3), store.read, HOUR))

    async def main() -> list[Task]:
        waiting = list(polls())
        await settle()
        assert broker.subscriber_count(KEY) == 5
        store.task = replace(at(4), context_id="c")
        broker.publish(KEY, EVENT, sequence=4)
        return list(await asyncio.gather(*waiting))

    assert [task.generation for task in run(main())] == [4] * 5
    assert broker.subscriber_count() == 0
