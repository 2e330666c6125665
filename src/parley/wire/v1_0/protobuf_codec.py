"""The A2A 1.0 protobuf codec (`lf.a2a.v1`) of the gRPC binding: the 1.0 JSON codec as
the reference route, and direct routes for parts, messages, tasks, events and
SendMessage (see `parley.wire.protobuf_codec`).
"""

from __future__ import annotations

from parley import model as m
from parley.protocol.errors import InternalError
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.limits import active
from parley.wire.protobuf import (
    Proto,
    UnusualShapeError,
    fill_struct,
    fill_timestamp,
    fill_value,
    optional_struct,
    value_json,
)
from parley.wire.protobuf_codec import ProtobufCodec, Schema
from parley.wire.v1_0 import protobuf_bytes
from parley.wire.v1_0._pb import a2a_pb2 as pb
from parley.wire.v1_0.protojson_codec import CODEC as JSON_CODEC

# --- model -> message, in place --------------------------------------------------------------


def fill_part(target: Proto, part: m.Part) -> None:
    kind = type(part)
    if kind is m.TextPart:
        target.text = part.text
    elif kind is m.RawPart:
        target.raw = part.raw  # type: ignore[union-attr]
    elif kind is m.UrlPart:
        target.url = part.url  # type: ignore[union-attr]
    elif kind is m.DataPart:
        fill_value(target.data, part.data)  # type: ignore[union-attr]
    else:
        raise InternalError(f"Not a part: {kind.__name__}")
    if part.media_type:
        target.media_type = part.media_type
    if part.filename:
        target.filename = part.filename
    if part.metadata is not None:
        fill_struct(target.metadata, part.metadata)


def fill_message(target: Proto, message: m.Message) -> None:
    target.message_id = message.message_id
    if message.context_id:
        target.context_id = message.context_id
    if message.task_id:
        target.task_id = message.task_id
    target.role = message.role
    parts = target.parts
    for part in message.parts:
        fill_part(parts.add(), part)
    if message.metadata is not None:
        fill_struct(target.metadata, message.metadata)
    if message.extensions:
        target.extensions.extend(message.extensions)
    if message.reference_task_ids:
        target.reference_task_ids.extend(message.reference_task_ids)


def fill_status(target: Proto, status: m.TaskStatus) -> None:
    target.SetInParent()
    target.state = status.state
    if status.message is not None:
        fill_message(target.message, status.message)
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
    if task.context_id:
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


def fill_push_config(target: Proto, config: m.TaskPushNotificationConfig) -> None:
    target.SetInParent()
    if config.tenant:
        target.tenant = config.tenant
    if config.id:
        target.id = config.id
    if config.task_id:
        target.task_id = config.task_id
    target.url = config.url
    if config.token:
        target.token = config.token
    if config.authentication is not None:
        target.authentication.scheme = config.authentication.scheme
        if config.authentication.credentials:
            target.authentication.credentials = config.authentication.credentials


def fill_configuration(target: Proto, config: m.SendMessageConfiguration) -> None:
    target.SetInParent()
    if config.accepted_output_modes:
        target.accepted_output_modes.extend(config.accepted_output_modes)
    if config.push_notification_config is not None:
        fill_push_config(target.task_push_notification_config, config.push_notification_config)
    if config.history_length is not None:
        target.history_length = config.history_length
    if config.return_immediately:
        target.return_immediately = True


def fill_send(target: Proto, request: m.SendMessageRequest) -> None:
    if request.tenant:
        target.tenant = request.tenant
    target.message.SetInParent()
    fill_message(target.message, request.message)
    if request.configuration is not None:
        fill_configuration(target.configuration, request.configuration)
    if request.metadata is not None:
        fill_struct(target.metadata, request.metadata)


# --- message -> model, the ordinary shape only ---------------------------------------------


def read_part(part: Proto) -> m.Part:
    kind = part.WhichOneof("content")
    media, filename = str(part.media_type), str(part.filename)
    metadata = optional_struct(part, "metadata")
    if kind == "text":
        return m.TextPart(text=part.text, media_type=media, filename=filename, metadata=metadata)
    if kind == "raw":
        return m.RawPart(raw=part.raw, media_type=media, filename=filename, metadata=metadata)
    if kind == "url":
        return m.UrlPart(url=part.url, media_type=media, filename=filename, metadata=metadata)
    if kind == "data":
        data = value_json(part.data)
        return m.DataPart(data=data, media_type=media, filename=filename, metadata=metadata)
    raise UnusualShapeError


def read_message(message: Proto) -> m.Message:
    parts = message.parts
    role = int(message.role)
    if not message.message_id or role not in (1, 2):
        raise UnusualShapeError
    if not parts or len(parts) > active().max_parts:
        raise UnusualShapeError
    return m.Message(
        message_id=message.message_id,
        role=m.Role(role),
        parts=tuple(map(read_part, parts)),
        context_id=message.context_id,
        task_id=message.task_id,
        metadata=optional_struct(message, "metadata"),
        extensions=tuple(message.extensions),
        reference_task_ids=tuple(message.reference_task_ids),
    )


