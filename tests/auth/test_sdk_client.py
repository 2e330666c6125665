"""The official a2a-sdk client against an agent that requires credentials: in 1.0 and in
its 0.3 compatibility mode, over JSON-RPC, HTTP+JSON and gRPC. Credentials go in the way
an SDK application adds them: its `AuthInterceptor`, which reads the schemes from Parley's
card — so the card must declare exactly what the server checks. Without credentials the
SDK surfaces the 401 / UNAUTHENTICATED answer.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.auth import AuthInterceptor, InMemoryContextCredentialStore
from a2a.types import a2a_pb2 as pb

from parley.asgi import build_app
from parley.grpc import GrpcServer
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, BearerTokens, Security
from parley.server.task_context import TaskContext
from tests.auth.support import sqlite_service
from tests.contracts.support import run
from tests.interop.live import serving
from tests.interop.test_sdk_client import Mode, narrowed
from tests.ports import free_port

MODES = [(v, b) for v in ("1.0", "0.3") for b in ("JSONRPC", "HTTP+JSON", "GRPC")]
SESSION = "session-1"


def make_app(tmp_path: Path, grpc_port: int) -> Any:
    def build(url: str) -> Any:
        agent = Agent(
            "Guarded",
            security=Security(ApiKeys({"key-alice": "alice"}), BearerTokens({"tok-bob": "bob"})),
        )

        @agent.skill()
        async def whoami(task: TaskContext) -> str:
            return f"{task.caller.id}: {task.text}"

        card = agent.card(url, grpc_address=f"127.0.0.1:{grpc_port}")
        service = sqlite_service(agent, tmp_path, card=card)
        build.service = service  # type: ignore[attr-defined]
        return build_app(service)

    return build


@asynccontextmanager
async def sdk_client(
    url: str, version: str, binding: str, scheme: str | None
) -> AsyncIterator[Any]:
    """An SDK client for one interface; with `scheme`, its credential in the SDK's store."""
    async with httpx.AsyncClient(timeout=10) as http:
        card = narrowed(await A2ACardResolver(http, url).get_agent_card(), Mode(version, binding))
        interceptors = []
        if scheme is not None:
            store = InMemoryContextCredentialStore()
            secret = {"apiKey": "key-alice", "bearer": "tok-bob"}[scheme]
            await store.set_credentials(SESSION, scheme, secret)
            interceptors.append(AuthInterceptor(store))
        config = ClientConfig(
            supported_protocol_bindings=[binding],
            streaming=False,
            httpx_client=http,
            grpc_channel_factory=lambda target: grpc.aio.insecure_channel(
                target.removeprefix("grpc://")
            ),
        )
        client = ClientFactory(config).create(card, interceptors=interceptors)
        try:
            yield client
        finally:
            await client.close()


def session() -> ClientCallContext:
    """A fresh call context naming the session (the SDK's interceptor writes into it)."""
    return ClientCallContext(state={"sessionId": SESSION})


def request(text: str) -> Any:
    message = pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)]
    )
    return pb.SendMessageRequest(message=message)


async def exercise(url: str) -> tuple[list[str], list[str]]:
    """Each mode with each scheme's credential (the answer names the principal), and
    without: what went wrong, and how each refusal read."""
    problems, refusals = [], []
    for version, binding in MODES:
        for scheme, principal in (("apiKey", "alice"), ("bearer", "bob")):
            async with sdk_client(url, version, binding, scheme) as client:
                try:
                    sent = client.send_message(request("hi"), context=session())
                    task = (await anext(aiter(sent))).task
                    got = await client.get_task(pb.GetTaskRequest(id=task.id), context=session())
                    answer = got.artifacts[0].parts[0].text
                    if answer != f"{principal}: hi":
                        problems.append(f"{version} {binding} {scheme}: answered {answer!r}")
                except Exception as error:
                    problems.append(f"{version} {binding} {scheme}: {error!r}")
        async with sdk_client(url, version, binding, None) as client:
            try:
                _ = [e async for e in client.send_message(request("hi"))]
                problems.append(f"{version} {binding}: accepted without credentials")
            except Exception as error:
                refusals.append(f"{version} {binding}: {type(error).__name__}: {error}")
    return problems, refusals


def test_the_official_client_with_credentials_works_and_without_is_refused(
    tmp_path: Path,
) -> None:
    grpc_port = free_port()
    build = make_app(tmp_path, grpc_port)

    async def scenario(url: str) -> tuple[list[str], list[str]]:
        async with GrpcServer(build.service, port=grpc_port):
            return await exercise(url)

    with serving(build) as url:
        problems, refusals = run(scenario(url), timeout=120)
    assert problems == []
    assert len(refusals) == len(MODES)
    for refusal in refusals:
        assert any(mark in refusal for mark in ("401", "UNAUTHENTICATED", "Unauthenticated")), (
            refusal
        )
