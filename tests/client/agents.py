"""The Parley agent the client tests talk to: the interop agent's skills (echo, slow,
chunks, until_cancelled, background, greet) plus a direct reply, `whoami` (the caller and
the activated extensions, as the server saw them) and two agents silent until the test
opens their gate."""

from __future__ import annotations

from collections.abc import AsyncIterator

from parley.model import AgentCapabilities, AgentCard, AgentExtension, AgentInterface, Message
from parley.server.agent import Agent
from parley.server.context import AuthRequest, Caller
from parley.server.task_context import TaskContext
from tests.interop.agent import STREAM_CHUNKS, Probe, build_agent, wait_for

TENANT = "acme"
EXTENSION = "urn:parley:test:required/v1"
OPTIONAL_EXTENSION = "urn:parley:test:optional/v1"
TOKEN = "s3cret"
API_KEY = "k3y"


def build_client_agent(probe: Probe) -> Agent:
    agent = build_agent(probe)

    @agent.skill()
    async def direct(task: TaskContext) -> Message:
        """Reply with a message, no task."""
        return task.reply(f"direct: {task.text}")

    @agent.skill()
    async def whoami(task: TaskContext) -> Message:
        """Reply with the caller's id and the activated extensions."""
        return task.reply(f"{task.caller.id}|{','.join(task.extensions)}")

    @agent.skill()
    async def silent_start(task: TaskContext) -> AsyncIterator[str]:
        """Say nothing at all (no task yet: no response yet) until the test opens the gate
        of `text`, then stream the chunks."""
        probe.started(task.text).set()
        await wait_for(probe.gate(task.text))
        for chunk in STREAM_CHUNKS:
            yield chunk

    @agent.skill()
    async def silent_middle(task: TaskContext) -> AsyncIterator[str]:
        """WORKING at once, then silent until the test opens the gate of `text`, then the
        chunks."""
        await task.update("thinking")
        probe.started(task.text).set()
        await wait_for(probe.gate(task.text))
        for chunk in STREAM_CHUNKS:
            yield chunk

    return agent


def client_card(
    agent: Agent,
    url: str,
    *,
    required_extension: bool = True,
    bindings: tuple[str, ...] = ("JSONRPC", "HTTP+JSON"),
    grpc_address: str | None = None,
) -> AgentCard:
    """Every capability; 1.0 interfaces (`bindings` at `url`, then gRPC at `grpc_address`
    if given) under the tenant `acme`, then the 0.3 ones; the
    `urn:parley:test:required/v1` extension declared required (or optional)."""
    base = agent.card(url, bindings=bindings, grpc_address=grpc_address)
    interfaces = tuple(
        AgentInterface(
            url=i.url,
            protocol_binding=i.protocol_binding,
            protocol_version=i.protocol_version,
            tenant=TENANT
            if i.protocol_version == base.supported_interfaces[0].protocol_version
            else "",
        )
        for i in base.supported_interfaces
    )
    extensions = (
        AgentExtension(uri=EXTENSION, required=required_extension),
        AgentExtension(uri=OPTIONAL_EXTENSION),
    )
    capabilities = AgentCapabilities(
        streaming=True, push_notifications=True, extended_agent_card=True, extensions=extensions
    )
    return agent.card(url, supported_interfaces=interfaces, capabilities=capabilities)


class TokenAuthenticator:
    """Bearer `s3cret` → caller `bearer-user`; API key `k3y` (header or cookie) →
    `key-user`; anything else → anonymous."""

    async def authenticate(self, request: AuthRequest) -> Caller:
        headers = request.headers
        if headers.get("authorization") == f"Bearer {TOKEN}":
            return Caller(id="bearer-user")
        if headers.get("x-api-key") == API_KEY or request.cookie("api_key") == API_KEY:
            return Caller(id="key-user")
        return Caller()
