"""An agent with API keys and bearer tokens, served for real (uvicorn, gRPC, SQLite):
every binding in both versions refuses callers without valid credentials (401 with
`WWW-Authenticate`, gRPC UNAUTHENTICATED; R-SEC-4..6), serves the ones with, keeps each
principal's tasks its own (DESIGN 8: another's task is TaskNotFound), and the public card
declares exactly the schemes that are enforced.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest
from msgspec.structs import replace

from parley.asgi import build_app
from parley.client import APIKeyAuth, BearerAuth, CallOptions, JsonRpcTransport, RestTransport
from parley.client.auth import Auth
from parley.client.grpc import GrpcTransport
from parley.client.transport import Transport
from parley.grpc import GrpcServer
from parley.model import (
    AgentCard,
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
    TextPart,
)
from parley.protocol.errors import TaskNotFoundError, UnauthenticatedError
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, BearerTokens, Security
from parley.server.context import CallContext, Caller
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.asgi.live import running
from tests.auth.support import sqlite_service
from tests.contracts.support import run
from tests.ports import free_port

KEYS = {"key-alice": "alice", "key-bob": "bob"}
TOKENS = {"token-carol": "carol"}
CHALLENGES = 'APIKey realm="a2a", in="header", name="X-API-Key", Bearer realm="a2a"'
OPTIONS = CallOptions(timeout=10)


def secured_agent() -> Agent:
    agent = Agent("Guarded", security=Security(ApiKeys(KEYS), BearerTokens(TOKENS)))

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    return agent


@dataclass
class Served:
    url: str
    grpc_address: str

    def transports(self, auth: Auth | None) -> list[Transport]:
        out: list[Transport] = []
        for version in RELEASED_VERSIONS:
            out.append(JsonRpcTransport(self.url + "/", version, auth=auth))
            out.append(RestTransport(self.url, version, auth=auth))
            out.append(GrpcTransport(self.grpc_address, version, auth=auth))
        return out


@asynccontextmanager
async def serving(tmp_path: Path) -> AsyncIterator[Served]:
    service = sqlite_service(secured_agent(), tmp_path)
    with running(build_app(service)) as url:  # its lifespan starts the service
        async with GrpcServer(service, port=free_port()) as server:
            yield Served(url, server.address)


def name(transport: Transport) -> str:
    return f"{type(transport).__name__} {transport.version.value}"


def send(text: str) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id=f"m-{text}", role=Role.USER, parts=(TextPart(text=text),))
    )


async def refusals(served: Served) -> list[str]:
    """Without credentials, or with wrong ones: UnauthenticatedError on every transport."""
    problems = []
    for auth in (None, APIKeyAuth("key-mallory"), BearerAuth("token-mallory")):
        for transport in served.transports(auth):
            try:
                await transport.send_message(send("x"), OPTIONS)
                problems.append(f"{name(transport)} {auth!r}: accepted")
            except UnauthenticatedError:
                pass
            except Exception as error:
                problems.append(f"{name(transport)} {auth!r}: {error!r}")
            finally:
                await transport.aclose()
    return problems


async def isolation(served: Served) -> list[str]:
    """Each principal's task is its own on every transport."""
    problems: list[str] = []
    alice, bob, carol = APIKeyAuth("key-alice"), APIKeyAuth("key-bob"), BearerAuth("token-carol")
    owners = served.transports(alice)
    for index, owner in enumerate(owners):
        task = await owner.send_message(send(f"t{index}"), OPTIONS)
        assert isinstance(task, Task)
        got = await owner.get_task(GetTaskRequest(id=task.id), OPTIONS)
        if not isinstance(got, Task) or got.status.state is not TaskState.COMPLETED:
            problems.append(f"{name(owner)}: the owner cannot read its task")
        for other in (*served.transports(bob), *served.transports(carol)):
            problems += await cannot_see(other, task.id)
            await other.aclose()
        await owner.aclose()
    return problems


async def cannot_see(other: Transport, task_id: str) -> list[str]:
    calls: list[tuple[str, Callable[[], object]]] = [
        ("get", lambda: other.get_task(GetTaskRequest(id=task_id), OPTIONS)),
        ("cancel", lambda: other.cancel_task(CancelTaskRequest(id=task_id), OPTIONS)),
    ]
    problems = []
    for label, call in calls:
        try:
            await call()  # type: ignore[misc]
            problems.append(f"{name(other)} {label}: another principal's task answered")
        except TaskNotFoundError:
            pass
    if other.version is Version.V1_0:
        page = await other.list_tasks(ListTasksRequest(), OPTIONS)
        if any(t.id == task_id for t in page.tasks):
            problems.append(f"{name(other)} list: another principal's task listed")
    return problems


