"""The gRPC binding through the official SDK's generated stubs (1.0 `lf.a2a.v1`, 0.3
`a2a.v1`) on one live Parley server: cancellation mid-stream closes the handler's
iterator, errors carry `google.rpc.ErrorInfo` details, service parameters come from the
metadata (`a2a-version`, `a2a-extensions`), the tenant scopes the call, and failures of
every kind reach the client as statuses."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import anyio
import grpc
import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc as grpc03
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc as grpc10
from a2a.utils.grpc_status import status_from_call
from google.rpc import error_details_pb2

from parley.grpc import GrpcServer, serve_grpc
from parley.model import AgentExtension, GetTaskRequest
from parley.protocol.errors import TaskNotFoundError, UnauthenticatedError
from parley.protocol.negotiation import Version
from parley.server.context import AuthRequest, Caller
from parley.wire.limits import Limits
from tests.grpc.conftest import LiveGrpc, start_live
from tests.ports import free_port

pytestmark = pytest.mark.anyio


def send_10(text: str, *, skill: str | None = None, tenant: str = "") -> Any:
    message = pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)]
    )
    if skill is not None:
        message.metadata.update({"skill": skill})
    return pb.SendMessageRequest(message=message, tenant=tenant)


def send_03(text: str, *, skill: str | None = None) -> Any:
    message = pb03.Message(
        message_id=str(uuid.uuid4()), role=pb03.ROLE_USER, content=[pb03.Part(text=text)]
    )
    if skill is not None:
        message.metadata.update({"skill": skill})
    return pb03.SendMessageRequest(request=message)


def error_info(error: grpc.aio.AioRpcError) -> Any:
    status = status_from_call(error)
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    return info


async def wait_until(check: Any, timeout: float = 5.0) -> None:
    with anyio.fail_after(timeout):
        while not check():
            await anyio.sleep(0.01)


# ---------------------------------------------------------------- streaming


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_cancelling_mid_stream_closes_the_handler_iterator(
    live: LiveGrpc, version: str
) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        if version == "1.0":
            request = send_10("wait", skill="until_cancelled")
            message_id = request.message.message_id
            call = grpc10.A2AServiceStub(channel).SendStreamingMessage(request)
        else:
            request = send_03("wait", skill="until_cancelled")
            message_id = request.request.message_id
            call = grpc03.A2AServiceStub(channel).SendStreamingMessage(request)
        first = await call.read()
        assert first.WhichOneof("payload") == "task"
        assert message_id in live.handler.opened
        assert message_id not in live.handler.closed
        call.cancel()
        await wait_until(lambda: message_id in live.handler.closed)
        assert call.cancelled()


async def test_a_finished_stream_closes_the_handler_iterator(live: LiveGrpc) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        request = send_10("go", skill="chunks")
        events = [e async for e in grpc10.A2AServiceStub(channel).SendStreamingMessage(request)]
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert request.message.message_id in live.handler.closed


async def test_a_stream_that_fails_before_its_first_event_is_a_status(live: LiveGrpc) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        call = grpc10.A2AServiceStub(channel).SubscribeToTask(pb.SubscribeToTaskRequest(id="nope"))
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await call.read()
    assert raised.value.code() is grpc.StatusCode.NOT_FOUND
    assert error_info(raised.value).reason == "TASK_NOT_FOUND"


# ---------------------------------------------------------------- errors


async def test_errors_carry_error_info_details(live: LiveGrpc) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await grpc10.A2AServiceStub(channel).GetTask(pb.GetTaskRequest(id="missing"))
    error = raised.value
    assert error.code() is grpc.StatusCode.NOT_FOUND
    info = error_info(error)
    assert (info.reason, info.domain) == ("TASK_NOT_FOUND", "a2a-protocol.org")
    assert dict(info.metadata) == {"taskId": "missing"}


async def test_invalid_requests_name_the_field_in_a_bad_request_detail(live: LiveGrpc) -> None:
    request = send_10("x")
    request.message.message_id = ""
    async with grpc.aio.insecure_channel(live.address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await grpc10.A2AServiceStub(channel).SendMessage(request)
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    status = status_from_call(raised.value)
    assert status is not None
    bad = error_details_pb2.BadRequest()
    assert status.details[1].Unpack(bad)
    assert bad.field_violations[0].field == "message.messageId"


async def test_0_3_errors_name_the_error_class(live: LiveGrpc) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await grpc03.A2AServiceStub(channel).GetTask(pb03.GetTaskRequest(name="tasks/missing"))
    assert raised.value.code() is grpc.StatusCode.NOT_FOUND
    assert raised.value.details() == "TaskNotFoundError: Task missing not found"
    assert error_info(raised.value).reason == "TASK_NOT_FOUND"


async def test_undecodable_bytes_are_invalid_argument(live: LiveGrpc) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        raw: Any = channel.unary_unary("/lf.a2a.v1.A2AService/GetTask")
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await raw(b"\xff\xff\xff\xff")
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(raised.value).reason == "INVALID_REQUEST"


async def test_list_tasks_is_not_a_0_3_method(live: LiveGrpc) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        raw: Any = channel.unary_unary("/a2a.v1.A2AService/ListTasks")
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await raw(b"")
    assert raised.value.code() is grpc.StatusCode.UNIMPLEMENTED


async def test_a_bug_in_the_handler_is_a_bare_internal_error(
    live: LiveGrpc, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(ctx: Any, request: Any) -> Any:
        raise RuntimeError("secret detail")

    live.handler.get_task = broken  # type: ignore[attr-defined]
    async with grpc.aio.insecure_channel(live.address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await grpc10.A2AServiceStub(channel).GetTask(pb.GetTaskRequest(id="t"))
    assert raised.value.code() is grpc.StatusCode.INTERNAL
    assert "secret" not in (raised.value.details() or "")
    assert "secret detail" in caplog.text


async def test_a_stream_failing_midway_ends_with_a_status(live: LiveGrpc) -> None:
    async def events(ctx: Any, request: Any) -> Any:
        yield await live.handler.service.get_task(ctx, GetTaskRequest(id=request.id))
        raise TaskNotFoundError("gone")

    async with grpc.aio.insecure_channel(live.address) as channel:
        stub = grpc10.A2AServiceStub(channel)
        task = (await stub.SendMessage(send_10("one"))).task
        live.handler.subscribe_to_task = events  # type: ignore[method-assign]
        call = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id))
        first = await call.read()
        assert first.task.id == task.id
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await call.read()
    assert raised.value.code() is grpc.StatusCode.NOT_FOUND
    assert raised.value.details() == "gone"


# ---------------------------------------------------------------- service parameters


async def test_a2a_version_must_agree_with_the_1_0_service(live: LiveGrpc) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        stub = grpc10.A2AServiceStub(channel)
        for sent in ("1.0", "1.0.3", ""):
            await stub.SendMessage(send_10("ok"), metadata=(("a2a-version", sent),))
        for sent, reason in (("0.3", "VERSION_NOT_SUPPORTED"), ("9.9", "VERSION_NOT_SUPPORTED")):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await stub.SendMessage(send_10("no"), metadata=(("a2a-version", sent),))
            assert raised.value.code() is grpc.StatusCode.FAILED_PRECONDITION
            assert error_info(raised.value).reason == reason
        # The 0.3 service is 0.3 whatever the header says.
        answer = await grpc03.A2AServiceStub(channel).SendMessage(
            send_03("legacy"), metadata=(("a2a-version", "1.0"),)
        )
    assert answer.task.id
    assert [ctx.version for ctx in live.handler.contexts[-1:]] == [Version.V0_3]


async def test_extensions_are_activated_and_echoed() -> None:
    declared = AgentExtension(uri="urn:test:ext", description="test", required=False)
    server, handler, _, _ = await start_live(extensions=(declared,))
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            call = grpc10.A2AServiceStub(channel).SendMessage(
                send_10("ext"), metadata=(("a2a-extensions", "urn:test:ext, urn:unknown"),)
            )
            await call
            echoed = dict(await call.initial_metadata())
            stream = grpc03.A2AServiceStub(channel).SendStreamingMessage(
                send_03("ext"), metadata=(("x-a2a-extensions", "urn:test:ext"),)
            )
            async for _ in stream:
                pass
            echoed_03 = dict(await stream.initial_metadata())
    finally:
        await server.stop(0)
    assert echoed["a2a-extensions"] == "urn:test:ext"
    assert echoed_03["x-a2a-extensions"] == "urn:test:ext"
    assert handler.contexts[0].requested_extensions == ("urn:test:ext", "urn:unknown")
    assert handler.contexts[0].activated_extensions == ("urn:test:ext",)


async def test_a_required_extension_must_be_requested() -> None:
    required = AgentExtension(uri="urn:test:required", description="", required=True)
    server, _, _, _ = await start_live(extensions=(required,))
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await grpc10.A2AServiceStub(channel).SendMessage(send_10("x"))
    finally:
        await server.stop(0)
    assert raised.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert error_info(raised.value).reason == "EXTENSION_SUPPORT_REQUIRED"


async def test_the_tenant_scopes_the_call(live: LiveGrpc) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        stub = grpc10.A2AServiceStub(channel)
        task = (await stub.SendMessage(send_10("mine", tenant="acme"))).task
        assert (await stub.GetTask(pb.GetTaskRequest(id=task.id, tenant="acme"))).id == task.id
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.GetTask(pb.GetTaskRequest(id=task.id, tenant="other"))
    assert raised.value.code() is grpc.StatusCode.NOT_FOUND
    assert live.handler.contexts[0].tenant == "acme"


class HeaderAuthenticator:
    """Callers named by the `x-user` metadata; none at all is refused."""

    async def authenticate(self, request: AuthRequest) -> Caller:
        user = request.headers.get("x-user")
        if user is None:
            raise UnauthenticatedError("no user")
        if user == "bug":
            raise RuntimeError("boom")
        return Caller(id=user)


async def test_the_authenticator_reads_the_metadata_as_headers() -> None:
    server, handler, _, _ = await start_live(authenticator=HeaderAuthenticator())
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = grpc10.A2AServiceStub(channel)
            task = (await stub.SendMessage(send_10("a"), metadata=(("x-user", "ann"),))).task
            with pytest.raises(grpc.aio.AioRpcError) as other:
                await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=(("x-user", "bob"),))
            with pytest.raises(grpc.aio.AioRpcError) as anonymous:
                await stub.GetTask(pb.GetTaskRequest(id=task.id))
    finally:
        await server.stop(0)
    assert other.value.code() is grpc.StatusCode.NOT_FOUND
    assert anonymous.value.code() is grpc.StatusCode.UNAUTHENTICATED
    assert handler.contexts[0].caller.id == "ann"
    assert handler.contexts[0].headers["x-user"] == "ann"


async def test_messages_over_the_size_limit_are_refused() -> None:
    server, _, _, _ = await start_live(limits=Limits(max_body_bytes=1024))
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await grpc10.A2AServiceStub(channel).SendMessage(send_10("x" * 4096))
    finally:
        await server.stop(0)
    assert raised.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED


# ---------------------------------------------------------------- the server


async def test_one_version_only() -> None:
    server, _, _, _ = await start_live(served_versions=[Version.V1_0])
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await grpc03.A2AServiceStub(channel).GetTask(pb03.GetTaskRequest(name="tasks/x"))
    finally:
        await server.stop(0)
    assert raised.value.code() is grpc.StatusCode.UNIMPLEMENTED


async def test_server_lifecycle(live: LiveGrpc) -> None:
    with pytest.raises(RuntimeError):
        await live.server.start()
    with pytest.raises(ValueError, match="served_versions"):
        GrpcServer(live.handler, served_versions=[])
    assert GrpcServer(live.handler, host="::1", port=5).address == "[::1]:5"
    idle = GrpcServer(live.handler)
    await idle.wait()  # not started: returns at once
    await idle.stop()


async def test_serve_grpc_runs_until_cancelled(live: LiveGrpc) -> None:
    port = free_port()
    serving = asyncio.ensure_future(serve_grpc(live.handler, port))
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            answer = await grpc10.A2AServiceStub(channel).SendMessage(
                send_10("served"), wait_for_ready=True, timeout=5
            )
        assert answer.task.status.state == pb.TASK_STATE_COMPLETED
    finally:
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving


async def test_metadata_becomes_headers(live: LiveGrpc) -> None:
    metadata = (("x-trace", "a"), ("x-trace", "b"), ("trace-bin", b"\x00\x01"))
    async with grpc.aio.insecure_channel(live.address) as channel:
        await grpc10.A2AServiceStub(channel).SendMessage(send_10("h"), metadata=metadata)
    headers = live.handler.contexts[0].headers
    assert headers["x-trace"] == "a,b"
    assert "trace-bin" not in headers


async def test_a_bad_streaming_request_is_a_status(live: LiveGrpc) -> None:
    request = send_10("x")
    request.message.role = 0
    async with grpc.aio.insecure_channel(live.address) as channel:
        call = grpc10.A2AServiceStub(channel).SendStreamingMessage(request)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await call.read()
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT


class _Bare:
    """An event iterator without `aclose` (not a generator)."""

    def __init__(self, events: list[Any]) -> None:
        self.events = events

    def __aiter__(self) -> _Bare:
        return self

    async def __anext__(self) -> Any:
        if not self.events:
            raise StopAsyncIteration
        return self.events.pop(0)


class _BadClose(_Bare):
    async def aclose(self) -> None:
        raise RuntimeError("close failed")


@pytest.mark.parametrize("kind", [_Bare, _BadClose])
async def test_event_iterators_without_a_clean_close(
    live: LiveGrpc, kind: type[_Bare], caplog: pytest.LogCaptureFixture
) -> None:
    async with grpc.aio.insecure_channel(live.address) as channel:
        stub = grpc10.A2AServiceStub(channel)
        task = (await stub.SendMessage(send_10("t"))).task
        model_task = await live.handler.service.get_task(
            live.handler.contexts[0], GetTaskRequest(id=task.id)
        )
        live.handler.subscribe_to_task = lambda ctx, request: kind([model_task])  # type: ignore[method-assign]
        events = [e async for e in stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id))]
    assert [e.task.id for e in events] == [task.id]
    assert ("close failed" in caplog.text) is (kind is _BadClose)
