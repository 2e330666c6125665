"""Push delivery against receivers that misbehave: garbage instead of HTTP, a huge or
endless body, an answer that never comes or never ends, a host that never resolves. Each
attempt ends within the timeout, is counted as what it is (a 2xx with a huge body is
delivered, reading at most `read_limit` bytes of it), and leaves nothing behind: no attempt
running, no connection open, and the worker stops at once, even mid-attempt or as a
wake-up comes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from parley.server.push.delivery import DeliveryWorker
from tests.push.receiver import Receiver, Reply
from tests.push.support import (
    Gated,
    config,
    dead,
    fast,
    pending,
    run,
    service_for,
    serving,
    start_task,
    until,
    worker,
)

TIMEOUT = 0.3
SETTINGS = fast(retries=1, timeout=TIMEOUT)
"""Two attempts, each of at most 0.3 s."""

HUGE = 50_000_000
X200 = "x" * 200

# (reply, attempts, the dead notification's last error; "" when delivered)
CASES = {
    "garbage": (Reply(raw=b"\x00\xffSSH-2.0 not HTTP at all\r\n\r\n"), 2, "RemoteProtocolError"),
    "TLS bytes, kept open": (Reply(raw=b"\x16\x03\x01\x02\x00\x01\x00", hang=True), 2, "Protocol"),
    "silence": (Reply(hang=True), 2, "no answer within 0.3 s"),
    "a status line, then silence": (Reply(raw=b"HTTP/1.1 200 OK\r\n", hang=True), 2, "no answer"),
    "200 with a huge body, slowly": (Reply(200, size=HUGE, chunk=65536, pause=0.01), 1, ""),
    "200 with an endless body": (Reply(200, endless=True), 1, ""),
    "500 with an endless body": (Reply(500, endless=True), 2, f"HTTP 500: {X200} (gave up"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_attempt_ends_within_the_timeout_and_leaves_nothing_behind(case: str) -> None:
    reply, attempts, error = CASES[case]

    async def scenario() -> None:
        gated = Gated()  # never goes: one notification, the task's creation
        async with (
            Receiver(default=reply) as receiver,
            serving("memory", gated.agent, SETTINGS) as service,
        ):
            await start_task(service, config(receiver.url()))

            async def settled() -> bool:
                return not await pending(service) and not worker(service)._running

            await until(service, settled)
            await until(service, lambda: receiver.open == 0, what="the connections closed")
            buried = await dead(service)

        assert len(receiver.requests) == attempts
        assert all(request.closed is not None for request in receiver.requests)
        if error:
            assert [(each.attempts, error in (each.last_error or "")) for each in buried] == [
                (attempts, True)
            ], buried
        else:
            assert buried == []
            assert worker(service).delivered == 1
            sent = receiver.requests[0].sent
            assert sent < HUGE // 10, f"{sent} bytes were sent: the body was read"

    run(scenario())


def test_shutdown_in_the_middle_of_an_attempt_is_prompt() -> None:
    """The receiver never answers and the attempt may take 10 s: shutdown cancels it at
    once, closes its connection, and the notification stays pending, its attempt not
    counted (delivered later, by the next process)."""

    async def scenario() -> None:
        gated = Gated()
        async with Receiver(default=Reply(hang=True)) as receiver:
            service = service_for("memory", gated.agent, fast(timeout=10.0))
            await service.startup()
            try:
                await start_task(service, config(receiver.url()))
                await until(service, lambda: len(receiver.requests) == 1, what="the attempt")
            finally:
                await asyncio.wait_for(service.shutdown(), 5.0)  # the attempt's timeout: 10 s
            await until(service, lambda: receiver.open == 0, what="the connection closed")
            assert not worker(service)._running
            assert worker(service)._loop is None
            [left] = await pending(service)
            assert left.attempts == 0
            assert len(receiver.requests) == 1

    run(scenario())


def test_stop_right_after_a_wake_up_is_prompt() -> None:
    """A wake-up (a task write, an attempt ending) just before stop: the loop must still
    stop, not swallow the cancellation and run on (asyncio.wait_for on Python 3.11)."""

    async def scenario() -> None:
        for _ in range(3):
            service = service_for("memory", Gated().agent, fast(poll=10.0))
            await service.startup()
            push = worker(service)
            await asyncio.sleep(0.01)  # the loop waits for a wake-up
            push.wake()
            await asyncio.sleep(0)  # the wait is over...
            await asyncio.wait_for(service.shutdown(), 1.0)  # ...as the stop comes
            assert push._loop is None

    run(scenario())


def test_a_host_that_never_resolves_is_a_failed_attempt_within_the_timeout() -> None:
    """The resolution is part of the attempt: a resolver that never answers costs one
    timeout per attempt, which is retried and then dead; the worker's slot is freed."""

    async def never(host: str, port: int) -> Sequence[tuple[str, int]]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def scenario() -> None:
        gated = Gated()
        async with serving("memory", gated.agent, SETTINGS) as service:
            push: DeliveryWorker = worker(service)
            push.resolver = never
            await start_task(service, config("https://hooks.example.com/hook"))

            async def buried() -> bool:
                return len(await dead(service)) == 1 and not push._running

            await until(service, buried, what="dead after two attempts")
            [each] = await dead(service)
            assert each.attempts == 2
            assert each.last_error == (
                "hooks.example.com did not resolve within 0.3 s (gave up after 2 attempts)"
            )

    run(scenario())
