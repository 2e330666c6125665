"""`parley.server.quotas` on its own: who a request is counted against, the rate syntax,
per-operation rules, and a storage that fails (the limits are then not applied: serving
every caller beats refusing every caller); `parley serve`'s options building the Quotas."""

from __future__ import annotations

import argparse
import logging

import pytest

from parley.cli.quotas import add_quota_options, quotas_from
from parley.client import Client
from parley.model import Task
from parley.protocol.errors import RateLimitedError
from parley.protocol.operations import Operation
from parley.server.agent import Agent
from parley.server.context import Caller
from parley.server.quota_counts import MemoryCounts
from parley.server.quotas import Quotas, RateLimiter, client_host, holder
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from parley.testing import InMemoryTransport

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("client", "host"),
    [
        ("127.0.0.1:5000", "127.0.0.1"),
        ("[::1]:5000", "::1"),
        ("ipv4:10.0.0.7:41234", "10.0.0.7"),
        ("ipv6:[2001:db8::1]:41234", "2001:db8::1"),
        (None, "unknown"),
    ],
)
def test_an_anonymous_caller_is_counted_by_its_address(client: str | None, host: str) -> None:
    assert client_host(client) == host
    assert holder(Caller(), client) == "@" + host
    assert holder(Caller(id="alice"), client) == "alice"


def test_a_rate_that_is_not_one_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="'ten a second' is not a rate"):
        RateLimiter(Quotas(rate="ten a second"))
    with pytest.raises(ValueError, match="name an operation class"):
        RateLimiter(Quotas(operations={"sending": "1/second"}))
    with pytest.raises(ValueError, match="memory, or a redis:// URL"):
        RateLimiter(Quotas(rate="1/second", storage="postgresql://db"))


async def test_each_operation_counts_against_its_own_rules() -> None:
    limiter = RateLimiter(Quotas(operations={"SendMessage": "1/minute", "read": "2/minute"}))
    alice = Caller(id="alice")
    assert await limiter.admit(alice, None, Operation.CANCEL_TASK) is None  # no rule
    allowance = await limiter.admit(alice, None, Operation.SEND_MESSAGE)
    assert allowance is not None
    assert (allowance.limit, allowance.remaining) == (1, 0)
    with pytest.raises(RateLimitedError) as refused:
        await limiter.admit(alice, None, Operation.SEND_MESSAGE)
    assert refused.value.limit == 1
    assert refused.value.metadata["retryAfterSeconds"] == str(refused.value.retry_after)
    streaming = await limiter.admit(alice, None, Operation.SEND_STREAMING_MESSAGE)
    assert streaming is None  # the rate was SendMessage's own, not its class's
    for left in (1, 0):
        read = await limiter.admit(alice, None, Operation.GET_TASK)
        assert read is not None
        assert read.remaining == left
    with pytest.raises(RateLimitedError):
        await limiter.admit(alice, None, Operation.LIST_TASKS)  # one class, one count
    assert await limiter.admit(Caller(id="bob"), None, Operation.LIST_TASKS) is not None


async def test_a_failing_storage_lets_requests_through_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limiter = RateLimiter(Quotas(rate="1/minute"))

    def broken(*_: object) -> tuple[int, float]:
        raise ConnectionError("storage down")

    assert isinstance(limiter.counts, MemoryCounts)
    limiter.counts.count = broken  # type: ignore[method-assign,assignment]
    with caplog.at_level(logging.WARNING, "parley.quotas"):
        for _ in range(3):
            assert await limiter.admit(Caller(id="alice"), None, Operation.GET_TASK) is None
    warnings = [r for r in caplog.records if "rate limits not applied" in r.getMessage()]
    assert len(warnings) == 1  # once, not per request


async def test_the_in_memory_transport_counts_like_a_binding() -> None:
    agent = Agent("Counted")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    card = agent.card("memory://agent")
    service = AgentService(agent.executor(), card, quotas=Quotas(rate="2/minute"))
    async with Client(InMemoryTransport(service)) as client:
        for _ in range(2):
            assert isinstance(await client.send("hi"), Task)
        with pytest.raises(RateLimitedError):
            await client.send("hi")


def _parsed(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_quota_options(parser)
    parser.add_argument("--bus")
    return parser.parse_args(flags)


def test_the_serve_options_build_the_quotas() -> None:
    quotas = quotas_from(
        _parsed(
            "--rate-limit", "10/second", "--rate-limit-for", "send=2/second",
            "--max-streams", "0", "--bus", "redis://127.0.0.1:6379/0?prefix=x",
        )
    )  # fmt: skip
    assert quotas.rate == "10/second"
    assert dict(quotas.operations) == {"send": "2/second"}
    assert quotas.max_streams is None  # 0: no cap
    assert quotas.storage == "redis://127.0.0.1:6379/0"  # the bus's Redis, its options cut
    defaults = quotas_from(_parsed())
    assert (defaults.rate, defaults.storage, defaults.max_streams) == (None, "memory", 1000)
    with pytest.raises(SystemExit, match="expected CLASS=RATE"):
        quotas_from(_parsed("--rate-limit-for", "send"))
    with pytest.raises(SystemExit, match="not a rate"):
        quotas_from(_parsed("--rate-limit", "often"))
