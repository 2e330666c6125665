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
from parley.wire.protobuf import (
    Proto,
    UnusualShapeError,
    fill_struct,
    optional_struct,
    struct_json,
)
from parley.wire.protobuf_codec import ProtobufCodec, Schema
from parley.wire.protobuf_direct import (
    COMMON_MESSAGES,
    RESULT_MESSAGES,
    DirectRoutes,
    messages,
)
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


ROUTES = DirectRoutes(fill_part, read_part, spelling_0_3=True, final=FINAL)
read_message = ROUTES.read_message


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
        **messages(pb, RESULT_MESSAGES),
        Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: pb.ListTaskPushNotificationConfigResponse,
    },
    stream_response=pb.StreamResponse,
    send_response=pb.SendMessageResponse,
    empty=pb.Empty,
    standalone={
        **messages(pb, COMMON_MESSAGES),
        m.ListTaskPushNotificationConfigsResponse: pb.ListTaskPushNotificationConfigResponse,
    },
    event_fields={
        m.Task: "task",
        m.Message: "msg",
        m.TaskStatusUpdateEvent: "status_update",
        m.TaskArtifactUpdateEvent: "artifact_update",
    },
    fillers={
        **ROUTES.fillers(),
    },
    request_decoders={Op.SEND_MESSAGE: read_send, Op.SEND_STREAMING_MESSAGE: read_send},
)

CODEC = ProtobufCodec(SCHEMA)
"""The 0.3 protobuf codec."""
