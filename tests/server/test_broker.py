"""`EventBroker`: per-task ordered fan-out, closure on a final event, bounded buffers
(a subscriber that falls behind is dropped with InternalError), `subscriber_count()`
(R-STREAM-6..10)."""

from __future__ import annotations

import asyncio

import pytest

from parley.model import (
    StreamEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import InternalError
from parley.server.broker import EventBroker, Subscription
from parley.server.stores.base import TaskKey
from tests.server.support import run

KEY = TaskKey("", "alice", "t1")
OTHER = TaskKey("", "alice", "t2")
OTHER_CALLER = TaskKey("", "bob", "t1")


def event(number: int, state: TaskState = TaskState.WORKING) -> StreamEvent:
    return TaskStatusUpdateEvent(
        task_id="t1",
        context_id="c",
        status=TaskStatus(state=state),
        metadata={"n": number},
    )


def numbers(events: list[StreamEvent]) -> list[object]:
    out: list[object] = []
    for item in events:
        assert isinstance(item, TaskStatusUpdateEvent)
        assert item.metadata is not None
        out.append(item.metadata["n"])
    return out


async def drain(subscription: Subscription) -> list[StreamEvent]:
    return [item async for item in subscription]


def test_every_subscriber_gets_every_event_in_order() -> None:
    """R-STREAM-6/8/9."""

    async def main() -> None:
        broker = EventBroker()
        first, second = broker.subscribe(KEY), broker.subscribe(KEY)
        for number in range(5):
            broker.deliver(KEY, event(number))
        broker.deliver(KEY, event(5, TaskState.COMPLETED), final=True)
        assert numbers(await drain(first)) == [0, 1, 2, 3, 4, 5]
        assert numbers(await drain(second)) == [0, 1, 2, 3, 4, 5]

    run(main())


def test_a_subscriber_waits_for_the_next_event() -> None:
    async def main() -> None:
        broker = EventBroker()
        subscription = broker.subscribe(KEY)
        pending = asyncio.ensure_future(anext(subscription))
        await asyncio.sleep(0)
        assert not pending.done()
        broker.deliver(KEY, event(1))
        assert numbers([await pending]) == [1]

    run(main())


def test_a_wait_cancelled_leaves_the_subscription_whole() -> None:
    """A consumer whose wait was cancelled (the client left mid-wait, a timeout) waits
    again and gets the next event; a failure wakes a waiting consumer."""

    async def main() -> None:
        broker = EventBroker()
        subscription = broker.subscribe(KEY)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(subscription), 0)
        pending = asyncio.ensure_future(anext(subscription))
        await asyncio.sleep(0)
        broker.deliver(KEY, event(1))
        assert numbers([await pending]) == [1]
        pending = asyncio.ensure_future(anext(subscription))
        await asyncio.sleep(0)
        subscription.fail(InternalError("the bus is gone"))
        with pytest.raises(InternalError, match="the bus is gone"):
            await pending

    run(main())


def test_a_final_event_is_delivered_then_closes_every_subscription_of_the_task() -> None:
    async def main() -> None:
        broker = EventBroker()
        subscriptions = [broker.subscribe(KEY) for _ in range(3)]
        bystander = broker.subscribe(OTHER)
        assert broker.subscriber_count() == 4
        assert broker.subscriber_count(KEY) == 3
        broker.deliver(KEY, event(1, TaskState.INPUT_REQUIRED), final=True)
        assert broker.subscriber_count(KEY) == 0
        assert broker.subscriber_count() == 1
        for subscription in subscriptions:
            assert numbers(await drain(subscription)) == [1]
        broker.deliver(OTHER, event(2), final=True)
        assert numbers(await drain(bystander)) == [2]
        assert broker.subscriber_count() == 0

    run(main())


def test_tasks_and_scopes_are_separate_streams() -> None:
    async def main() -> None:
        broker = EventBroker()
        mine, other_task, other_caller = (
            broker.subscribe(KEY),
            broker.subscribe(OTHER),
            broker.subscribe(OTHER_CALLER),
        )
        broker.deliver(KEY, event(1), final=True)
        assert numbers(await drain(mine)) == [1]
        assert broker.subscriber_count(OTHER) == 1
        assert broker.subscriber_count(OTHER_CALLER) == 1
        other_task.close()
        other_caller.close()
        assert broker.subscriber_count() == 0

    run(main())


