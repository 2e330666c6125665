"""Push delivery when receivers refuse, on each store backend: 410 Gone deletes the config
and buries what waited for it; other 4xx are retried `client_errors` times in all, 5xx to
the end of the schedule, then the notification is dead with its reason and the queue moves
on; a slow receiver holds up no other; a deleted config gets nothing more; a name that
resolves to a refused address is dead without a connection."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest

from parley.model import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
)
from parley.protocol.errors import TaskNotFoundError
from parley.server.push.delivery import PushSettings
from parley.server.push.ssrf import Allow, Resolver
from parley.server.service import AgentService
from tests.ports import free_port
from tests.push.receiver import Receiver, Reply
from tests.push.support import (
    CTX,
    Gated,
    config,
    dead,
    fast,
    finished,
    in_order,
    outbox,
    pending,
    run,
    serving,
    start_task,
    until,
    worker,
)


def test_gone_deletes_the_config_and_buries_what_waited(store_url: str) -> None:
    """The first notification is held at the receiver while the task records three more;
    then 410: the config is deleted, all four are dead (the reason kept), another config of
    the task gets its notifications, and no request reaches the gone receiver again, not
    even when the dead notifications are requeued."""

    async def scenario() -> None:
        gated = Gated()
        release = asyncio.Event()
        async with (
            Receiver([Reply(410, b"unsubscribed", gate=release)]) as gone,
            Receiver() as other,
            serving(store_url, gated.agent, fast(timeout=3.0)) as service,
        ):
            task = await start_task(service, config(gone.url(), id="gone"))
            kept = config(other.url(), id="kept", task_id=task.id)
            await service.create_task_push_notification_config(CTX, kept)
            await until(service, lambda: len(gone.requests) == 1, what="the first attempt")
            gated.go.set()
            await until(service, lambda: finished(service, task.id))
            waiting = await pending(service, "gone")
            assert len(waiting) == 4
            release.set()

            async def settled() -> bool:
                return len(other.answered(200)) == 3 and not await pending(service)

            await until(service, settled)
            request = GetTaskPushNotificationConfigRequest(task_id=task.id, id="gone")
            with pytest.raises(TaskNotFoundError):
                await service.get_task_push_notification_config(CTX, request)
            listed = await service.list_task_push_notification_configs(
                CTX, ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            assert [each.id for each in listed.configs] == ["kept"]
            buried = await dead(service, "gone")
            assert [each.notification_id for each in buried] == [
                each.notification_id for each in waiting
            ]
            assert all("HTTP 410: unsubscribed" in (each.last_error or "") for each in buried)
            assert [each.attempts for each in buried] == [1, 0, 0, 0]
            assert await dead(service, "kept") == []

            assert await outbox(service).requeue(None, time.time_ns() // 1000) == 4
            await until(service, lambda: _nothing_left(service))

        assert len(gone.requests) == 1
        assert gone.requests[0].id == waiting[0].notification_id
        assert in_order(other.ids)

    run(scenario())


async def _nothing_left(service: AgentService) -> bool:
    """No notification pending or dead."""
    return not await pending(service) and not await dead(service)


@pytest.mark.parametrize(
    ("status", "settings", "attempts", "reason"),
    [
        (400, fast(retries=10, client_errors=3), 3, "HTTP 400: bad hook"),
        (404, fast(retries=10, client_errors=1), 1, "HTTP 404: bad hook"),
        (500, fast(retries=2, client_errors=5), 3, "HTTP 500: bad hook (gave up after 3 attempts)"),
        (429, fast(retries=1, client_errors=5), 2, "HTTP 429: bad hook (gave up after 2 attempts)"),
    ],
)
def test_refused_attempts_end_dead_with_the_reason_and_the_queue_moves_on(
    store_url: str, status: int, settings: PushSettings, attempts: int, reason: str
) -> None:
    """A 4xx (not 408, 410, 429) is tried `client_errors` times in all, a 5xx (or 429) once
    more than `retries`; then the notification is dead, its last error kept, and the next
    notification of its queue is delivered."""

    async def scenario() -> None:
        gated = Gated()
        async with (
            Receiver([Reply(status, b"bad hook")] * attempts) as receiver,
            serving(store_url, gated.agent, settings) as service,
        ):
            task = await start_task(service, config(receiver.url()))

            async def buried() -> bool:
                return len(await dead(service)) == 1 and not await pending(service)

            await until(service, buried, what="the first notification dead")
            [first] = await dead(service)
            assert (first.attempts, first.last_error) == (attempts, reason)
            assert first.notification_id == f"{task.id}.1.0"
            assert receiver.ids == [first.notification_id] * attempts

            gated.go.set()

            async def rest() -> bool:
                return len(receiver.answered(200)) == 3 and not await pending(service)

            await until(service, rest, what="the next notifications delivered")
            assert len(await dead(service)) == 1

        later = [r.id for r in receiver.answered(200)]
        assert in_order([first.notification_id, *later])
        assert len(receiver.requests) == attempts + 3

    run(scenario())


def test_a_slow_receiver_does_not_hold_up_a_fast_one(store_url: str) -> None:
    """One config's receiver never answers; another config of the same task and a config of
    another task, on a fast receiver, get all their notifications while the slow one's
    first attempt is still open. That attempt times out, is counted and retried, the worker
    carries on; once the slow receiver answers, its notifications arrive in order."""
    timeout = 3.0  # the fast receiver is served within it even on a loaded machine
    settings = fast(retries=100, timeout=timeout)

    async def scenario() -> None:
        gated = Gated()
        async with (
            Receiver(default=Reply(hang=True)) as slow,
            Receiver() as quick,
            serving(store_url, gated.agent, settings) as service,
        ):
            task = await start_task(service, config(slow.url(), id="slow"))
            await until(service, lambda: slow.open == 1, what="the slow attempt")
            quick_config = config(quick.url(), id="quick", task_id=task.id)
            await service.create_task_push_notification_config(CTX, quick_config)
            second = await start_task(service, config(quick.url("/second"), id="second"))
            gated.go.set()

            async def quick_done() -> bool:
                return len(quick.answered(200)) == 3 + 4 and not await pending(service, "quick")

            await until(service, quick_done, what="the fast receiver served")
            assert [r.closed for r in slow.requests] == [None], "the slow attempt is still open"
            assert in_order([r.id for r in quick.requests if r.target == "/hook"])
            others = [r.id for r in quick.requests if r.target == "/second"]
            assert len(others) == 4
            assert in_order(others)
            assert all(each.startswith(f"{second.id}.") for each in others)

            async def retried() -> bool:
                heads = await pending(service, "slow")
                return bool(heads) and heads[0].attempts >= 1 and len(slow.requests) >= 2

            await until(service, retried, what="a slow attempt counted")
            head = (await pending(service, "slow"))[0]
            assert (head.attempts, head.last_error) == (1, f"no answer within {timeout:g} s")
            first = slow.requests[0]
            assert first.closed is not None
            assert timeout / 2 < first.closed - first.at < timeout + 0.3
            assert slow.ids[:2] == [head.notification_id] * 2
            loop = worker(service)._loop
            assert loop is not None
            assert not loop.done()

            await slow.stop()  # drops the attempt in flight (a failure, retried at once)
            slow.default = Reply()
            await slow.start()

            async def slow_done() -> bool:
                return len(slow.answered(200)) == 4 and not await pending(service)

            await until(service, slow_done, what="the slow receiver served at last")
            await until(service, lambda: not worker(service)._running)

        delivered = [r.id for r in slow.answered(200)]
        assert in_order(delivered)
        assert all(each.startswith(f"{task.id}.") for each in delivered)
        assert {r.id for r in slow.requests if r.reply.hang} == {delivered[0]}

    run(scenario())


def test_a_deleted_config_gets_none_of_its_pending_notifications(store_url: str) -> None:
    """Its receiver is down while its notifications wait; the config is deleted; when the
    receiver is back, it gets only a later task's notifications, none of the deleted
    config's (another config of the task got all of its own)."""

    async def scenario() -> None:
        gated = Gated()
        down = Receiver(port=free_port())
        async with (
            Receiver() as control,
            serving(store_url, gated.agent, fast(retries=100)) as service,
        ):
            task = await start_task(service, config(down.url(), id="doomed"))
            kept = config(control.url(), id="kept", task_id=task.id)
            await service.create_task_push_notification_config(CTX, kept)
            gated.go.set()

            async def waiting() -> bool:
                doomed = await pending(service, "doomed")
                return len(doomed) == 4 and doomed[0].attempts >= 1 and len(control.ids) == 3

            await until(service, waiting, what="the doomed notifications waiting")
            await service.delete_task_push_notification_config(
                CTX, DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="doomed")
            )
            await until(service, lambda: _nothing_left(service), what="the doomed queue dropped")

            await down.start()
            try:
                later = await start_task(service, config(down.url(), id="fresh"))
                await until(service, lambda: len(down.answered(200)) == 4, what="the later task's")
                await until(service, lambda: _nothing_left(service))
            finally:
                await down.stop()

        assert all(r.id.startswith(f"{later.id}.") for r in down.requests)
        assert len(down.requests) == 4
        assert in_order(control.ids)

    run(scenario())


