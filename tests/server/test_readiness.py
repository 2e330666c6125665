"""The readiness probes (`parley.server.readiness`): every probe runs side by side, each
within its deadline; the outcome names what went wrong (an exception's class and text, cut
short, or the deadline missed); a task store answers by reading a task that does not
exist; the real Redis answers PING, a closed port is named. What `/readyz` makes of it is
tests/asgi/test_readiness."""

from __future__ import annotations

import asyncio

from parley.server.readiness import PROBE_TASK_ID, check, redis_probe, store_probe
from parley.server.stores.memory import InMemoryTaskStore
from tests.server.support import run

REDIS = "redis://127.0.0.1:6379/0"


async def fine() -> object:
    return None


def test_every_probe_answering_is_ok_each() -> None:
    assert run(check({"a": fine, "b": fine})) == {"a": "ok", "b": "ok"}
    assert run(check({})) == {}


def test_probes_run_side_by_side() -> None:
    """Two probes that each wait for the other can only finish together: one slow
    dependency does not add its time to every other's."""
    first, second = asyncio.Event(), asyncio.Event()

    async def one() -> object:
        first.set()
        await second.wait()
        return None

    async def two() -> object:
        second.set()
        await first.wait()
        return None

    assert run(check({"one": one, "two": two})) == {"one": "ok", "two": "ok"}


def test_a_failure_names_its_class_and_text_cut_short() -> None:
    async def refused() -> object:
        raise ConnectionRefusedError("connection refused by 10.0.0.9:5432")

    async def verbose() -> object:
        raise RuntimeError("x" * 500)

    outcomes = run(check({"store": refused, "bus": verbose, "ok": fine}))
    assert outcomes["store"] == "ConnectionRefusedError: connection refused by 10.0.0.9:5432"
    assert outcomes["bus"].startswith("RuntimeError: xxx")
    assert len(outcomes["bus"]) == 200
    assert outcomes["ok"] == "ok"


def test_a_probe_past_its_deadline_is_named_and_does_not_hold_the_others() -> None:
    never = asyncio.Event()

    async def hangs() -> object:
        await never.wait()
        return None

    assert run(check({"stuck": hangs, "ok": fine}, timeout=0.005)) == {
        "stuck": "no answer within 0.005 s",
        "ok": "ok",
    }


def test_a_store_answers_by_reading_a_task_that_is_not_there() -> None:
    store = InMemoryTaskStore()
    assert run(check({"store": store_probe(store)})) == {"store": "ok"}


class Unreachable:
    """A store whose database is down: each read raises, as asyncpg's pool does."""

    def __init__(self) -> None:
        self.asked: list[tuple[tuple[str, str], str]] = []

    async def get(self, scope: tuple[str, str], task_id: str) -> object:
        self.asked.append((scope, task_id))
        raise OSError("Connect call failed ('127.0.0.1', 5432)")


def test_an_unreachable_store_is_not_ready() -> None:
    store = Unreachable()
    outcomes = run(check({"store": store_probe(store)}))
    assert outcomes == {"store": "OSError: Connect call failed ('127.0.0.1', 5432)"}
    assert store.asked == [(("", ""), PROBE_TASK_ID)]


def test_the_real_redis_answers_ping_and_parleys_options_are_not_sent() -> None:
    probe = redis_probe(f"{REDIS}?prefix=parley-test&lease=5")
    assert run(check({"bus": probe})) == {"bus": "ok"}


def test_a_redis_that_does_not_answer_is_named() -> None:
    [outcome] = run(check({"bus": redis_probe("redis://127.0.0.1:1/0")})).values()
    assert outcome != "ok"
    assert "Error" in outcome or "no answer" in outcome