def test_publishing_without_subscribers_is_a_no_op() -> None:
    broker = EventBroker()
    broker.deliver(KEY, event(1))
    broker.deliver(KEY, event(2), final=True)
    assert broker.subscriber_count() == 0


def test_close_is_idempotent_and_leaves_the_others() -> None:
    """R-STREAM-10: closing one subscription does not affect another."""

    async def main() -> None:
        broker = EventBroker()
        leaving, staying = broker.subscribe(KEY), broker.subscribe(KEY)
        broker.deliver(KEY, event(1))
        leaving.close()
        leaving.close()
        assert broker.subscriber_count(KEY) == 1
        broker.deliver(KEY, event(2), final=True)
        assert numbers(await drain(staying)) == [1, 2]
        assert broker.subscriber_count() == 0

    run(main())


def test_a_subscriber_that_falls_behind_is_dropped_with_an_internal_error() -> None:
    """A full buffer drops the subscriber (its buffered events too) and ends its stream
    with InternalError naming the task; other subscribers go on."""

    async def main() -> None:
        broker = EventBroker(buffer_size=2)
        slow, fast = broker.subscribe(KEY), broker.subscribe(KEY)
        received: list[StreamEvent] = []
        for number in range(4):
            broker.deliver(KEY, event(number))
            received.append(await anext(fast))
        assert slow.dropped
        assert not fast.dropped
        assert broker.subscriber_count(KEY) == 1
        with pytest.raises(InternalError) as caught:
            await anext(slow)
        assert caught.value.metadata == {"taskId": "t1"}
        broker.deliver(KEY, event(4), final=True)
        received += await drain(fast)
        assert numbers(received) == [0, 1, 2, 3, 4]

    run(main())


def test_a_final_event_that_fills_the_buffer_still_ends_the_stream_cleanly() -> None:
    async def main() -> None:
        broker = EventBroker(buffer_size=2)
        subscription = broker.subscribe(KEY)
        broker.deliver(KEY, event(1))
        broker.deliver(KEY, event(2, TaskState.COMPLETED), final=True)
        assert numbers(await drain(subscription)) == [1, 2]
        assert not subscription.dropped

    run(main())


def test_a_final_event_that_overflows_the_buffer_drops_the_subscriber() -> None:
    async def main() -> None:
        broker = EventBroker(buffer_size=1)
        subscription = broker.subscribe(KEY)
        broker.deliver(KEY, event(1))
        broker.deliver(KEY, event(2, TaskState.COMPLETED), final=True)
        with pytest.raises(InternalError):
            await anext(subscription)
        assert broker.subscriber_count() == 0

    run(main())


def test_an_ended_subscription_stays_ended() -> None:
    async def main() -> None:
        broker = EventBroker()
        subscription = broker.subscribe(KEY)
        broker.deliver(KEY, event(1), final=True)
        assert numbers(await drain(subscription)) == [1]
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(anext(subscription), 0.1)

    run(main())


def test_an_event_reaching_a_subscription_twice_is_seen_once() -> None:
    """An event published here and read back from a bus reaches a subscription twice: by
    sequence number, what is not above the last taken is dropped (also the head's and
    what came before `after`); events without a number (a direct reply) always pass."""

    async def main() -> None:
        broker = EventBroker()
        plain = broker.subscribe(KEY)
        headed = broker.subscribe(KEY, ((3, event(3)),))
        late = broker.subscribe(KEY, after=4)
        for number in (2, 3, 3, 4, 2, 5, 5):
            broker.deliver(KEY, event(number), sequence=number)
        broker.deliver(KEY, event(6, TaskState.COMPLETED), final=True, sequence=6)
        assert numbers(await drain(plain)) == [2, 3, 4, 5, 6]
        assert numbers(await drain(headed)) == [3, 4, 5, 6]
        assert numbers(await drain(late)) == [5, 6]
        unnumbered = broker.subscribe(KEY, after=9)
        broker.deliver(KEY, event(1))
        broker.deliver(KEY, event(1), final=True)
        assert numbers(await drain(unnumbered)) == [1, 1]

    run(main())
