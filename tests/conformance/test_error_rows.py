"""Every row of the v1.0.1 error table (REFERENCE §6.2), and a validation error, on every
binding of a 1.0 request, read off the wire (raw JSON and the official SDK's generated
gRPC stubs, not Parley's codecs):

* JSON-RPC: the row's code; `error.data` an array of typed details (R-ERR-17/25).
* HTTP+JSON: the row's HTTP status; a google.rpc.Status body whose `status` is the row's
  gRPC status name and whose `details` hold the ErrorInfo (R-ERR-17/24).
* gRPC: the row's status code; the `grpc-status-details-bin` trailer's google.rpc.Status
  with the ErrorInfo packed as an `Any` (R-ERR-23).

On each, the first detail is a google.rpc.ErrorInfo (reason UPPER_SNAKE without `Error`,
domain `a2a-protocol.org`, string metadata); a validation error adds a google.rpc.BadRequest
naming the field (R-ERR-10/18). And the Parley client reads each row back into its class
on every binding from a server emitting either table (D17: clients tolerate both).

A handler raises the row's error for the requested task id, so each row is reached on
every binding; the real triggers are in test_error_table.py and tests/equivalence. The
expected cells are written out from REFERENCE §6.2, not read from `parley.wire.errors`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import pytest
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc as grpc10
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from parley.asgi import build_app
from parley.client import Client, JsonRpcTransport, RestTransport
from parley.client.grpc import GrpcTransport
from parley.client.transport import Transport
from parley.grpc import GrpcServer
from parley.model import GetTaskRequest, Task
from parley.protocol import errors as e
from parley.protocol.negotiation import Version
from parley.server.context import CallContext
from tests.asgi.fakes import FakeHandler
from tests.ports import free_port

pytestmark = pytest.mark.anyio

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
DOMAIN = "a2a-protocol.org"
V1 = {"A2A-Version": "1.0"}
A2A_JSON = "application/a2a+json"
FIELD = e.FieldViolation(field="historyLength", description="must be >= 0, got -1")


@dataclass(frozen=True)
class Row:
    """One error on every binding (v1.0.1 columns of REFERENCE §6.2 / §6.3)."""

    error: type[e.A2AError]
    code: int
    http: int
    grpc: str
    reason: str


ROWS = {
    "task-not-found": Row(e.TaskNotFoundError, -32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"),
    "not-cancelable": Row(
        e.TaskNotCancelableError, -32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"
    ),
    "push-not-supported": Row(
        e.PushNotificationNotSupportedError,
        -32003,
        400,
        "FAILED_PRECONDITION",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    ),
    "unsupported": Row(
        e.UnsupportedOperationError, -32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"
    ),
    "content-type": Row(
        e.ContentTypeNotSupportedError,
        -32005,
        400,
        "INVALID_ARGUMENT",
        "CONTENT_TYPE_NOT_SUPPORTED",
    ),
    "invalid-response": Row(
        e.InvalidAgentResponseError, -32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE"
    ),
    "card-not-configured": Row(
        e.ExtendedAgentCardNotConfiguredError,
        -32007,
        400,
        "FAILED_PRECONDITION",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ),
    "extension-required": Row(
        e.ExtensionSupportRequiredError,
        -32008,
        400,
        "FAILED_PRECONDITION",
        "EXTENSION_SUPPORT_REQUIRED",
    ),
    "version": Row(
        e.VersionNotSupportedError, -32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"
    ),
    # A validation error (REFERENCE §6.3): ErrorInfo, then a BadRequest naming the field.
    "invalid-params": Row(e.InvalidParamsError, -32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
}
assert len(ROWS) == 10


def violations(name: str) -> tuple[e.FieldViolation, ...]:
    return (FIELD,) if name == "invalid-params" else ()


class Raising(FakeHandler):
    """GetTask raises the error its task id names (a ROWS key), with the id as metadata."""

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        row = ROWS.get(request.id)
        if row is None:
            return await super().get_task(ctx, request)
        raise row.error(
            f"raised for {request.id}",
            metadata={"taskId": request.id},
            field_violations=violations(request.id),
        )


@asynccontextmanager
async def over_http(compat: str = "1.0.1") -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=build_app(Raising(), wire_compat=compat))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


@asynccontextmanager
async def over_grpc(compat: str = "1.0.1") -> AsyncIterator[GrpcServer]:
    server = GrpcServer(Raising(), port=free_port(), wire_compat=compat)
    await server.start()
    try:
        yield server
    finally:
        await server.stop(0)


def check_details(details: Any, name: str) -> None:
    """R-ERR-17/18: an array of objects with `@type`; the ErrorInfo first; a BadRequest
    with the field violations of a validation error; nothing else."""
    assert isinstance(details, list)
    assert all(isinstance(d, dict) and isinstance(d.get("@type"), str) for d in details)
    info, *rest = details
    assert info == {
        "@type": ERROR_INFO,
        "reason": ROWS[name].reason,
        "domain": DOMAIN,
        "metadata": {"taskId": name},
    }
    expected = [
        {
            "@type": BAD_REQUEST,
            "fieldViolations": [{"field": f.field, "description": f.description}],
        }
        for f in violations(name)
    ]
    assert rest == expected


@pytest.mark.parametrize("name", ROWS)
async def test_jsonrpc(name: str) -> None:
    body = {"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": name}}
    async with over_http() as client:
        response = await client.post("/", json=body, headers=V1)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == ROWS[name].code
    check_details(error["data"], name)


@pytest.mark.parametrize("name", ROWS)
@pytest.mark.parametrize("accept", ["application/json", A2A_JSON])
async def test_rest(name: str, accept: str) -> None:
    """The Status body, in the media type the client accepts (REFERENCE §2.1)."""
    async with over_http() as client:
        response = await client.get(f"/tasks/{name}", headers={**V1, "Accept": accept})
    row = ROWS[name]
    assert response.status_code == row.http
    assert response.headers["content-type"] == accept
    body = response.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert (error["code"], error["status"]) == (row.http, row.grpc)
    assert error["message"] == f"raised for {name}"
    check_details(error["details"], name)


@pytest.mark.parametrize("name", ROWS)
async def test_grpc(name: str) -> None:
    async with (
        over_grpc() as server,
        grpc.aio.insecure_channel(server.address) as channel,
    ):
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await grpc10.A2AServiceStub(channel).GetTask(
                pb.GetTaskRequest(id=name), metadata=(("a2a-version", "1.0"),)
            )
    row = ROWS[name]
    assert raised.value.code().name == row.grpc
    status = rpc_status.from_call(raised.value)
    assert status is not None
    assert status.code == raised.value.code().value[0]
    assert status.message == f"raised for {name}"
    details: list[dict[str, Any]] = []
    for packed in status.details:
        if packed.type_url == ERROR_INFO:
            info = error_details_pb2.ErrorInfo()
            assert packed.Unpack(info)
            metadata = dict(info.metadata)
            details.append(
                {"@type": ERROR_INFO, "reason": info.reason, "domain": info.domain}
                | ({"metadata": metadata} if metadata else {})
            )
        else:
            assert packed.type_url == BAD_REQUEST
            bad = error_details_pb2.BadRequest()
            assert packed.Unpack(bad)
            found = [{"field": v.field, "description": v.description} for v in bad.field_violations]
            details.append({"@type": BAD_REQUEST, "fieldViolations": found})
    check_details(details, name)


# ----------------------------------------------------------------------------- the client


@asynccontextmanager
async def clients(compat: str) -> AsyncIterator[dict[str, Client]]:
    """A Parley client per binding, against servers emitting the `compat` table."""
    async with over_http(compat) as http, over_grpc(compat) as server:
        transports: dict[str, Transport] = {
            "JSONRPC": JsonRpcTransport("http://testserver/", Version.V1_0, http=http),
            "HTTP+JSON": RestTransport("http://testserver", Version.V1_0, http=http),
            "GRPC": GrpcTransport(server.address, Version.V1_0),
        }
        made = {binding: Client(transport) for binding, transport in transports.items()}
        try:
            yield made
        finally:
            for client in made.values():
                await client.aclose()


@pytest.mark.parametrize("compat", ["1.0.1", "1.0.0"])
async def test_the_client_reads_every_row_on_every_binding(compat: str) -> None:
    """D17: a client tolerates both tables; it tells the errors apart by the ErrorInfo
    reason, so the 1.0.0 statuses (409/415/502, UNIMPLEMENTED) decode as well."""
    async with clients(compat) as made:
        for binding, client in made.items():
            for name, row in ROWS.items():
                with pytest.raises(e.A2AError) as raised:
                    await client.get_task(name)
                error = raised.value
                where = f"{name} over {binding} ({compat})"
                assert type(error) is row.error, where
                assert error.metadata == {"taskId": name}, where
                assert error.field_violations == violations(name), where
