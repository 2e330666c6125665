"""The A2A 1.0 protobuf codec (`lf.a2a.v1`) of the gRPC binding: the 1.0 JSON codec as
the reference route, and direct routes for parts, messages, tasks, events and
SendMessage (see `parley.wire.protobuf_codec`).
"""

from __future__ import annotations

from parley import model as m
from parley.protocol.errors import InternalError
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.protobuf import (
    Proto,
    UnusualShapeError,
    fill_struct,
    fill_value,
    optional_struct,
    value_json,
)
from parley.wire.protobuf_codec import ProtobufCodec, Schema
from parley.wire.protobuf_direct import (
    COMMON_MESSAGES,
    RESULT_MESSAGES,
    DirectRoutes,
    messages,
)
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
    ROUTES.message(target.message, request.message)
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


ROUTES = DirectRoutes(fill_part, read_part)
fill_task = ROUTES.task
fill_status_event = ROUTES.status_event
fill_artifact_event = ROUTES.artifact_event
read_message = ROUTES.read_message


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
        **messages(pb, RESULT_MESSAGES),
        Op.LIST_TASKS: pb.ListTasksResponse,
        Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: pb.ListTaskPushNotificationConfigsResponse,
    },
    stream_response=pb.StreamResponse,
    send_response=pb.SendMessageResponse,
    empty=pb.Empty,
    standalone={
        **messages(pb, COMMON_MESSAGES),
        m.AuthenticationInfo: pb.AuthenticationInfo,
        m.SendMessageRequest: pb.SendMessageRequest,
        m.ListTasksResponse: pb.ListTasksResponse,
        m.ListTaskPushNotificationConfigsResponse: pb.ListTaskPushNotificationConfigsResponse,
        m.AgentSkill: pb.AgentSkill,
        m.AgentCapabilities: pb.AgentCapabilities,
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
        **ROUTES.fillers(),
        m.TaskPushNotificationConfig: fill_push_config,
        m.SendMessageConfiguration: fill_configuration,
        m.SendMessageRequest: fill_send,
    },
    request_decoders={Op.SEND_MESSAGE: read_send, Op.SEND_STREAMING_MESSAGE: read_send},
    event_bytes={m.TaskArtifactUpdateEvent: protobuf_bytes.artifact_update},
)

CODEC = ProtobufCodec(SCHEMA)
"""The 1.0 protobuf codec."""