def answering(address: str, port: int, asked: list[str]) -> Resolver:
    """A resolver answering every name with `address` on `port`, noting what it was asked."""

    async def resolve(host: str, asked_port: int) -> Sequence[tuple[str, int]]:
        asked.append(f"{host}:{asked_port}")
        return [(address, port)]

    return resolve


@pytest.mark.parametrize("allowed", [False, True])
def test_a_name_resolving_to_a_refused_address_is_dead_without_a_connection(
    store_url: str, allowed: bool
) -> None:
    """The webhook names a public-looking host, which the worker's resolver answers with
    127.0.0.1: with an empty allow-list every notification is dead at once, the reason
    naming the SSRF guard, and the listener sees no connection. The control: with
    127.0.0.1 allowed, the same resolver leads to the listener, which gets them all."""
    settings = fast(allow=Allow(["127.0.0.1"] if allowed else []))

    async def scenario() -> None:
        gated = Gated()
        asked: list[str] = []
        async with (
            Receiver() as listener,
            serving(store_url, gated.agent, settings) as service,
        ):
            resolve = answering("127.0.0.1", listener.port, asked)
            worker(service).resolver = resolve
            url = f"http://hooks.example.com:{listener.port}/hook"
            task = await start_task(service, config(url))
            gated.go.set()
            await until(service, lambda: finished(service, task.id))

            async def settled() -> bool:
                if await pending(service):
                    return False
                return len(await dead(service)) == 4 or len(listener.answered(200)) == 4

            await until(service, settled)
            buried = await dead(service)

        assert asked
        assert set(asked) == {f"hooks.example.com:{listener.port}"}
        if allowed:
            assert (len(listener.requests), buried) == (4, [])
            assert listener.connections >= 1  # one, kept for the next: they come in turn
            assert {r.headers["host"] for r in listener.requests} == {
                f"hooks.example.com:{listener.port}"
            }
        else:
            assert listener.connections == 0
            assert [each.attempts for each in buried] == [1] * 4
            for each in buried:
                assert (each.last_error or "").startswith("refused by the SSRF guard: ")
                assert "127.0.0.1" in (each.last_error or "")
                assert "loopback" in (each.last_error or "")

    run(scenario())
