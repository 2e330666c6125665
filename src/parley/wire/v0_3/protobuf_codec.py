"""The A2A 0.3 protobuf codec (`a2a.v1`) of the gRPC binding. Its reference route is the
0.3 REST codec (ProtoJSON of the same proto) with requests in their proto shape
(`name: "tasks/{id}"`, `parent`) and the card in its proto form; direct routes for
parts, messages, tasks, events and SendMessage (see `parley.wire.protobuf_codec`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from parley import model as m
from parley.protocol.errors import InternalError
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.json_codec import JsonCodec
from parley.wire.limits import active
from parley.wire.protobuf import (
    Proto,
    UnusualShapeError,
    fill_struct,
    fill_timestamp,
    optional_struct,
    struct_json,
)
from parley.wire.protobuf_codec import ProtobufCodec, Schema
from parley.wire.protojson.content import FINAL
from parley.wire.protojson.fields import config_name, task_name
from parley.wire.reader import Obj
from parley.wire.v0_3._pb import a2a_pb2 as pb
from parley.wire.v0_3.protobuf_card import decode_card, encode_card
from parley.wire.v0_3.rest import FORMS as REST

Op = Operation

# --- the reference route ---------------------------------------------------------------------


def _proto_request(operation: Operation, payload: Obj) -> Obj:
    """A REST request payload (path parameters merged in) in the proto's request shape."""
    if operation in (Op.GET_TASK, Op.CANCEL_TASK, Op.SUBSCRIBE_TO_TASK):
        return {"name": task_name(payload.pop("id")), **payload}
    if operation in (
        Op.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
    ):
        return {"name": config_name(payload["taskId"], payload["id"])}
    if operation is Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS:
        return {"parent": task_name(payload.pop("taskId")), **payload}
    payload.pop("taskId", None)  # CreateTaskPushNotificationConfig: `parent` names it
    return payload


def _proto_shaped(encode: Callable[[Any], Obj], operation: Operation) -> Callable[[Any], Obj]:
    return lambda request: _proto_request(operation, encode(request))


PROTOJSON = JsonCodec(
    replace(
        REST,
        requests={
            operation: (kind, _proto_shaped(encode, operation), decode)
            for operation, (kind, encode, decode) in REST.requests.items()
        },
        responses={
            **REST.responses,
            Op.GET_EXTENDED_AGENT_CARD: ((m.AgentCard,), encode_card, decode_card),
        },
        encode_card=encode_card,
        decode_card=decode_card,
    )
)
"""ProtoJSON of the 0.3 proto: the REST forms, but requests in their proto shape and the
card in its proto form (the REST card is the JSON-RPC one)."""


# --- model -> message, in place ---------------------------------------------------------------


def fill_part(target: Proto, part: m.Part) -> None:
    """As the REST codec: no part metadata or file name; non-object data is wrapped."""
    kind = type(part)
    if kind is m.TextPart:
        target.text = part.text
    elif kind is m.RawPart or kind is m.UrlPart:
        file = target.file
        if kind is m.RawPart:
            file.file_with_bytes = part.raw  # type: ignore[union-attr]
        else:
            file.file_with_uri = part.url  # type: ignore[union-attr]
        if part.media_type:
            file.mime_type = part.media_type
    elif kind is m.DataPart:
        data = part.data  # type: ignore[union-attr]
        fill_struct(target.data.data, data if isinstance(data, dict) else {"value": data})
    else:
        raise InternalError(f"Not a part: {kind.__name__}")


def fill_message(target: Proto, message: m.Message) -> None:
    target.message_id = message.message_id
    if message.context_id:
        target.context_id = message.context_id
    if message.task_id:
        target.task_id = message.task_id
    target.role = message.role
    content = target.content
    for part in message.parts:
        fill_part(content.add(), part)
    if message.metadata is not None:
        fill_struct(target.metadata, message.metadata)
    if message.extensions:
        target.extensions.extend(message.extensions)


def fill_status(target: Proto, status: m.TaskStatus) -> None:
    target.SetInParent()
    target.state = status.state
    if status.message is not None:
        fill_message(target.update, status.message)
    if status.timestamp is not None:
        fill_timestamp(target.timestamp, status.timestamp)


def fill_artifact(target: Proto, artifact: m.Artifact) -> None:
    target.SetInParent()
    target.artifact_id = artifact.artifact_id
    if artifact.name:
        target.name = artifact.name
    if artifact.description:
        target.description = artifact.description
    parts = target.parts
    for part in artifact.parts:
        fill_part(parts.add(), part)
    if artifact.metadata is not None:
        fill_struct(target.metadata, artifact.metadata)
    if artifact.extensions:
        target.extensions.extend(artifact.extensions)


def fill_task(target: Proto, task: m.Task) -> None:
    target.id = task.id
    target.context_id = task.context_id
    fill_status(target.status, task.status)
    artifacts = target.artifacts
    for artifact in task.artifacts:
        fill_artifact(artifacts.add(), artifact)
    history = target.history
    for message in task.history:
        fill_message(history.add(), message)
    if task.metadata is not None:
        fill_struct(target.metadata, task.metadata)


def fill_status_event(target: Proto, event: m.TaskStatusUpdateEvent) -> None:
    target.task_id = event.task_id
    target.context_id = event.context_id
    fill_status(target.status, event.status)
    target.final = FINAL[event.status.state]
    if event.metadata is not None:
        fill_struct(target.metadata, event.metadata)


