"""`wire_compat`: the v1.0.0 error table on request, v1.0.1's by default (REFERENCE §6.2,
D17), through every binding. v1.0.0 differs in six cells: HTTP 409 / 415 / 502 for
TaskNotCancelable / ContentTypeNotSupported / InvalidAgentResponse, gRPC `UNIMPLEMENTED`
for PushNotificationNotSupported / UnsupportedOperation / VersionNotSupported. JSON-RPC
codes and every 0.3 status are the same in both tables.

A handler raises the error named by the requested task id, so each cell is reached on
every binding; two cases go through the real checks (a cancel of a terminal task, an
unserved `A2A-Version`). Expected values are written out from REFERENCE §6.2, not read
from `parley.wire.errors`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc as grpc03
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc as grpc10

from parley.asgi import build_app
from parley.cli.main import build_parser
from parley.grpc import GrpcServer
from parley.model import GetTaskRequest, Task
from parley.protocol import errors as e
from parley.server.context import CallContext
from parley.wire.errors import WIRE_COMPAT, error_table
from tests.asgi.fakes import FakeHandler
from tests.ports import free_port

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}


@dataclass(frozen=True)
class Cell:
    """One error in both tables: (HTTP, gRPC) for 1.0 requests; the 0.3 statuses."""

    error: type[e.A2AError]
    code: int
    v1_0_1: tuple[int, str]
    v1_0_0: tuple[int, str]
    http_v03: int
    grpc_v03: str


CELLS = {
    "not-cancelable": Cell(
        e.TaskNotCancelableError,
        -32002,
        (400, "FAILED_PRECONDITION"),
        (409, "FAILED_PRECONDITION"),
        409,
        "UNIMPLEMENTED",
    ),
    "push-not-supported": Cell(
        e.PushNotificationNotSupportedError,
        -32003,
        (400, "FAILED_PRECONDITION"),
        (400, "UNIMPLEMENTED"),
        501,
        "UNIMPLEMENTED",
    ),
    "unsupported": Cell(
        e.UnsupportedOperationError,
        -32004,
        (400, "FAILED_PRECONDITION"),
        (400, "UNIMPLEMENTED"),
        501,
        "UNIMPLEMENTED",
    ),
    "content-type": Cell(
        e.ContentTypeNotSupportedError,
        -32005,
        (400, "INVALID_ARGUMENT"),
        (415, "INVALID_ARGUMENT"),
        415,
        "UNIMPLEMENTED",
    ),
    "invalid-response": Cell(
        e.InvalidAgentResponseError, -32006, (500, "INTERNAL"), (502, "INTERNAL"), 502, "INTERNAL"
    ),
    "version": Cell(
        e.VersionNotSupportedError,
        -32009,
        (400, "FAILED_PRECONDITION"),
        (400, "UNIMPLEMENTED"),
        400,
        "UNKNOWN",
    ),
    # Unchanged between the tables (a control).
    "not-found": Cell(
        e.TaskNotFoundError, -32001, (404, "NOT_FOUND"), (404, "NOT_FOUND"), 404, "NOT_FOUND"
    ),
}
COMPATS = ["1.0.1", "1.0.0"]
PARAMS = [pytest.param(name, compat, id=f"{name}-{compat}") for name in CELLS for compat in COMPATS]


def expected(name: str, compat: str) -> tuple[int, str]:
    cell = CELLS[name]
    return cell.v1_0_0 if compat == "1.0.0" else cell.v1_0_1


class Raising(FakeHandler):
    """GetTask raises the error its task id names (a CELLS key)."""

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        cell = CELLS.get(request.id)
        if cell is not None:
            raise cell.error("raised for the test")
        return await super().get_task(ctx, request)


@asynccontextmanager
async def http(compat: str | None) -> AsyncIterator[httpx.AsyncClient]:
    app = build_app(Raising()) if compat is None else build_app(Raising(), wire_compat=compat)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


@asynccontextmanager
async def live_grpc(compat: str) -> AsyncIterator[grpc.aio.Channel]:
    server = GrpcServer(Raising(), port=free_port(), wire_compat=compat)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            yield channel
    finally:
        await server.stop(0)


# ----------------------------------------------------------------------------- the table


def test_the_tables_differ_in_exactly_the_six_cells() -> None:
    new, old = WIRE_COMPAT["1.0.1"], WIRE_COMPAT["1.0.0"]
    assert new.keys() == old.keys()
    changed = {cls for cls in new if new[cls] != old[cls]}
    assert changed == {c.error for c in CELLS.values() if c.v1_0_0 != c.v1_0_1}
    for cls in changed:  # only the 1.0 HTTP and gRPC columns
        a, b = new[cls], old[cls]
        assert (a.jsonrpc_code, a.reason, a.http_status_v03, a.grpc_status_v03) == (
            b.jsonrpc_code,
            b.reason,
            b.http_status_v03,
            b.grpc_status_v03,
        )


def test_an_unknown_release_is_refused() -> None:
    with pytest.raises(ValueError, match="wire_compat"):
        error_table("1.0.2")
    with pytest.raises(ValueError, match="wire_compat"):
        build_app(FakeHandler(), wire_compat="0.9")
    with pytest.raises(ValueError, match="wire_compat"):
        GrpcServer(FakeHandler(), wire_compat="1.1")


def test_serve_option() -> None:
    parser = build_parser()
    assert parser.parse_args(["serve", "m:a"]).wire_compat == "1.0.1"
    assert parser.parse_args(["serve", "m:a", "--wire-compat", "1.0.0"]).wire_compat == "1.0.0"
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "m:a", "--wire-compat", "1.0.2"])


# ----------------------------------------------------------------------------- HTTP


@pytest.mark.parametrize(("name", "compat"), PARAMS)
async def test_rest_1_0(name: str, compat: str) -> None:
    async with http(compat) as client:
        response = await client.get(f"/tasks/{name}", headers=V1)
    status, grpc_name = expected(name, compat)
    assert response.status_code == status
    error = response.json()["error"]
    assert (error["code"], error["status"]) == (status, grpc_name)


async def test_rest_default_is_1_0_1() -> None:
    async with http(None) as client:
        for name in CELLS:
            response = await client.get(f"/tasks/{name}", headers=V1)
            assert response.status_code == CELLS[name].v1_0_1[0]


@pytest.mark.parametrize(("name", "compat"), PARAMS)
async def test_rest_0_3_unchanged(name: str, compat: str) -> None:
    async with http(compat) as client:
        response = await client.get(f"/v1/tasks/{name}")
    assert response.status_code == CELLS[name].http_v03


@pytest.mark.parametrize(("name", "compat"), PARAMS)
@pytest.mark.parametrize(("method", "headers"), [("GetTask", V1), ("tasks/get", {})])
async def test_jsonrpc_unchanged(name: str, compat: str, method: str, headers: Any) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": name}}
    async with http(compat) as client:
        response = await client.post("/", json=body, headers=headers)
    assert response.status_code == 200
    assert response.json()["error"]["code"] == CELLS[name].code


@pytest.mark.parametrize("compat", COMPATS)
async def test_rest_real_checks(compat: str) -> None:
    """A terminal task's cancel, and an unserved version (answered in 1.0 over REST)."""
    async with http(compat) as client:
        cancel = await client.post("/tasks/done-1:cancel", headers=V1)
        version = await client.get("/tasks/task-1", headers={"A2A-Version": "2.0"})
    assert cancel.status_code == expected("not-cancelable", compat)[0]
    assert version.status_code == 400
    assert version.json()["error"]["status"] == expected("version", compat)[1]


# ----------------------------------------------------------------------------- gRPC


@pytest.mark.parametrize("compat", COMPATS)
async def test_grpc(compat: str) -> None:
    """1.0 calls get the table's status, 0.3 calls the same in both."""
    async with live_grpc(compat) as channel:
        v1, v03 = grpc10.A2AServiceStub(channel), grpc03.A2AServiceStub(channel)
        for name, cell in CELLS.items():
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await v1.GetTask(pb.GetTaskRequest(id=name), metadata=(("a2a-version", "1.0"),))
            assert raised.value.code().name == expected(name, compat)[1], name
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await v03.GetTask(pb03.GetTaskRequest(name=f"tasks/{name}"))
            assert raised.value.code().name == cell.grpc_v03, name


@pytest.mark.parametrize("compat", COMPATS)
async def test_grpc_real_version_check(compat: str) -> None:
    async with live_grpc(compat) as channel:
        stub = grpc10.A2AServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.GetTask(pb.GetTaskRequest(id="task-1"), metadata=(("a2a-version", "2.0"),))
    assert raised.value.code().name == expected("version", compat)[1]
