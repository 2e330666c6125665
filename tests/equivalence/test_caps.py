"""Caps on what a caller holds open (issue: deployable security II): open streams per
caller, running tasks per caller and in all. At a cap every binding refuses with 429 /
RESOURCE_EXHAUSTED (the client's RateLimitedError); a stream closed, or a run ended,
frees its place. A dropped stream does not cancel its task (the spec's rule): the run
keeps its place until it ends."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest

from parley.client import Client, user_message
from parley.model import Message, Task, TaskState
from parley.protocol.errors import RateLimitedError
from parley.protocol.negotiation import Version
from parley.server.auth import ApiKeys, Security
from parley.server.quotas import Quotas
from parley.server.service import AgentService
from tests.client.agents import EXTENSION
from tests.equivalence.conftest import all_bindings
from tests.equivalence.test_bindings import BINDINGS
from tests.interop.agent import Probe

pytestmark = pytest.mark.anyio

KEYS = {f"key-{n}": f"caller-{n}" for n in range(16)}
QUOTAS = Quotas(max_streams=2, max_running_tasks=3, max_running_tasks_total=4)
_fresh = itertools.count()


@pytest.fixture(scope="module")
async def served() -> AsyncIterator[tuple[str, AgentService, Probe]]:
    probe = Probe()
    security = Security(ApiKeys(KEYS))
    async with all_bindings(probe, security=security, quotas=QUOTAS) as (url, service):
        yield url, service, probe


def _connect(url: str, key: str, binding: str = "JSONRPC") -> Any:
    return Client.connect(
        url,
        versions=[Version.V1_0],
        bindings=[binding],
        extensions=[EXTENSION],
        headers={"X-API-Key": key},
        extended_card=False,
    )


def waiting(key: str) -> Message:
    """A message the `background` skill holds (WORKING) until the test opens its gate."""
    return user_message(key, metadata={"skill": "background"})


async def _until(condition: Any) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


async def test_open_streams_are_capped_per_caller(
    served: tuple[str, AgentService, Probe],
) -> None:
    url, service, probe = served
    key, other = f"key-{next(_fresh)}", f"key-{next(_fresh)}"
    texts = [f"stream-{n}-{key}" for n in range(2)]
    async with _connect(url, key) as client, _connect(url, other) as someone:
        streams = [client.stream(waiting(text)) for text in texts]
        first_events = [await anext(aiter(stream)) for stream in streams]
        task_id = first_events[0].id
        for binding in BINDINGS:  # a third stream of the caller's, on any binding
            async with _connect(url, key, binding) as again:
                with pytest.raises(RateLimitedError) as refused:
                    await anext(aiter(again.subscribe(task_id)))
                assert refused.value.retry_after == 1
        other_stream = someone.stream(waiting(f"other-{key}"))  # another caller's own place
        assert (await anext(aiter(other_stream))).status.state in (
            TaskState.SUBMITTED,
            TaskState.WORKING,
        )
        await streams[0].aclose()  # the task runs on; the stream's place is free
        await _until(lambda: service.caps.streams.get("caller-" + key[4:], 0) == 1)
        resumed = client.subscribe(task_id)
        assert isinstance(await anext(aiter(resumed)), Task)
        for text in [*texts, f"other-{key}"]:
            probe.gate(text).set()
        await resumed.aclose()
        await streams[1].aclose()
        await other_stream.aclose()
    await _until(lambda: not service.caps.streams and not service.caps.running)


async def test_running_tasks_are_capped_per_caller_and_in_all(
    served: tuple[str, AgentService, Probe],
) -> None:
    url, service, probe = served
    key, other = f"key-{next(_fresh)}", f"key-{next(_fresh)}"
    texts = [f"run-{n}-{key}" for n in range(3)]
    async with _connect(url, key) as client, _connect(url, other) as someone:
        for text in texts:
            await client.send(waiting(text), return_immediately=True)
        for binding in BINDINGS:
            async with _connect(url, key, binding) as again:
                with pytest.raises(RateLimitedError, match="per caller"):
                    await again.send(waiting(f"refused-{key}"), return_immediately=True)
        await someone.send(waiting(f"other-{key}"), return_immediately=True)  # 4 in all
        with pytest.raises(RateLimitedError, match="at most 4 at once"):
            await someone.send(waiting(f"other-2-{key}"), return_immediately=True)
        probe.gate(texts[0]).set()  # one run ends: its caller may begin another
        await _until(lambda: service.caps.total == 3)
        await client.send(waiting(f"after-{key}"), return_immediately=True)
        for text in [*texts, f"other-{key}", f"after-{key}"]:
            probe.gate(text).set()
    await _until(lambda: service.caps.total == 0 and not service.caps.running)
