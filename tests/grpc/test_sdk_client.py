"""The official `a2a-sdk` gRPC client (1.3) against a live Parley gRPC server on 127.0.0.1,
in 1.0 mode (`GrpcTransport`, `lf.a2a.v1`) and in its 0.3 compatibility mode
(`CompatGrpcTransport`, `a2a.v1`): every operation, streaming, and errors arriving as the
SDK's own exceptions.

The client is built as an application builds it: `ClientFactory` with a gRPC channel
factory that opens the URL as given, from the card narrowed to the gRPC interface of the
version under test (a bare `host:port` in both versions).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import grpc
import pytest
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as sdk_errors

from tests.grpc.conftest import LiveGrpc
from tests.interop.agent import QUESTION, STREAM_CHUNKS

pytestmark = pytest.mark.anyio

VERSIONS = ["1.0", "0.3"]
TRANSPORTS = {"1.0": "GrpcTransport", "0.3": "CompatGrpcTransport"}


def channel(url: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(url)


def narrowed(card: Any, version: str) -> Any:
    keep = [
        i
        for i in card.supported_interfaces
        if i.protocol_binding == "GRPC" and i.protocol_version == version
    ]
    assert len(keep) == 1
    out = pb.AgentCard()
    out.CopyFrom(card)
    del out.supported_interfaces[:]
    out.supported_interfaces.append(keep[0])
    return out


@asynccontextmanager
async def clients(live: LiveGrpc, version: str) -> AsyncIterator[tuple[Client, Client]]:
    """A unary client and a streaming one on the version's gRPC interface."""
    card = narrowed(live.sdk_card(), version)
    made = [
        ClientFactory(
            ClientConfig(
                supported_protocol_bindings=["GRPC"],
                streaming=streaming,
                grpc_channel_factory=channel,
            )
        ).create(card)
        for streaming in (False, True)
    ]
    try:
        yield made[0], made[1]
    finally:
        for client in made:
            await client.close()


@pytest.fixture(params=VERSIONS)
async def sdk(
    request: pytest.FixtureRequest, live: LiveGrpc
) -> AsyncIterator[tuple[Client, Client]]:
    async with clients(live, request.param) as made:
        yield made


def message(text: str, *, skill: str | None = None, task_id: str = "") -> Any:
    out = pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)], task_id=task_id
    )
    if skill is not None:
        out.metadata.update({"skill": skill})
    return out


