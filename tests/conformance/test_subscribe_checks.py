"""`parley check`'s SubscribeToTask checks (R-SUB-1 to R-SUB-4) on every binding, gRPC
included: a correct Parley server passes them; a server that drops the stream's first
event, lets a terminal task be subscribed to, or answers an unknown one with another
error fails them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, cast

import pytest

from parley.asgi import A2AApp
from parley.model import GetTaskRequest, StreamEvent
from parley.protocol import errors as e
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.conformance.broken import Breakage, broken
from tests.conformance.test_checker import parley_app, run
from tests.conformance.test_grpc_checks import on_grpc, serving_grpc
from tests.interop.live import serving

INTERFACES = 6  # JSON-RPC, HTTP+JSON and gRPC, each in 1.0 and 0.3


def slow_agent() -> Agent:
    """Works a moment, so a task sent with returnImmediately can be subscribed to."""
    agent = Agent("Slow", description="An agent that takes a moment.")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        await task.update("thinking")
        await asyncio.sleep(0.3)
        return task.text

    return agent


def passes(report: Any, check_id: str) -> list[str]:
    return [
        r.interface.split()[0]
        for r in report.results
        if r.check.id == check_id and r.status.value == "pass"
    ]


def test_parley_passes_the_subscription_checks_on_every_binding() -> None:
    with serving_grpc(slow_agent()) as url:
        report = run(url, only=["subscribe."])
    assert not report.must_failed, [r for r in report.results if r.must_failed]
    assert len(passes(report, "subscribe.first-task")) == INTERFACES
    assert len(passes(report, "subscribe.terminal")) == INTERFACES
    assert len(passes(report, "subscribe.not-found")) == INTERFACES
    assert all(
        "ends COMPLETED" in r.detail for r in report.results if r.check.id == "subscribe.first-task"
    )


def test_a_subscription_without_the_task_first_is_caught() -> None:
    inner = parley_app(slow_agent())
    make = cast(
        "Callable[[str], A2AApp]", lambda url: broken(inner(url), Breakage(drop_first_event=True))
    )
    with serving(make) as url:
        report = run(url, only=["subscribe.first-task"])
    assert {r.status.value for r in report.results if r.check.id == "subscribe.first-task"} == {
        "fail"
    }


@dataclass
class _TerminalSubscribable:
    """Subscribing to a terminal task streams the task instead of refusing."""

    service: AgentService

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    async def subscribe_to_task(self, ctx: Any, request: Any) -> AsyncIterator[StreamEvent]:
        try:
            async for event in self.service.subscribe_to_task(ctx, request):
                yield event
        except e.UnsupportedOperationError:
            yield await self.service.get_task(ctx, GetTaskRequest(id=request.id))


@dataclass
class _UnknownAsInternal:
    """Subscribing to an unknown task fails with INTERNAL rather than NOT_FOUND."""

    service: AgentService

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    async def subscribe_to_task(self, ctx: Any, request: Any) -> AsyncIterator[StreamEvent]:
        try:
            async for event in self.service.subscribe_to_task(ctx, request):
                yield event
        except e.TaskNotFoundError as exc:
            raise e.InternalError("lost") from exc


@pytest.mark.parametrize(
    ("handler", "catcher"),
    [(_TerminalSubscribable, "subscribe.terminal"), (_UnknownAsInternal, "subscribe.not-found")],
)
def test_a_broken_grpc_subscription_is_caught(handler: Any, catcher: str) -> None:
    with serving_grpc(slow_agent(), handler) as url:
        report = run(url, only=[catcher])
    assert [s.value for s in on_grpc(report, catcher)] == ["fail", "fail"]
    assert len(passes(report, catcher)) == INTERFACES - 2  # HTTP is correct
