"""JWT bearer tokens end to end: an agent served for real (uvicorn, gRPC, SQLite) whose keys
come from a JWKS endpoint on 127.0.0.1. A good token works on every binding in both
versions and its principal's tasks are its own; every kind of bad token is a 401 (gRPC
UNAUTHENTICATED) with RFC 6750's `invalid_token`, never a 500; a token without a skill's
scopes is a 403 (PERMISSION_DENIED); the card declares all of it."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest

from parley.asgi import build_app
from parley.client import BearerAuth, CallOptions, JsonRpcTransport, RestTransport
from parley.client.grpc import GrpcTransport
from parley.client.transport import Transport
from parley.grpc import GrpcServer
from parley.model import GetTaskRequest, Message, Role, SendMessageRequest, Task, TextPart
from parley.protocol.errors import PermissionDeniedError, TaskNotFoundError, UnauthenticatedError
from parley.protocol.negotiation import RELEASED_VERSIONS
from parley.server.agent import SKILL_METADATA_KEY, Agent
from parley.server.auth import JwtBearer, Security
from parley.server.task_context import TaskContext
from tests.asgi.live import running
from tests.auth.jwt_support import (
    AUDIENCE,
    ISSUER,
    Endpoint,
    b64,
    claims,
    jwks,
    jwks_server,
    rsa_key,
)
from tests.auth.support import sqlite_service
from tests.contracts.support import run
from tests.ports import free_port

KEY = rsa_key("k1")
OPTIONS = CallOptions(timeout=10)
V1 = {"A2A-Version": "1.0"}


def reports_agent(endpoint: Endpoint) -> Agent:
    bearer = JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_url=endpoint.jwks_url)
    agent = Agent("Reports", security=Security(bearer))

    @agent.skill()
    async def read(task: TaskContext) -> str:
        return f"report for {task.text}"

    @agent.skill(scopes=["reports:write"])
    async def write(task: TaskContext) -> str:
        return "written"

    return agent


@dataclass
class Served:
    url: str
    grpc_address: str
    endpoint: Endpoint

    def transports(self, token: str) -> list[Transport]:
        auth = BearerAuth(token)
        out: list[Transport] = []
        for version in RELEASED_VERSIONS:
            out.append(JsonRpcTransport(self.url + "/", version, auth=auth))
            out.append(RestTransport(self.url, version, auth=auth))
            out.append(GrpcTransport(self.grpc_address, version, auth=auth))
        return out


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    with jwks_server(jwks(KEY)) as served:
        yield served


@asynccontextmanager
async def serving(tmp_path: Path, endpoint: Endpoint) -> AsyncIterator[Served]:
    agent = reports_agent(endpoint)
    service = sqlite_service(agent, tmp_path)
    with running(build_app(service)) as url:
        async with GrpcServer(service, port=free_port()) as server:
            yield Served(url, server.address, endpoint)


def name(transport: Transport) -> str:
    return f"{type(transport).__name__} {transport.version.value}"


def send(text: str, skill: str | None = None) -> SendMessageRequest:
    metadata = {SKILL_METADATA_KEY: skill} if skill else None
    return SendMessageRequest(
        message=Message(
            message_id=f"m-{text}", role=Role.USER, parts=(TextPart(text=text),), metadata=metadata
        )
    )


def test_a_good_token_works_everywhere_and_isolates_its_principal(
    tmp_path: Path, endpoint: Endpoint
) -> None:
    alice, bob = KEY.sign(claims(sub="alice")), KEY.sign(claims(sub="bob"))

    async def scenario() -> list[str]:
        problems: list[str] = []
        async with serving(tmp_path, endpoint) as served:
            for index, owner in enumerate(served.transports(alice)):
                task = await owner.send_message(send(f"q{index}"), OPTIONS)
                assert isinstance(task, Task), name(owner)
                text = task.artifacts[0].parts[0]
                if text != TextPart(text=f"report for q{index}"):
                    problems.append(f"{name(owner)}: {text}")
                for other in served.transports(bob):
                    try:
                        await other.get_task(GetTaskRequest(id=task.id), OPTIONS)
                        problems.append(f"{name(other)}: another principal's task answered")
                    except TaskNotFoundError:
                        pass
                    finally:
                        await other.aclose()
                await owner.aclose()
        return problems

    assert run(scenario()) == []
    assert endpoint.count() == 1  # one fetch served every binding


def test_a_token_without_a_skills_scopes_is_denied_everywhere(
    tmp_path: Path, endpoint: Endpoint
) -> None:
    reader = KEY.sign(claims(scope="reports:read"))
    writer = KEY.sign(claims(scope="reports:read reports:write"))

    async def scenario() -> list[str]:
        problems: list[str] = []
        async with serving(tmp_path, endpoint) as served:
            for transport in served.transports(reader):
                try:
                    await transport.send_message(send("w", "write"), OPTIONS)
                    problems.append(f"{name(transport)}: a reader ran the write skill")
                except PermissionDeniedError:
                    pass
                finally:
                    await transport.aclose()
            for transport in served.transports(writer):
                task = await transport.send_message(send("w", "write"), OPTIONS)
                assert isinstance(task, Task)
                if task.artifacts[0].parts != (TextPart(text="written"),):
                    problems.append(f"{name(transport)}: the writer was not served")
                await transport.aclose()
        return problems

    assert run(scenario()) == []


def bad_tokens() -> dict[str, str]:
    now = int(time.time())
    stranger = rsa_key("k1")
    return {
        "expired": KEY.sign(claims(exp=now - 3600)),
        "not yet valid": KEY.sign(claims(nbf=now + 3600)),
        "wrong audience": KEY.sign(claims(aud="urn:agent:other")),
        "wrong issuer": KEY.sign(claims(iss="https://evil.example")),
        "alg none": b64(b'{"alg":"none"}') + "." + b64(json.dumps(claims()).encode()) + ".",
        "forged signature": stranger.sign(claims()),
        "unknown kid": rsa_key("k9").sign(claims()),
        "huge": KEY.sign(claims(pad="x" * 10_000)),
        "malformed": "not-a-jwt",
    }


def test_every_bad_token_is_a_401_with_invalid_token_never_a_500(
    tmp_path: Path, endpoint: Endpoint
) -> None:
    tokens = bad_tokens()

    async def scenario() -> dict[str, list[tuple[int, str]]]:
        answers: dict[str, list[tuple[int, str]]] = {}
        async with (
            serving(tmp_path, endpoint) as served,
            httpx.AsyncClient(base_url=served.url) as http,
        ):
            for case, token in tokens.items():
                auth = {"Authorization": f"Bearer {token}"}
                body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
                responses = [
                    await http.post("/", json=body, headers={**V1, **auth}),
                    await http.get("/tasks/t", headers={**V1, **auth}),
                    await http.get("/v1/tasks/t", headers=auth),
                ]
                answers[case] = [
                    (r.status_code, r.headers.get("www-authenticate", "")) for r in responses
                ]
        return answers

    for case, answers in run(scenario()).items():
        for status, challenge in answers:
            assert status == 401, case
            assert challenge.startswith('Bearer realm="a2a", error="invalid_token"'), case


def test_grpc_refuses_bad_tokens_as_unauthenticated(tmp_path: Path, endpoint: Endpoint) -> None:
    """gRPC itself may refuse metadata over its 8 KiB soft limit (RESOURCE_EXHAUSTED, at
    random up to its hard limit) before the agent sees the huge token; whatever reaches the
    agent is refused by it."""
    tokens = bad_tokens()

    async def scenario() -> dict[str, grpc.StatusCode]:
        codes = {}
        async with (
            serving(tmp_path, endpoint) as served,
            grpc.aio.insecure_channel(served.grpc_address) as channel,
        ):
            call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
                "/lf.a2a.v1.A2AService/GetTask"
            )
            for case, token in tokens.items():
                metadata = (("authorization", f"Bearer {token}"), ("a2a-version", "1.0"))
                try:
                    await call(b"", metadata=metadata, timeout=5)
                except grpc.aio.AioRpcError as error:
                    codes[case] = error.code()
        return codes

    codes = run(scenario())
    huge = codes.pop("huge")
    assert huge in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAUTHENTICATED)
    assert codes == {case: grpc.StatusCode.UNAUTHENTICATED for case in tokens if case != "huge"}


def test_the_client_sees_unauthenticated(tmp_path: Path, endpoint: Endpoint) -> None:
    expired = KEY.sign(claims(exp=int(time.time()) - 3600))

    async def scenario() -> list[str]:
        problems = []
        async with serving(tmp_path, endpoint) as served:
            for transport in served.transports(expired):
                try:
                    await transport.send_message(send("x"), OPTIONS)
                    problems.append(f"{name(transport)}: accepted")
                except UnauthenticatedError as error:
                    if "expired" not in error.message:
                        problems.append(f"{name(transport)}: {error.message}")
                finally:
                    await transport.aclose()
        return problems

    assert run(scenario()) == []


def test_the_card_declares_the_scheme_and_the_skills_scopes(
    tmp_path: Path, endpoint: Endpoint
) -> None:
    async def scenario() -> httpx.Response:
        async with (
            serving(tmp_path, endpoint) as served,
            httpx.AsyncClient(base_url=served.url) as http,
        ):
            return await http.get("/.well-known/agent-card.json")

    card = run(scenario()).json()
    assert card["securitySchemes"]["jwt"]["httpAuthSecurityScheme"]["bearerFormat"] == "JWT"
    assert card["securityRequirements"] == [{"schemes": {"jwt": {}}}]
    skills = {skill["id"]: skill for skill in card["skills"]}
    assert "securityRequirements" not in skills["read"]
    assert skills["write"]["securityRequirements"] == [
        {"schemes": {"jwt": {"list": ["reports:write"]}}}
    ]
    assert skills["write"]["security"] == [{"jwt": ["reports:write"]}]