def key(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def events_of(client: Client, request: Any) -> list[Any]:
    return [event async for event in client.send_message(request)]


async def wait_until(check: Any, timeout: float = 5.0) -> None:
    with anyio.fail_after(timeout):
        while not check():
            await anyio.sleep(0.01)


# ---------------------------------------------------------------- every operation


@pytest.mark.parametrize("version", VERSIONS)
async def test_the_factory_picks_the_grpc_transport_of_each_version(
    live: LiveGrpc, version: str
) -> None:
    async with clients(live, version) as (unary, _):
        assert type(unary._transport).__name__ == TRANSPORTS[version]


async def test_blocking_send_get_and_history(sdk: tuple[Client, Client]) -> None:
    unary, _ = sdk
    [event] = await events_of(unary, pb.SendMessageRequest(message=message("hello")))
    task = event.task
    assert pb.TaskState.Name(task.status.state) == "TASK_STATE_COMPLETED"
    assert task.artifacts[0].parts[0].text == "hello"
    fetched = await unary.get_task(pb.GetTaskRequest(id=task.id, history_length=1))
    assert fetched.id == task.id
    assert len(fetched.history) == 1


async def test_stream_delivers_the_task_then_the_chunks(sdk: tuple[Client, Client]) -> None:
    _, streaming = sdk
    events = await events_of(
        streaming, pb.SendMessageRequest(message=message("go", skill="chunks"))
    )
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds[0] == "task"
    chunks = [
        e.artifact_update.artifact.parts[0].text for e in events if e.HasField("artifact_update")
    ]
    assert "".join(chunks) == "".join(STREAM_CHUNKS)
    final = events[-1].status_update.status.state
    assert pb.TaskState.Name(final) == "TASK_STATE_COMPLETED"


async def test_cancel_stops_the_agent(sdk: tuple[Client, Client], live: LiveGrpc) -> None:
    unary, _ = sdk
    text = key("cancel")
    request = pb.SendMessageRequest(message=message(text, skill="until_cancelled"))
    request.configuration.return_immediately = True
    [event] = await events_of(unary, request)
    await wait_until(live.probe.started(text).is_set)
    canceled = await unary.cancel_task(pb.CancelTaskRequest(id=event.task.id))
    assert pb.TaskState.Name(canceled.status.state) == "TASK_STATE_CANCELED"
    await wait_until(lambda: text in live.probe.cancelled)


async def test_subscribe_to_a_running_task(sdk: tuple[Client, Client], live: LiveGrpc) -> None:
    unary, streaming = sdk
    text = key("background")
    request = pb.SendMessageRequest(message=message(text, skill="background"))
    request.configuration.return_immediately = True
    [event] = await events_of(unary, request)
    await wait_until(live.probe.started(text).is_set)
    seen: list[str] = []
    async for update in streaming.subscribe(pb.SubscribeToTaskRequest(id=event.task.id)):
        seen.append(update.WhichOneof("payload"))
        if len(seen) == 1:
            live.probe.gate(text).set()
    assert seen[0] == "task"
    assert "artifact_update" in seen
    assert event.task.id in live.handler.closed


async def test_multi_turn_follow_up(sdk: tuple[Client, Client]) -> None:
    unary, _ = sdk
    [first] = await events_of(unary, pb.SendMessageRequest(message=message("hi", skill="greet")))
    assert pb.TaskState.Name(first.task.status.state) == "TASK_STATE_INPUT_REQUIRED"
    assert first.task.status.message.parts[0].text == QUESTION
    follow = message("Ada", task_id=first.task.id)
    [second] = await events_of(unary, pb.SendMessageRequest(message=follow))
    assert second.task.artifacts[0].parts[0].text == "Hello, Ada!"


async def test_list_tasks_over_1_0(live: LiveGrpc) -> None:
    async with clients(live, "1.0") as (unary, _):
        [event] = await events_of(unary, pb.SendMessageRequest(message=message("listed")))
        listed = await unary.list_tasks(pb.ListTasksRequest(context_id=event.task.context_id))
        assert [task.id for task in listed.tasks] == [event.task.id]


async def test_push_configs(sdk: tuple[Client, Client]) -> None:
    unary, _ = sdk
    [event] = await events_of(unary, pb.SendMessageRequest(message=message("push")))
    task_id = event.task.id
    config = pb.TaskPushNotificationConfig(
        task_id=task_id, id="hook-1", url="https://hooks.example.com/a2a", token="t0k"
    )
    created = await unary.create_task_push_notification_config(config)
    assert (created.task_id, created.id, created.url) == (task_id, "hook-1", config.url)
    got = await unary.get_task_push_notification_config(
        pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id="hook-1")
    )
    assert (got.id, got.token) == ("hook-1", "")  # a secret is not shown (R-PUSH-21)
    listed = await unary.list_task_push_notification_configs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task_id)
    )
    assert [c.id for c in listed.configs] == ["hook-1"]
    await unary.delete_task_push_notification_config(
        pb.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="hook-1")
    )
    listed = await unary.list_task_push_notification_configs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task_id)
    )
    assert list(listed.configs) == []


async def test_extended_card(sdk: tuple[Client, Client]) -> None:
    unary, _ = sdk
    card = await unary.get_extended_agent_card(pb.GetExtendedAgentCardRequest())
    assert card.name == "Interop (extended)"


# ---------------------------------------------------------------- errors


async def test_errors_reach_the_sdk_as_its_exceptions(sdk: tuple[Client, Client]) -> None:
    unary, _ = sdk
    with pytest.raises(sdk_errors.TaskNotFoundError):
        await unary.get_task(pb.GetTaskRequest(id="no-such-task"))
    [event] = await events_of(unary, pb.SendMessageRequest(message=message("done")))
    with pytest.raises(sdk_errors.TaskNotCancelableError):
        await unary.cancel_task(pb.CancelTaskRequest(id=event.task.id))
