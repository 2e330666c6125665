"""The 0.3 REST payload of every operation's request and response, and the tables that
map each `Operation` to them (a request payload: the body with path and query merged in).
"""

# A request payload is the REST body with the path and query parameters merged in under
# the model's names: `id` for `/v1/tasks/{id}…`, `taskId` and `id` for
# `/v1/tasks/{taskId}/pushNotificationConfigs/{id}`, and `historyLength`, `pageSize`,
# `pageToken` from the query (strings or numbers). Encoders write the same keys, so a
# binding takes the path parameters out and sends the rest as the body or the query.
# A payload without path parameters may name its resources as the proto does
# (`name: "tasks/{id}"`, `parent`), and path parameters win over names. `historyLength`
# 0 means unlimited in the 0.3 proto: read as None (REFERENCE D11); the model's 0 (no
# history) has no 0.3 REST spelling and is not sent.

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parley.model import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    Message,
    Model,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from parley.protocol.errors import InternalError
from parley.protocol.operations import Operation
from parley.wire.reader import Obj, fail, field, nested, opt_bool, opt_int32, str_list, struct
from parley.wire.v0_3.card import decode_card, encode_card
from parley.wire.v0_3.push import encode_push_config
from parley.wire.v0_3.rest.content import decode_message, decode_task, encode_message, encode_task
from parley.wire.v0_3.rest.events import decode_send_result, encode_send_result
from parley.wire.v0_3.rest.fields import free, obj, parse_task_name, required
from parley.wire.v0_3.rest.push import (
    decode_delete_config,
    decode_get_config,
    decode_list_configs,
    decode_list_configs_result,
    decode_push_config,
    decode_task_push_config,
    encode_config_ref,
    encode_create,
    encode_list_configs,
    encode_list_configs_result,
    encode_task_push_config,
)


def history_length(d: Obj) -> int | None:
    """`historyLength`: 0 (the proto default) is unlimited, None in the model (D11)."""
    return opt_int32(d, "historyLength", "", "history_length") or None


# --- SendMessage -------------------------------------------------------------------------------


def encode_configuration(config: SendMessageConfiguration) -> Obj:
    """`blocking` is written only when true: ProtoJSON drops false, and an absent
    `blocking` is false (return immediately). History length 0 is not written (D11)."""
    out: Obj = {}
    if config.accepted_output_modes:
        out["acceptedOutputModes"] = list(config.accepted_output_modes)
    if config.push_notification_config is not None:
        out["pushNotification"] = encode_push_config(config.push_notification_config)
    if config.history_length:
        out["historyLength"] = config.history_length
    if not config.return_immediately:
        out["blocking"] = True
    return out


def decode_configuration(value: Any) -> SendMessageConfiguration:
    """As the proto (and the official SDK) reads it: an absent `blocking` is false."""
    d = obj(value)
    push = field(d, "pushNotification", "push_notification")
    return SendMessageConfiguration(
        accepted_output_modes=str_list(d, "acceptedOutputModes", "", "accepted_output_modes"),
        push_notification_config=(
            None if push is None else nested("pushNotification", decode_push_config, push)
        ),
        history_length=history_length(d),
        return_immediately=not opt_bool(d, "blocking", ""),
    )


def encode_send(request: SendMessageRequest) -> Obj:
    out: Obj = {"message": encode_message(request.message)}
    if request.configuration is not None:
        out["configuration"] = encode_configuration(request.configuration)
    if request.metadata is not None:
        out["metadata"] = free(request.metadata)
    return out


def decode_send(value: Any) -> SendMessageRequest:
    """The message under its JSON name `message` or its proto name `request`."""
    d = obj(value)
    config = d.get("configuration")
    return SendMessageRequest(
        message=required("message", decode_message, field(d, "message", "request")),
        configuration=(
            None if config is None else nested("configuration", decode_configuration, config)
        ),
        metadata=struct(d, "metadata", ""),
    )


# --- tasks -------------------------------------------------------------------------------------


def task_id(d: Obj) -> str:
    """The task of `/v1/tasks/{id}…`: the path's `id`, else the body's `name`."""
    value = d.get("id")
    if type(value) is str and value:
        return value
    if value is not None and type(value) is not str:
        fail("", "id", "expected a string")
    name = field(d, "name")
    if name is None or name == "":
        fail("", "name", "is required")
    return parse_task_name(name, "name")


