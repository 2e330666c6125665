"""The metrics after a known workload, scraped at `/metrics` in the Prometheus text format
and read from the OpenTelemetry reader."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from parley.client import HTTP_JSON_BINDING, JSONRPC_BINDING, Client
from parley.protocol.errors import TaskNotFoundError
from parley.protocol.negotiation import Version
from tests.observability.chain import observed, relay, served

pytestmark = pytest.mark.anyio


def _samples(text: str) -> Iterator[Sample]:
    for family in text_string_to_metric_families(text):
        yield from family.samples


def _value(text: str, name: str, **labels: str) -> float:
    found = [
        s.value
        for s in _samples(text)
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, f"{name} {labels}: {found}"
    return found[0]


async def test_a_known_workload_is_counted() -> None:
    version = Version.V1_0.value
    async with observed(prometheus=True) as telemetry:
        agent = relay("C", None, JSONRPC_BINDING)
        async with served(agent, JSONRPC_BINDING, telemetry.telemetry) as url:
            async with Client.connect(
                url, bindings=[JSONRPC_BINDING], versions=[Version.V1_0]
            ) as client:
                for _ in range(3):
                    await client.send("hi")
                async for _event in client.stream("hi"):
                    pass
                with pytest.raises(TaskNotFoundError):
                    await client.get_task("no-such-task")
            async with Client.connect(url, bindings=[HTTP_JSON_BINDING]) as client:
                await client.send("hi")
            async with httpx.AsyncClient() as http:
                scrape = await http.get(f"{url}/metrics")
        assert scrape.status_code == 200
        assert scrape.headers["content-type"].startswith("text/plain")
        text = scrape.text

    requests = "a2a_server_requests_total"
    jsonrpc = {"a2a_binding": "JSONRPC", "a2a_protocol_version": version}
    assert _value(text, requests, a2a_method="SendMessage", a2a_status="ok", **jsonrpc) == 3
    assert (
        _value(text, requests, a2a_method="SendStreamingMessage", a2a_status="ok", **jsonrpc) == 1
    )
    assert (
        _value(text, requests, a2a_method="GetTask", a2a_status="TaskNotFoundError", **jsonrpc) == 1
    )
    rest = {"a2a_binding": "HTTP+JSON", "a2a_method": "SendMessage", "a2a_status": "ok"}
    assert _value(text, requests, **rest) == 1
    sends = {"a2a_method": "SendMessage", "a2a_status": "ok", **jsonrpc}
    assert _value(text, "a2a_server_duration_seconds_count", **sends) == 3
    assert _value(text, "a2a_server_task_states_total", a2a_task_state="COMPLETED") == 5
    assert _value(text, "a2a_agent_run_duration_seconds_count") == 5
    assert (
        _value(text, "a2a_server_open_streams", a2a_method="SendStreamingMessage", **jsonrpc) == 0
    )
    assert _value(text, "parley_store_duration_seconds_count", parley_store_operation="create") == 5
