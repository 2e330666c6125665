"""Push deliveries counted by outcome: delivered, retried, given up (dead letters)."""

from __future__ import annotations

from functools import partial

from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint

from parley.observability import build
from parley.observability.serving import observed_handler
from parley.server.service import AgentService
from tests.push.receiver import Receiver, Reply
from tests.push.support import Gated, config, dead, fast, run, service_for, start_task, until


def _attempts(reader: InMemoryMetricReader) -> dict[str, int]:
    data = reader.get_metrics_data()
    found: dict[str, int] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "parley.push.attempts":
                    for point in metric.data.data_points:
                        assert isinstance(point, NumberDataPoint)
                        outcome = str((point.attributes or {})["parley.push.outcome"])
                        found[outcome] = int(point.value)
    return found


async def _deliver(service: AgentService, receiver: Receiver, gated: Gated) -> None:
    await service.startup()
    try:
        await start_task(service, config(receiver.url()))
        gated.go.set()
        await until(service, lambda: len(receiver.answered()) == 4, what="four delivered")
    finally:
        await service.shutdown()


def test_delivered_and_retried_attempts_are_counted() -> None:
    reader = InMemoryMetricReader()
    telemetry = build(metric_readers=[reader])
    gated = Gated()

    async def scenario() -> None:
        async with Receiver([Reply(503)]) as receiver:
            service = service_for("memory", gated.agent)
            observed_handler(service, telemetry)  # before the worker starts
            await _deliver(service, receiver, gated)

    run(scenario())
    assert _attempts(reader) == {"retry": 1, "delivered": 4}


async def _buried(service: AgentService) -> bool:
    return bool(await dead(service))


def test_dead_letters_are_counted() -> None:
    reader = InMemoryMetricReader()
    telemetry = build(metric_readers=[reader])
    gated = Gated()

    async def scenario() -> None:
        async with Receiver(default=Reply(503)) as receiver:
            service = service_for("memory", gated.agent, fast(retries=1))
            observed_handler(service, telemetry)
            await service.startup()
            try:
                await start_task(service, config(receiver.url()))
                gated.go.set()
                await until(service, partial(_buried, service), what="a dead letter")
            finally:
                await service.shutdown()

    run(scenario())
    counted = _attempts(reader)
    assert counted["dead_letter"] >= 1
    assert counted["retry"] >= 1
    assert "delivered" not in counted