def read_configuration(config: Proto) -> m.SendMessageConfiguration:
    if config.HasField("task_push_notification_config"):
        raise UnusualShapeError  # rare: the reference route reads it
    return m.SendMessageConfiguration(
        accepted_output_modes=tuple(config.accepted_output_modes),
        history_length=config.history_length if config.HasField("history_length") else None,
        return_immediately=config.return_immediately,
    )


def read_send(request: Proto) -> m.SendMessageRequest:
    if not request.HasField("message"):
        raise UnusualShapeError
    has_config = request.HasField("configuration")
    return m.SendMessageRequest(
        message=read_message(request.message),
        configuration=read_configuration(request.configuration) if has_config else None,
        metadata=optional_struct(request, "metadata"),
        tenant=request.tenant,
    )


# --- the schema --------------------------------------------------------------------------------

Op = Operation

SCHEMA = Schema(
    version=Version.V1_0,
    json=JSON_CODEC,
    requests={
        Op.SEND_MESSAGE: pb.SendMessageRequest,
        Op.SEND_STREAMING_MESSAGE: pb.SendMessageRequest,
        Op.GET_TASK: pb.GetTaskRequest,
        Op.LIST_TASKS: pb.ListTasksRequest,
        Op.CANCEL_TASK: pb.CancelTaskRequest,
        Op.SUBSCRIBE_TO_TASK: pb.SubscribeToTaskRequest,
        Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: pb.TaskPushNotificationConfig,
        Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: pb.GetTaskPushNotificationConfigRequest,
        Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: pb.ListTaskPushNotificationConfigsRequest,
        Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: pb.DeleteTaskPushNotificationConfigRequest,
        Op.GET_EXTENDED_AGENT_CARD: pb.GetExtendedAgentCardRequest,
    },
    responses={
        Op.GET_TASK: pb.Task,
        Op.LIST_TASKS: pb.ListTasksResponse,
        Op.CANCEL_TASK: pb.Task,
        Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: pb.TaskPushNotificationConfig,
        Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: pb.TaskPushNotificationConfig,
        Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: pb.ListTaskPushNotificationConfigsResponse,
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
        m.AuthenticationInfo: pb.AuthenticationInfo,
        m.TaskPushNotificationConfig: pb.TaskPushNotificationConfig,
        m.SendMessageConfiguration: pb.SendMessageConfiguration,
        m.SendMessageRequest: pb.SendMessageRequest,
        m.ListTasksResponse: pb.ListTasksResponse,
        m.ListTaskPushNotificationConfigsResponse: pb.ListTaskPushNotificationConfigsResponse,
        m.AgentCard: pb.AgentCard,
        m.AgentSkill: pb.AgentSkill,
        m.AgentCapabilities: pb.AgentCapabilities,
        m.AgentInterface: pb.AgentInterface,
        m.AgentExtension: pb.AgentExtension,
        m.AgentProvider: pb.AgentProvider,
        m.AgentCardSignature: pb.AgentCardSignature,
        m.SecurityRequirement: pb.SecurityRequirement,
        m.APIKeySecurityScheme: pb.APIKeySecurityScheme,
        m.HTTPAuthSecurityScheme: pb.HTTPAuthSecurityScheme,
        m.OAuth2SecurityScheme: pb.OAuth2SecurityScheme,
        m.OpenIdConnectSecurityScheme: pb.OpenIdConnectSecurityScheme,
        m.MutualTlsSecurityScheme: pb.MutualTlsSecurityScheme,
        m.OAuthFlows: pb.OAuthFlows,
        m.AuthorizationCodeOAuthFlow: pb.AuthorizationCodeOAuthFlow,
        m.ClientCredentialsOAuthFlow: pb.ClientCredentialsOAuthFlow,
        m.DeviceCodeOAuthFlow: pb.DeviceCodeOAuthFlow,
        m.ImplicitOAuthFlow: pb.ImplicitOAuthFlow,
        m.PasswordOAuthFlow: pb.PasswordOAuthFlow,
    },
    event_fields={
        m.Task: "task",
        m.Message: "message",
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
        m.TaskPushNotificationConfig: fill_push_config,
        m.SendMessageConfiguration: fill_configuration,
        m.SendMessageRequest: fill_send,
    },
    request_decoders={Op.SEND_MESSAGE: read_send, Op.SEND_STREAMING_MESSAGE: read_send},
    event_bytes={m.TaskArtifactUpdateEvent: protobuf_bytes.artifact_update},
)

CODEC = ProtobufCodec(SCHEMA)
"""The 1.0 protobuf codec."""
