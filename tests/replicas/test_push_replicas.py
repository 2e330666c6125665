"""Push delivery with several replicas (one store, one bus, a delivery worker in each):
every notification reaches the webhook once, not once per replica, in order per task,
whichever replica ran the task."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter

import redis.asyncio as aioredis

from parley.server.redis_bus import RedisBus
from parley.server.service import AgentService
from parley.server.stores.urls import open_store
from tests.push.receiver import Receiver, eventually
from tests.push.support import FAST, Gated, config, in_order, run, start_task

REDIS = "redis://127.0.0.1:6379/0"
TASKS = 12


def test_each_notification_is_delivered_once_with_three_replicas(durable_url: str) -> None:
    prefix = f"parley-test-{uuid.uuid4().hex[:10]}"

    async def main() -> None:
        gated = Gated()
        gated.go.set()
        services = []
        for _ in range(3):
            tasks, configs = open_store(durable_url)
            service = AgentService(
                gated.agent.executor(),
                gated.agent.card("http://test"),
                store=tasks,
                push_store=configs,
                push=FAST,
                broker=RedisBus(REDIS, prefix=prefix),
            )
            await service.startup()
            services.append(service)
        try:
            async with Receiver() as receiver:
                started = [
                    await start_task(services[number % 3], config(receiver.url()))
                    for number in range(TASKS)
                ]
                expected = TASKS * len(Gated.KINDS)
                await eventually(lambda: len(receiver.ids) >= expected, 20, "deliveries")
                await asyncio.sleep(0.5)  # a duplicate, if any, would come now
                ids = receiver.ids
                assert len(ids) == expected
                assert max(Counter(ids).values()) == 1
                for task in started:
                    mine = [each for each in ids if each.startswith(f"{task.id}.")]
                    assert len(mine) == len(Gated.KINDS)
                    assert in_order(mine)
        finally:
            for service in services:
                await service.shutdown()
            client = aioredis.from_url(REDIS)
            keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
            if keys:
                await client.delete(*keys)
            await client.aclose()

    run(main(), timeout=40)
