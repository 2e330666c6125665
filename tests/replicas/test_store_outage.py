"""PostgreSQL briefly unreachable (its connections cut, new ones refused, through a
forwarder the test controls): requests get UnavailableError — HTTP 503 on HTTP+JSON,
JSON-RPC -32000 — not a 500, and once PostgreSQL is back the same requests succeed,
with nothing written half."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import httpx
import pytest

from parley.asgi import build_app
from parley.model import GetTaskRequest, Task, TaskState
from parley.protocol.errors import UnavailableError
from parley.server.context import CallContext
from parley.server.service import AgentService
from parley.server.stores.urls import open_store
from tests.contracts.conftest import require_postgres
from tests.contracts.support import create_schema, drop_schema
from tests.replicas.agent import agent
from tests.server.support import run, send

POSTGRES = ("127.0.0.1", 5432)
DSN = "postgresql://postgres@127.0.0.1:5432/test"


class Forwarder:
    """TCP from a local port to PostgreSQL; `cut` refuses and resets, `restore` mends."""

    def __init__(self) -> None:
        self.port = 0
        self.server: asyncio.Server | None = None
        self.pipes: set[asyncio.StreamWriter] = set()

    async def restore(self) -> None:
        self.server = await asyncio.start_server(self._pipe, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.pipes):
            writer.transport.abort()
        await self.server.wait_closed()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(*POSTGRES)
        self.pipes |= {writer, upstream_writer}

        async def copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.transport.abort()

        await asyncio.gather(copy(reader, upstream_writer), copy(upstream_reader, writer))
        self.pipes -= {writer, upstream_writer}


@pytest.fixture
def schema() -> Iterator[str]:
    """A fresh schema on the real PostgreSQL server, dropped afterwards."""
    require_postgres()
    name = asyncio.run(create_schema())
    yield name
    asyncio.run(drop_schema(name))


def test_postgres_briefly_unreachable_gives_503_and_then_works(schema: str) -> None:
    async def main() -> None:
        forwarder = Forwarder()
        await forwarder.restore()
        url = f"postgresql://postgres@127.0.0.1:{forwarder.port}/test?schema={schema}"
        tasks, configs = open_store(url)
        service = AgentService(
            agent.executor(), agent.card("http://test"), store=tasks, push_store=configs
        )
        await service.startup()
        app = build_app(service)
        transport = httpx.ASGITransport(app=app)
        ctx = CallContext()
        try:
            before = await service.send_message(ctx, send("hi", metadata={"skill": "quick"}))
            assert isinstance(before, Task)
            await forwarder.cut()
            with pytest.raises(UnavailableError, match="task store is unreachable"):
                await service.get_task(ctx, GetTaskRequest(id=before.id))
            with pytest.raises(UnavailableError):
                await service.send_message(ctx, send("lost", metadata={"skill": "quick"}))
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
                rest = await http.get(f"/tasks/{before.id}", headers={"A2A-Version": "1.0"})
                assert rest.status_code == 503
                assert "UNAVAILABLE" in rest.text
                body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": before.id}}
                rpc = (await http.post("/", json=body, headers={"A2A-Version": "1.0"})).json()
                assert rpc["error"]["code"] == -32000
            await forwarder.restore()
            again = await service.get_task(ctx, GetTaskRequest(id=before.id))
            assert again == before
            after = await service.send_message(ctx, send("back", metadata={"skill": "quick"}))
            assert isinstance(after, Task)
            assert after.status.state is TaskState.COMPLETED
        finally:
            await service.shutdown()
            with contextlib.suppress(Exception):
                await forwarder.cut()

    run(main(), timeout=60)