def test_every_binding_refuses_callers_without_valid_credentials(tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        async with serving(tmp_path) as served:
            return await refusals(served)

    assert run(scenario()) == []


def test_each_principal_sees_only_its_own_tasks_on_every_binding(tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        async with serving(tmp_path) as served:
            return await isolation(served)

    assert run(scenario()) == []


def test_http_refusals_carry_the_challenges_and_log_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> list[httpx.Response]:
        async with serving(tmp_path) as served, httpx.AsyncClient(base_url=served.url) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
            v1 = {"A2A-Version": "1.0"}
            return [
                await http.post("/", content=json.dumps(body), headers=v1),
                await http.get("/tasks/t", headers=v1),
                await http.get("/v1/tasks/t"),
                await http.get("/tasks/t", headers={**v1, "X-API-Key": "wrong"}),
                await http.get("/.well-known/agent-card.json"),
            ]

    with caplog.at_level(logging.INFO, "parley.auth"):
        *refused, card = run(scenario())
    assert [r.status_code for r in refused] == [401] * 4
    assert [r.headers["www-authenticate"] for r in refused] == [CHALLENGES] * 4
    assert refused[0].json()["error"]["code"] == -31401
    assert refused[1].json()["error"]["status"] == "UNAUTHENTICATED"
    refusal_lines = [r.getMessage() for r in caplog.records if r.name == "parley.auth"]
    assert len(refusal_lines) == 4
    assert not any(r.exc_info for r in caplog.records)
    assert "wrong" not in caplog.text
    # the public card declares what was just enforced
    assert card.status_code == 200
    assert set(card.json()["securitySchemes"]) == {"apiKey", "bearer"}
    assert card.json()["securityRequirements"] == [
        {"schemes": {"apiKey": {}}},
        {"schemes": {"bearer": {}}},
    ]
    assert card.json()["security"] == [{"apiKey": []}, {"bearer": []}]


def test_grpc_refusals_are_unauthenticated(tmp_path: Path) -> None:
    async def scenario() -> list[grpc.StatusCode]:
        async with serving(tmp_path) as served:
            codes = []
            async with grpc.aio.insecure_channel(served.grpc_address) as channel:
                for service in ("lf.a2a.v1.A2AService", "a2a.v1.A2AService"):
                    call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
                        f"/{service}/GetTask"
                    )
                    try:
                        await call(b"", metadata=(("x-api-key", "wrong"),), timeout=5)
                    except grpc.aio.AioRpcError as error:
                        codes.append(error.code())
            return codes

    assert run(scenario()) == [grpc.StatusCode.UNAUTHENTICATED] * 2


def test_the_extended_card_needs_a_principal() -> None:
    agent = secured_agent()
    security = Security(ApiKeys(KEYS), anonymous=True)
    capabilities = replace(agent.capabilities, extended_agent_card=True)
    card = agent.card("http://a.example", capabilities=capabilities)
    service = AgentService(agent.executor(), card, extended_card=card, security=security)
    request = GetExtendedAgentCardRequest()
    with pytest.raises(UnauthenticatedError, match="authenticated callers"):
        run(service.get_extended_agent_card(CallContext(), request))
    extended = run(service.get_extended_agent_card(CallContext(caller=Caller("alice")), request))
    assert extended.security_schemes == service.card.security_schemes  # declared the same
    assert "apiKey" in extended.security_schemes


def test_the_extended_card_can_be_tailored_per_principal() -> None:
    agent = secured_agent()
    capabilities = replace(agent.capabilities, extended_agent_card=True)
    card = agent.card("http://a.example", capabilities=capabilities)

    async def for_caller(caller: Caller) -> AgentCard:
        return replace(card, description=f"for {caller.id}")

    service = AgentService(
        agent.executor(), card, extended_card=for_caller, security=agent.security
    )
    request = GetExtendedAgentCardRequest()
    alice = run(service.get_extended_agent_card(CallContext(caller=Caller("alice")), request))
    bob = run(service.get_extended_agent_card(CallContext(caller=Caller("bob")), request))
    assert (alice.description, bob.description) == ("for alice", "for bob")
    assert set(alice.security_schemes) == {"apiKey", "bearer"}  # declared as served
    with pytest.raises(UnauthenticatedError):
        run(service.get_extended_agent_card(CallContext(), request))


def test_shared_tasks_let_every_authenticated_caller_see_every_task(tmp_path: Path) -> None:
    """The documented shared mode: one team behind several credentials; the anonymous
    principal (when let in) keeps its own tasks, and tenants stay apart."""
    agent = secured_agent()
    security = Security(ApiKeys(KEYS), anonymous=True, shared_tasks=True)
    service = sqlite_service(agent, tmp_path, security=security)
    alice, bob = CallContext(caller=Caller("alice")), CallContext(caller=Caller("bob"))
    anonymous, elsewhere = CallContext(), CallContext(caller=Caller("bob"), tenant="other")

    async def scenario() -> None:
        await service.startup()
        try:
            task = await service.send_message(alice, send("shared"))
            assert isinstance(task, Task)
            seen = await service.get_task(bob, GetTaskRequest(id=task.id))
            assert seen.id == task.id
            listed = await service.list_tasks(bob, ListTasksRequest())
            assert [t.id for t in listed.tasks] == [task.id]
            for outsider in (anonymous, elsewhere):
                with pytest.raises(TaskNotFoundError):
                    await service.get_task(outsider, GetTaskRequest(id=task.id))
        finally:
            await service.shutdown()

    run(scenario())
    assert Security(ApiKeys(KEYS)).owner(Caller("alice")) == "alice"
