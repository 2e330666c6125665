"""The official `a2a-sdk` client (1.0) against a Parley server that also serves the A2A
1.1 draft (`parley serve --a2a-1.1-draft`): its card lists 1.1 interfaces beside the 1.0
ones, the SDK still connects, and no byte it receives (JSON-RPC answers, HTTP+JSON
answers, SSE streams) carries a `generation`: 1.0 requests never see the draft's fields.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb

from parley.asgi import A2AApp, build_app
from parley.cli.a2a_draft import DEFAULT_SERVED, with_interfaces
from parley.protocol.negotiation import DRAFT_VERSIONS
from parley.server.service import AgentService
from tests.interop.agent import Probe, build_agent
from tests.interop.live import serving

pytestmark = pytest.mark.anyio

VERSIONS = (DEFAULT_SERVED[0], *DRAFT_VERSIONS, *DEFAULT_SERVED[1:])


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    agent = build_agent(Probe())

    def make_app(base: str) -> A2AApp:
        card = with_interfaces(agent.card(base), VERSIONS)
        return build_app(AgentService(agent.executor(), card), served_versions=VERSIONS)

    with serving(make_app) as base:
        yield base


class Recording(httpx.AsyncBaseTransport):
    """A transport that keeps every response body it passes on (streams included)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.received = bytearray()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        received = self.received
        upstream = response.stream

        class Tee(httpx.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in upstream:  # type: ignore[union-attr]
                    received.extend(chunk)
                    yield chunk

            async def aclose(self) -> None:
                await upstream.aclose()  # type: ignore[union-attr]

        return httpx.Response(
            response.status_code, headers=response.headers, stream=Tee(), request=request
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


def text_message(text: str, skill: str) -> pb.Message:
    message = pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER)
    message.parts.add(text=text)
    message.metadata.update({"skill": skill})
    return message


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("streaming", [False, True])
async def test_the_sdk_never_sees_a_generation(url: str, binding: str, streaming: bool) -> None:
    recording = Recording()
    async with httpx.AsyncClient(transport=recording, timeout=10) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        assert {i.protocol_version for i in card.supported_interfaces} == {"1.0", "1.1", "0.3"}
        config = ClientConfig(
            supported_protocol_bindings=[binding], streaming=streaming, httpx_client=http
        )
        client = ClientFactory(config).create(card)
        try:
            events: list[Any] = []
            request = pb.SendMessageRequest(message=text_message("hi", "chunks"))
            async for event in client.send_message(request):
                events.append(event)
            task_id = next(e.task.id for e in events if e.HasField("task"))
            got = await client.get_task(pb.GetTaskRequest(id=task_id))
            assert got.status.state == pb.TASK_STATE_COMPLETED
        finally:
            await client.close()
    assert b"gamma" in recording.received  # the chunks skill's last chunk went through it
    assert b"generation" not in bytes(recording.received)
