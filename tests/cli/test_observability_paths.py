"""`parley serve`'s observability in process: the readiness probes it picks, the
Telemetry it builds once (or refuses to), and the app and gRPC server it wraps."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from parley.asgi import build_app
from parley.asgi.mount import mount_agents
from parley.asgi.readiness import Readiness
from parley.cli.observability import (
    EXTRA,
    add_observability_options,
    observed,
    observed_grpc,
    telemetry,
)
from parley.grpc import GrpcServer
from parley.observability import Telemetry
from parley.observability.asgi import ObservedApp
from parley.observability.grpc import ObservedInterceptor
from parley.observability.handler import ObservedHandler
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.stores import open_store

pytestmark = pytest.mark.anyio

CLOSED_REDIS = "redis://127.0.0.1:1/0?prefix=p"
SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}


def _service() -> AgentService:
    agent = Agent("Observed")

    @agent.skill()
    async def echo(text: str) -> str:
        return text

    tasks, configs = open_store("memory")
    return AgentService(
        agent.executor(), agent.card("http://127.0.0.1"), store=tasks, push_store=configs
    )


class Storeless:
    """A handler with a card and no task store: nothing to probe."""

    card = Agent("Storeless").card("http://127.0.0.1")


def _arguments(**options: Any) -> argparse.Namespace:
    return argparse.Namespace(**{"otel": False, "metrics": False, "bus": None, **options})


@pytest.fixture
def built() -> Iterator[list[argparse.Namespace]]:
    """Arguments whose Telemetry is shut down after the test."""
    made: list[argparse.Namespace] = []
    yield made
    for arguments in made:
        chosen = getattr(arguments, "built_telemetry", None)
        if chosen is not None:
            chosen.shutdown()


async def _get(app: Any, path: str, method: str = "GET", **kwargs: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        return await http.request(method, path, **kwargs)


async def test_without_options_only_readyz_is_added() -> None:
    app = build_app(_service())
    served = observed(app, _arguments())
    assert isinstance(served, Readiness)
    assert served.app is app
    assert list(served.probes) == ["store"]
    answer = await _get(served, "/readyz")
    assert answer.json() == {"status": "ready", "checks": {"store": "ok"}}
    assert telemetry(argparse.Namespace()) is None


async def test_a_mounted_app_probes_each_agents_store_and_the_bus() -> None:
    app = mount_agents({"a": build_app(_service()), "b": build_app(Storeless())})  # type: ignore[arg-type]
    served = observed(app, _arguments(bus=CLOSED_REDIS))
    assert sorted(served.probes) == ["bus", "store:a"]
    answer = await _get(served, "/readyz")
    assert answer.status_code == 503
    checks = answer.json()["checks"]
    assert checks["store:a"] == "ok"
    assert checks["bus"] != "ok"


async def test_a_storeless_agent_has_nothing_to_probe() -> None:
    served = observed(build_app(Storeless()), _arguments())  # type: ignore[arg-type]
    assert served.probes == {}
    assert (await _get(served, "/readyz")).json() == {"status": "ready", "checks": {}}


async def test_metrics_wrap_the_app_and_count_its_requests(
    built: list[argparse.Namespace],
) -> None:
    app = build_app(_service())
    arguments = _arguments(metrics=True)
    built.append(arguments)
    served = observed(app, arguments)
    assert isinstance(served.app, ObservedApp)
    assert isinstance(app.settings.handler, ObservedHandler)
    assert list(served.probes) == ["store"]
    headers = {"A2A-Version": "1.0"}
    answer = await _get(served, "/", "POST", json=SEND, headers=headers)
    assert answer.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    scraped = await _get(served, "/metrics")
    assert scraped.status_code == 200
    assert 'a2a_method="SendMessage"' in scraped.text
    # no traces without --otel
    assert arguments.built_telemetry.tracer_provider.sampler.get_description() == "AlwaysOffSampler"


def test_otel_builds_once_and_observes_the_clients(
    monkeypatch: pytest.MonkeyPatch, built: list[argparse.Namespace]
) -> None:
    observed_clients: list[Telemetry] = []
    monkeypatch.setattr("parley.observability.observe_clients", observed_clients.append)
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    arguments = _arguments(otel=True)
    built.append(arguments)
    first = telemetry(arguments)
    assert isinstance(first, Telemetry)
    assert telemetry(arguments) is first
    assert observed_clients == [first]
    assert first.registry is None


def test_an_unknown_exporter_stops_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    arguments = _arguments(otel=True)
    with pytest.raises(SystemExit, match="parley serve: --otel: OTEL_TRACES_EXPORTER: 'zipkin'"):
        telemetry(arguments)
    assert not hasattr(arguments, "built_telemetry")


def test_without_the_extra_the_command_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "parley.observability", None)
    with pytest.raises(SystemExit) as stopped:
        telemetry(_arguments(metrics=True))
    assert stopped.value.code == EXTRA


def test_the_grpc_server_is_observed_only_with_an_option(
    built: list[argparse.Namespace],
) -> None:
    plain = GrpcServer(_service())
    assert observed_grpc(plain, _arguments()) is plain
    assert not any(isinstance(i, ObservedInterceptor) for i in plain.interceptors)
    arguments = _arguments(metrics=True)
    built.append(arguments)
    server = GrpcServer(_service())
    assert observed_grpc(server, arguments) is server
    assert isinstance(server.interceptors[-1], ObservedInterceptor)
    assert all(isinstance(s.settings.handler, ObservedHandler) for s in server.servicers)


def test_the_options_parse() -> None:
    parser = argparse.ArgumentParser()
    add_observability_options(parser)
    assert vars(parser.parse_args([])) == {"otel": False, "metrics": False}
    assert vars(parser.parse_args(["--otel", "--metrics"])) == {"otel": True, "metrics": True}


async def test_any_other_asgi_app_is_served_with_readyz_and_no_probe() -> None:
    async def plain(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    served = observed(plain, _arguments())
    assert served.probes == {}
    assert (await _get(served, "/readyz")).status_code == 200
    assert (await _get(served, "/elsewhere")).status_code == 204