def fill_artifact_event(target: Proto, event: m.TaskArtifactUpdateEvent) -> None:
    target.task_id = event.task_id
    target.context_id = event.context_id
    fill_artifact(target.artifact, event.artifact)
    if event.append:
        target.append = True
    if event.last_chunk:
        target.last_chunk = True
    if event.metadata is not None:
        fill_struct(target.metadata, event.metadata)


# --- message -> model, the ordinary shape only ---------------------------------------------


def read_part(part: Proto) -> m.Part:
    kind = part.WhichOneof("part")
    if kind == "text":
        return m.TextPart(text=part.text)
    if kind == "data":
        data = part.data
        return m.DataPart(data=struct_json(data.data) if data.HasField("data") else {})
    if kind == "file":
        file = part.file
        which = file.WhichOneof("file")
        if which == "file_with_bytes":
            return m.RawPart(raw=file.file_with_bytes, media_type=file.mime_type)
        if which == "file_with_uri":
            return m.UrlPart(url=file.file_with_uri, media_type=file.mime_type)
    raise UnusualShapeError


def read_message(message: Proto) -> m.Message:
    content = message.content
    role = int(message.role)
    if not message.message_id or role not in (1, 2):
        raise UnusualShapeError
    if not content or len(content) > active().max_parts:
        raise UnusualShapeError
    return m.Message(
        message_id=message.message_id,
        role=m.Role(role),
        parts=tuple(map(read_part, content)),
        context_id=message.context_id,
        task_id=message.task_id,
        metadata=optional_struct(message, "metadata"),
        extensions=tuple(message.extensions),
    )


def read_send(request: Proto) -> m.SendMessageRequest:
    """`blocking` false (absent) returns immediately; history length 0 is no limit."""
    if not request.HasField("request"):
        raise UnusualShapeError
    configuration = None
    if request.HasField("configuration"):
        config = request.configuration
        if config.HasField("push_notification"):
            raise UnusualShapeError  # rare: the reference route reads it
        configuration = m.SendMessageConfiguration(
            accepted_output_modes=tuple(config.accepted_output_modes),
            history_length=config.history_length or None,
            return_immediately=not config.blocking,
        )
    return m.SendMessageRequest(
        message=read_message(request.request),
        configuration=configuration,
        metadata=optional_struct(request, "metadata"),
    )


# --- the schema --------------------------------------------------------------------------------

SCHEMA = Schema(
    version=Version.V0_3,
    json=PROTOJSON,
    requests={
        Op.SEND_MESSAGE: pb.SendMessageRequest,
        Op.SEND_STREAMING_MESSAGE: pb.SendMessageRequest,
        Op.GET_TASK: pb.GetTaskRequest,
        Op.CANCEL_TASK: pb.CancelTaskRequest,
        Op.SUBSCRIBE_TO_TASK: pb.TaskSubscriptionRequest,
        Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: pb.CreateTaskPushNotificationConfigRequest,
        Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: pb.GetTaskPushNotificationConfigRequest,
        Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: pb.ListTaskPushNotificationConfigRequest,
        Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: pb.DeleteTaskPushNotificationConfigRequest,
        Op.GET_EXTENDED_AGENT_CARD: pb.GetAgentCardRequest,
    },
    responses={
        Op.GET_TASK: pb.Task,
        Op.CANCEL_TASK: pb.Task,
        Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: pb.TaskPushNotificationConfig,
        Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: pb.TaskPushNotificationConfig,
        Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: pb.ListTaskPushNotificationConfigResponse,
        Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: pb.Empty,
        Op.GET_EXTENDED_AGENT_CARD: pb.AgentCard,
    },
    stream_response=pb.StreamResponse,
    send_response=pb.SendMessageResponse,
    empty=pb.Empty,
    standalone={
        m.TextPart: pb.Part,
        m.RawPart: pb.Part,
        m.UrlPart: pb.Part,
        m.DataPart: pb.Part,
        m.Message: pb.Message,
        m.TaskStatus: pb.TaskStatus,
        m.Artifact: pb.Artifact,
        m.Task: pb.Task,
        m.TaskStatusUpdateEvent: pb.TaskStatusUpdateEvent,
        m.TaskArtifactUpdateEvent: pb.TaskArtifactUpdateEvent,
        m.TaskPushNotificationConfig: pb.TaskPushNotificationConfig,
        m.SendMessageConfiguration: pb.SendMessageConfiguration,
        m.ListTaskPushNotificationConfigsResponse: pb.ListTaskPushNotificationConfigResponse,
        m.AgentCard: pb.AgentCard,
        m.AgentInterface: pb.AgentInterface,
        m.AgentExtension: pb.AgentExtension,
        m.AgentProvider: pb.AgentProvider,
        m.AgentCardSignature: pb.AgentCardSignature,
    },
    event_fields={
        m.Task: "task",
        m.Message: "msg",
        m.TaskStatusUpdateEvent: "status_update",
        m.TaskArtifactUpdateEvent: "artifact_update",
    },
    fillers={
        m.TextPart: fill_part,
        m.RawPart: fill_part,
        m.UrlPart: fill_part,
        m.DataPart: fill_part,
        m.Message: fill_message,
        m.TaskStatus: fill_status,
        m.Artifact: fill_artifact,
        m.Task: fill_task,
        m.TaskStatusUpdateEvent: fill_status_event,
        m.TaskArtifactUpdateEvent: fill_artifact_event,
    },
    request_decoders={Op.SEND_MESSAGE: read_send, Op.SEND_STREAMING_MESSAGE: read_send},
)

CODEC = ProtobufCodec(SCHEMA)
"""The 0.3 protobuf codec."""
