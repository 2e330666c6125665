"""`parley check` (parley.conformance) against a correct Parley server, against the official
a2a-sdk server, and against servers broken in one rule each: every defect is caught, and
no MUST fails on the correct servers but the SDK's known defect (docs/check.md)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast
from xml.etree import ElementTree as ET

import pytest

from parley.asgi import A2AApp, build_app
from parley.cli.main import main
from parley.conformance import Report, Status, check_agent
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, Security
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.client.sdk_server import Gates, sdk_app
from tests.conformance.broken import BREAKAGES, broken
from tests.interop.live import serving

HTTP_INTERFACES = 4  # JSON-RPC and HTTP+JSON, each in 1.0 and 0.3
KEY = "key-checker"


def checked_agent(*, streaming: bool = True, security: Security | None = None) -> Agent:
    agent = Agent(
        "Checked", description="An agent for the checker.", streaming=streaming, security=security
    )

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        await task.update("thinking")  # a second history message, so historyLength bites
        return task.text

    return agent


def parley_app(agent: Agent, *, push: bool = True) -> Callable[[str], A2AApp]:
    def make(url: str) -> A2AApp:
        service = AgentService(
            agent.executor(), agent.card(url), push=push, security=agent.security
        )
        return build_app(service)

    return make


def run(url: str, **options: Any) -> Report:
    return asyncio.run(check_agent(url, timeout=5, **options))


def failures(report: Report) -> set[tuple[str, str]]:
    return {
        (
            r.check.id,
            r.interface.split()[0] + " " + r.interface.split()[1] if r.interface else "card",
        )
        for r in report.results
        if r.must_failed
    }


def statuses(report: Report, check_id: str) -> list[Status]:
    return [r.status for r in report.results if r.check.id == check_id]


@pytest.fixture(scope="module")
def parley_url() -> Iterator[str]:
    with serving(parley_app(checked_agent())) as url:
        yield url


def test_parley_passes_every_check_on_every_interface(parley_url: str) -> None:
    report = run(parley_url)
    assert failures(report) == set()
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
        assert statuses(report, check_id) == [Status.PASS] * HTTP_INTERFACES, check_id
    # 1.0 only (0.3 has neither ListTasks nor A2A-Version)
    assert statuses(report, "list.paging").count(Status.PASS) == 2
    assert statuses(report, "version.unsupported").count(Status.PASS) == 2
    history = [r.detail for r in report.results if r.check.id == "get.history-length"]
    assert all(detail.startswith("1 of ") for detail in history)  # the limit was exercised


def test_undeclared_capabilities_are_refused() -> None:
    with serving(parley_app(checked_agent(streaming=False), push=False)) as url:
        report = run(url, only=["stream.", "push."])
    assert failures(report) == set()
    assert statuses(report, "stream.undeclared") == [Status.PASS] * HTTP_INTERFACES
    assert statuses(report, "push.undeclared") == [Status.PASS] * HTTP_INTERFACES


def test_authentication_required_by_the_card_is_enforced_with_a_challenge() -> None:
    agent = checked_agent(security=Security(ApiKeys({KEY: "checker"})))
    with serving(parley_app(agent)) as url:
        report = run(url, headers={"X-API-Key": KEY})
    assert failures(report) == set()
    assert statuses(report, "auth.required") == [Status.PASS] * HTTP_INTERFACES
    assert statuses(report, "auth.challenge") == [Status.PASS] * HTTP_INTERFACES
    assert statuses(report, "send.shape") == [Status.PASS] * HTTP_INTERFACES


def test_the_official_sdk_fails_only_its_known_defect() -> None:
    make = cast("Callable[[str], A2AApp]", lambda url: sdk_app(url, Gates()))
    with serving(make) as url:
        report = run(url)
    # a2a-sdk 1.3's 0.3 HTTP+JSON compatibility layer has no DELETE route for push configs,
    # and drops the connection (mid-stream) on a subscription it refuses
    assert failures(report) == {
        ("push.config-crud", "HTTP+JSON 0.3"),
        ("subscribe.terminal", "HTTP+JSON 0.3"),
        ("subscribe.not-found", "HTTP+JSON 0.3"),
    }
    assert statuses(report, "get.not-found") == [Status.PASS] * HTTP_INTERFACES


@pytest.mark.parametrize("name", sorted(BREAKAGES))
def test_each_broken_rule_is_caught(name: str) -> None:
    breakage, catcher = BREAKAGES[name]
    inner = parley_app(checked_agent())
    make = cast("Callable[[str], A2AApp]", lambda url: broken(inner(url), breakage))
    with serving(make) as url:
        report = run(url)
    assert report.must_failed
    assert catcher in {check_id for check_id, _ in failures(report)}, failures(report)


def test_the_command_prints_json_writes_junit_and_exits_by_must_failures(
    parley_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "check.xml"
    assert main(["check", parley_url, "--only", "get.", "--junit", str(junit)]) == 0
    table = capsys.readouterr().out
    assert "R-CTX-11" in table
    assert "get.not-found" in table
    cases = ET.parse(junit).getroot().findall("testcase")
    assert len(cases) == 1 + 2 * HTTP_INTERFACES  # card.served, then two checks each

    assert main(["check", parley_url, "--json", "--only", "version."]) == 0
    entries = json.loads(capsys.readouterr().out)["checks"]
    assert {e["id"] for e in entries} == {"card.served", "version.unsupported"}
    assert all(set(e) >= {"id", "requirement", "level", "status", "detail"} for e in entries)

    breakage, _ = BREAKAGES["wrong-error-code"]
    inner = parley_app(checked_agent())
    make = cast("Callable[[str], A2AApp]", lambda url: broken(inner(url), breakage))
    with serving(make) as url:
        assert main(["check", url, "--json", "--only", "get.not-found"]) == 1
    failed = [e for e in json.loads(capsys.readouterr().out)["checks"] if e["status"] == "fail"]
    assert {e["level"] for e in failed} == {"MUST"}
    assert failed


def test_no_card_is_a_protocol_error(capsys: pytest.CaptureFixture[str]) -> None:
    make = cast("Callable[[str], A2AApp]", lambda url: _nothing)
    with serving(make) as url:
        assert main(["check", url]) == 5
    assert "card.served" in capsys.readouterr().out


async def _nothing(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": message["type"] + ".complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def test_a_server_on_the_1_0_0_error_table_passes_with_a_note() -> None:
    agent = checked_agent()

    def make(url: str) -> A2AApp:
        service = AgentService(agent.executor(), agent.card(url))
        return build_app(service, wire_compat="1.0.0")

    with serving(make) as url:
        report = run(url, only=["cancel.", "version."])
    assert failures(report) == set()
    noted = [r for r in report.results if "v1.0.0 table" in r.detail]
    # HTTP+JSON 1.0: TaskNotCancelableError is 409 in v1.0.0 (400 in v1.0.1)
    assert [(r.check.id, r.interface.split()[0]) for r in noted] == [
        ("cancel.terminal", "HTTP+JSON")
    ]
