"""`parley check` on gRPC interfaces: every applicable check runs over gRPC against a
correct Parley server (its 1.0 and 0.3 services on one port), and a gRPC server broken in
one rule fails the check that enforces it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from parley.asgi import A2AApp, build_app
from parley.conformance import Report, Status, check_agent
from parley.grpc import GrpcServer
from parley.model import StreamEvent
from parley.protocol import errors as e
from parley.server.agent import Agent
from parley.server.service import AgentService
from tests.conformance.test_checker import checked_agent
from tests.interop.live import serving
from tests.ports import free_port

GRPC_INTERFACES = 2  # 1.0 and 0.3

Handler = Callable[[AgentService], Any]


@contextmanager
def serving_grpc(
    agent: Agent, handler: Handler = lambda service: service, **options: Any
) -> Iterator[str]:
    """A Parley server on HTTP and gRPC (its card lists both), the gRPC side through
    `handler` (the service, or a broken wrapper of it)."""
    port = free_port()
    services: list[AgentService] = []

    def make_app(url: str) -> A2AApp:
        card = agent.card(url, grpc_address=f"127.0.0.1:{port}")
        services.append(AgentService(agent.executor(), card, push=True))
        return build_app(services[0])

    def make_grpc() -> GrpcServer:
        return GrpcServer(handler(services[0]), port=port, **options)

    with serving(make_app, make_grpc) as url:
        yield url


def run(url: str, **options: Any) -> Report:
    return asyncio.run(check_agent(url, timeout=5, **options))


def on_grpc(report: Report, check_id: str) -> list[Status]:
    return [
        r.status
        for r in report.results
        if r.check.id == check_id and r.interface.startswith("GRPC ")
    ]


def grpc_failures(report: Report) -> set[tuple[str, str]]:
    return {
        (r.check.id, r.interface.split()[1])
        for r in report.results
        if r.must_failed and r.interface.startswith("GRPC ")
    }


def test_parley_passes_every_check_over_grpc() -> None:
    with serving_grpc(checked_agent()) as url:
        report = run(url)
    assert not report.must_failed, [r for r in report.results if r.must_failed]
    for check_id in (
        "interface.reachable",
        "send.shape",
        "get.not-found",
        "get.history-length",
        "cancel.terminal",
        "send.terminal",
        "stream.framing",
        "stream.order",
        "push.config-crud",
    ):
        assert on_grpc(report, check_id) == [Status.PASS] * GRPC_INTERFACES, check_id
    assert on_grpc(report, "list.paging").count(Status.PASS) == 1  # 1.0 only
    assert on_grpc(report, "version.unsupported").count(Status.PASS) == 1
    not_found = [
        r.detail
        for r in report.results
        if r.check.id == "get.not-found" and "GRPC 1" in r.interface
    ]
    assert not_found == ["TaskNotFoundError: gRPC NOT_FOUND, reason TASK_NOT_FOUND (v1.0.1 table)"]


def test_a_grpc_server_on_the_1_0_0_table_passes_with_a_note() -> None:
    with serving_grpc(checked_agent(), wire_compat="1.0.0") as url:
        report = run(url, only=["send.terminal", "version."])
    assert grpc_failures(report) == set()
    noted = [r for r in report.results if r.interface.startswith("GRPC ") and "v1.0.0" in r.detail]
    # UnsupportedOperationError and VersionNotSupportedError are UNIMPLEMENTED in v1.0.0
    assert {(r.check.id, r.interface.split()[1]) for r in noted} == {
        ("send.terminal", "1.0"),
        ("version.unsupported", "1.0"),
    }


@dataclass
class _NotFoundAsInternal:
    """GetTask of an unknown task fails with INTERNAL rather than NOT_FOUND."""

    service: AgentService

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    async def get_task(self, ctx: Any, request: Any) -> Any:
        try:
            return await self.service.get_task(ctx, request)
        except e.TaskNotFoundError as exc:
            raise e.InternalError("lost") from exc


@dataclass
class _NoTaskFirst:
    """A stream without its first event (the Task)."""

    service: AgentService

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    async def send_streaming_message(self, ctx: Any, request: Any) -> AsyncIterator[StreamEvent]:
        first = True
        async for event in self.service.send_streaming_message(ctx, request):
            if not first:
                yield event
            first = False


@pytest.mark.parametrize(
    ("handler", "catcher"),
    [(_NotFoundAsInternal, "get.not-found"), (_NoTaskFirst, "stream.order")],
)
def test_a_broken_grpc_server_is_caught(handler: Handler, catcher: str) -> None:
    with serving_grpc(checked_agent(), handler) as url:
        report = run(url)
    assert {(catcher, "1.0"), (catcher, "0.3")} <= grpc_failures(report), grpc_failures(report)
    assert not [r for r in report.results if r.must_failed and not r.interface.startswith("GRPC")]
