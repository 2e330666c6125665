"""The A2A 1.1 draft over gRPC, on a server that serves it: the 1.0 service (`lf.a2a.v1`,
which the draft keeps) takes `a2a-version: 1.1` and answers with the draft's messages —
generations on tasks and stream events, `currentGeneration` long-polls, a follow-up's
`ifGenerationMatch` mismatch is ABORTED with TASK_GENERATION_MISMATCH. A 1.0 call on the
same server never carries a generation (field 7 of Task is absent from its bytes)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import grpc
import pytest
from a2a.utils.grpc_status import status_from_call
from google.rpc import error_details_pb2

from parley.client.grpc import GrpcTransport
from parley.client.transport import CallOptions
from parley.grpc import GrpcServer
from parley.model import (
    GetTaskRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
    TextPart,
)
from parley.protocol.errors import TaskGenerationMismatchError
from parley.protocol.negotiation import Version
from parley.server.service import AgentService
from parley.wire.v1_1._pb import a2a_pb2 as draft_pb
from tests.interop.agent import Probe, build_agent
from tests.ports import free_port

pytestmark = pytest.mark.anyio

OPTIONS = CallOptions()


@pytest.fixture
async def address() -> AsyncIterator[str]:
    agent = build_agent(Probe())
    service = AgentService(agent.executor(), agent.card("http://127.0.0.1:1"))
    versions = (Version.V1_0, Version.V1_1, Version.V0_3)
    server = GrpcServer(service, port=free_port(), served_versions=versions)
    await server.start()
    try:
        yield server.address
    finally:
        await server.stop(0)


def send(
    text: str, skill: str, task: Task | None = None, match: int | None = None
) -> SendMessageRequest:
    message = Message(
        message_id=str(uuid.uuid4()),
        role=Role.USER,
        parts=(TextPart(text=text),),
        metadata={"skill": skill},
        task_id=task.id if task else "",
        context_id=task.context_id if task else "",
    )
    configuration = None if match is None else SendMessageConfiguration(if_generation_match=match)
    return SendMessageRequest(message=message, configuration=configuration)


async def test_tasks_and_events_carry_generations(address: str) -> None:
    transport = GrpcTransport(address, Version.V1_1)
    try:
        events = [e async for e in transport.send_streaming_message(send("go", "chunks"), OPTIONS)]
        generations = [getattr(event, "generation", None) for event in events]
        assert generations == list(range(1, len(events) + 1))
        task = await transport.get_task(GetTaskRequest(id=events[0].id), OPTIONS)  # type: ignore[union-attr]
        assert task.generation == len(events)
        assert task.status.state is TaskState.COMPLETED
        # A long-poll on a terminal task, or behind the task, answers at once.
        polled = await transport.get_task(
            GetTaskRequest(id=task.id, current_generation=task.generation), OPTIONS
        )
        assert polled.generation == task.generation
    finally:
        await transport.aclose()


async def test_if_generation_match_is_aborted_on_mismatch(address: str) -> None:
    transport = GrpcTransport(address, Version.V1_1)
    try:
        asked = await transport.send_message(send("?", "greet"), OPTIONS)
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.INPUT_REQUIRED
        with pytest.raises(TaskGenerationMismatchError) as raised:
            await transport.send_message(send("x", "greet", asked, asked.generation + 1), OPTIONS)
        assert raised.value.metadata == {
            "taskId": asked.id,
            "expectedGeneration": str(asked.generation + 1),
            "currentGeneration": str(asked.generation),
        }
        failed = await raw_follow_up(address, asked, asked.generation - 1)
        assert failed.code() is grpc.StatusCode.ABORTED
        status = status_from_call(failed)
        assert status is not None
        info = error_details_pb2.ErrorInfo()
        status.details[0].Unpack(info)
        assert info.reason == "TASK_GENERATION_MISMATCH"
        done = await transport.send_message(send("x", "greet", asked, asked.generation), OPTIONS)
        assert isinstance(done, Task)
        assert done.status.state is TaskState.COMPLETED
    finally:
        await transport.aclose()


async def raw_follow_up(address: str, task: Task, match: int) -> grpc.aio.AioRpcError:
    """The error of a follow-up sent with the draft's own messages, as a peer sends it."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.unary_unary(
            "/lf.a2a.v1.A2AService/SendMessage",
            request_serializer=draft_pb.SendMessageRequest.SerializeToString,
            response_deserializer=draft_pb.SendMessageResponse.FromString,
        )
        request = draft_pb.SendMessageRequest()
        request.message.message_id = str(uuid.uuid4())
        request.message.role = 1
        request.message.parts.add(text="again")
        request.message.task_id = task.id
        request.configuration.if_generation_match = match
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await call(request, metadata=(("a2a-version", "1.1"),))
    return failed.value


async def test_a_1_0_call_never_carries_a_generation(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.unary_unary(
            "/lf.a2a.v1.A2AService/SendMessage",
            request_serializer=draft_pb.SendMessageRequest.SerializeToString,
            response_deserializer=draft_pb.SendMessageResponse.FromString,
        )
        request = draft_pb.SendMessageRequest()
        request.message.message_id = str(uuid.uuid4())
        request.message.role = 1
        request.message.parts.add(text="hi")
        answers = {}
        for version in ("1.0", "1.1"):
            answers[version] = await call(request, metadata=(("a2a-version", version),))
    assert answers["1.0"].task.id
    assert answers["1.0"].task.generation == 0  # absent: 1.0 bytes have no field 7
    assert answers["1.1"].task.generation >= 1