def encode_get_task(request: GetTaskRequest) -> Obj:
    """`id` for the path, `historyLength` for the query (0 is not sent, D11); the model's
    metadata has no place in the 0.3 proto."""
    out: Obj = {"id": request.id}
    if request.history_length:
        out["historyLength"] = request.history_length
    return out


def decode_get_task(value: Any) -> GetTaskRequest:
    d = obj(value)
    return GetTaskRequest(id=task_id(d), history_length=history_length(d))


def encode_task_ref(request: CancelTaskRequest | SubscribeToTaskRequest) -> Obj:
    """Only `id`, for the path: the body is empty (metadata has no place in the proto)."""
    return {"id": request.id}


def decode_cancel(value: Any) -> CancelTaskRequest:
    """`id` from the path wins over a body's `name` (the official SDK ignores it too)."""
    return CancelTaskRequest(id=task_id(obj(value)))


def decode_subscribe(value: Any) -> SubscribeToTaskRequest:
    return SubscribeToTaskRequest(id=task_id(obj(value)))


def encode_card_request(request: GetExtendedAgentCardRequest) -> Obj:
    return {}


def decode_card_request(value: Any) -> GetExtendedAgentCardRequest:
    """`GetAgentCardRequest` is empty: no payload, or any object."""
    if value is not None and type(value) is not dict:
        fail("", "", "expected an empty JSON object")
    return GetExtendedAgentCardRequest()


def encode_empty(result: None) -> Obj:
    if result is not None:
        raise InternalError(f"DeleteTaskPushNotificationConfig returns nothing, not {result!r}")
    return {}


def decode_empty(value: Any) -> None:
    """`google.protobuf.Empty`: `{}` (also no body at all); members are ignored."""
    if value is not None and type(value) is not dict:
        fail("", "", "expected an empty JSON object")


# --- the tables --------------------------------------------------------------------------------

Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]
Op = Operation

REQUESTS: dict[Operation, tuple[type[Model], Encoder, Decoder]] = {
    Op.SEND_MESSAGE: (SendMessageRequest, encode_send, decode_send),
    Op.SEND_STREAMING_MESSAGE: (SendMessageRequest, encode_send, decode_send),
    Op.GET_TASK: (GetTaskRequest, encode_get_task, decode_get_task),
    Op.CANCEL_TASK: (CancelTaskRequest, encode_task_ref, decode_cancel),
    Op.SUBSCRIBE_TO_TASK: (SubscribeToTaskRequest, encode_task_ref, decode_subscribe),
    Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        TaskPushNotificationConfig,
        encode_create,
        decode_task_push_config,
    ),
    Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        GetTaskPushNotificationConfigRequest,
        encode_config_ref,
        decode_get_config,
    ),
    Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        ListTaskPushNotificationConfigsRequest,
        encode_list_configs,
        decode_list_configs,
    ),
    Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: (
        DeleteTaskPushNotificationConfigRequest,
        encode_config_ref,
        decode_delete_config,
    ),
    Op.GET_EXTENDED_AGENT_CARD: (
        GetExtendedAgentCardRequest,
        encode_card_request,
        decode_card_request,
    ),
}
"""Per operation 0.3 has: the request model type, its encoder and its decoder."""

RESPONSES: dict[Operation, tuple[tuple[type[Any], ...], Encoder, Decoder]] = {
    Op.SEND_MESSAGE: ((Task, Message), encode_send_result, decode_send_result),
    Op.GET_TASK: ((Task,), encode_task, decode_task),
    Op.CANCEL_TASK: ((Task,), encode_task, decode_task),
    Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        (TaskPushNotificationConfig,),
        encode_task_push_config,
        decode_task_push_config,
    ),
    Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        (TaskPushNotificationConfig,),
        encode_task_push_config,
        decode_task_push_config,
    ),
    Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        (ListTaskPushNotificationConfigsResponse,),
        encode_list_configs_result,
        decode_list_configs_result,
    ),
    Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: ((type(None),), encode_empty, decode_empty),
    Op.GET_EXTENDED_AGENT_CARD: ((AgentCard,), encode_card, decode_card),
}
"""Per unary operation: the result types, the response encoder and decoder (streaming
operations answer with events: see `events.encode_event`)."""
