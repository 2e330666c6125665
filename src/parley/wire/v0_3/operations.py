"""The JSON-RPC `params` and `result` of every 0.3 method, per Operation.

0.3 has no ListTasks (MethodNotFoundError), no tenant (dropped), no push-config paging
(dropped); in push-config params `id` is the *task* id.
"""

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
from parley.protocol.errors import InvalidParamsError
from parley.protocol.operations import Operation
from parley.wire.json_bytes import JSON
from parley.wire.protojson.fields import free
from parley.wire.reader import fail, listed, opt_bool, opt_int32, under
from parley.wire.v0_3.card import decode_card, encode_card
from parley.wire.v0_3.content import decode_message, decode_task, encode_message, encode_task
from parley.wire.v0_3.events import decode_result, encode_event
from parley.wire.v0_3.fields import (
    Obj,
    ident,
    nested,
    obj,
    optional_metadata,
    optional_text,
    strings,
)
from parley.wire.v0_3.push import (
    decode_push_config,
    decode_task_push_config,
    encode_push_config,
    encode_task_push_config,
)


def _params(value: Any) -> Obj:
    if type(value) is dict:
        return value
    fail("", "params", "is required" if value is None else "expected a JSON object")


def _with_metadata(out: Obj, request: Any) -> Obj:
    if request.metadata is not None:
        out["metadata"] = free(request.metadata)
    return out


# --- message/send, message/stream ----------------------------------------------------------


def encode_configuration(config: SendMessageConfiguration) -> Obj:
    """`blocking` (the negation of `return_immediately`) is always sent."""
    out: Obj = {}
    if config.accepted_output_modes:
        out["acceptedOutputModes"] = list(config.accepted_output_modes)
    if config.history_length is not None:
        out["historyLength"] = config.history_length
    if config.push_notification_config is not None:
        out["pushNotificationConfig"] = encode_push_config(config.push_notification_config)
    out["blocking"] = not config.return_immediately
    return out


def decode_configuration(value: Any) -> SendMessageConfiguration:
    """An absent `blocking` means blocking (return_immediately false)."""
    d = obj(value)
    push = d.get("pushNotificationConfig")
    return SendMessageConfiguration(
        accepted_output_modes=strings(d.get("acceptedOutputModes"), "acceptedOutputModes"),
        push_notification_config=None
        if push is None
        else nested(push, decode_push_config, "pushNotificationConfig"),
        history_length=opt_int32(d, "historyLength", ""),
        return_immediately=opt_bool(d, "blocking", "") is False,
    )


def encode_send(request: SendMessageRequest) -> Obj:
    out: Obj = {"message": encode_message(request.message)}
    if request.configuration is not None:
        out["configuration"] = encode_configuration(request.configuration)
    return _with_metadata(out, request)


def decode_send(value: Any) -> SendMessageRequest:
    d = _params(value)
    try:  # (`nested`'s work, without its two calls)
        message = decode_message(d.get("message"))
    except InvalidParamsError as exc:
        raise under(exc, "message") from None
    config = d.get("configuration")
    metadata = d.get("metadata")
    return SendMessageRequest(
        message=message,
        configuration=None
        if config is None
        else nested(config, decode_configuration, "configuration"),
        metadata=None if metadata is None else optional_metadata(metadata),
    )


# --- tasks/* -------------------------------------------------------------------------------


def encode_get_task(request: GetTaskRequest) -> Obj:
    out: Obj = {"id": request.id}
    if request.history_length is not None:
        out["historyLength"] = request.history_length
    return _with_metadata(out, request)


def decode_get_task(value: Any) -> GetTaskRequest:
    d = _params(value)
    return GetTaskRequest(
        id=ident(d, "id"),
        history_length=opt_int32(d, "historyLength", ""),
        metadata=optional_metadata(d.get("metadata")),
    )


def encode_task_id(request: CancelTaskRequest | SubscribeToTaskRequest) -> Obj:
    return _with_metadata({"id": request.id}, request)


def decode_cancel(value: Any) -> CancelTaskRequest:
    d = _params(value)
    return CancelTaskRequest(id=ident(d, "id"), metadata=optional_metadata(d.get("metadata")))


def decode_subscribe(value: Any) -> SubscribeToTaskRequest:
    d = _params(value)
    return SubscribeToTaskRequest(id=ident(d, "id"), metadata=optional_metadata(d.get("metadata")))


# --- tasks/pushNotificationConfig/* --------------------------------------------------------


def decode_set_push(value: Any) -> TaskPushNotificationConfig:
    return decode_task_push_config(_params(value))


def encode_get_push(request: GetTaskPushNotificationConfigRequest) -> Obj:
    """The config id is always sent (the legacy form without it is only read)."""
    out: Obj = {"id": request.task_id, "pushNotificationConfigId": request.id}
    return _with_metadata(out, request)


def decode_get_push(value: Any) -> GetTaskPushNotificationConfigRequest:
    """The legacy form (task id only) asks for the default config, whose id is the task id."""
    d = _params(value)
    task_id = ident(d, "id")
    return GetTaskPushNotificationConfigRequest(
        task_id=task_id,
        id=optional_text(d.get("pushNotificationConfigId"), "pushNotificationConfigId") or task_id,
        metadata=optional_metadata(d.get("metadata")),
    )


def encode_list_push(request: ListTaskPushNotificationConfigsRequest) -> Obj:
    """0.3 lists without paging: `page_size` and `page_token` are dropped."""
    return _with_metadata({"id": request.task_id}, request)


def decode_list_push(value: Any) -> ListTaskPushNotificationConfigsRequest:
    d = _params(value)
    return ListTaskPushNotificationConfigsRequest(
        task_id=ident(d, "id"), metadata=optional_metadata(d.get("metadata"))
    )


def encode_delete_push(request: DeleteTaskPushNotificationConfigRequest) -> Obj:
    out: Obj = {"id": request.task_id, "pushNotificationConfigId": request.id}
    return _with_metadata(out, request)


def decode_delete_push(value: Any) -> DeleteTaskPushNotificationConfigRequest:
    d = _params(value)
    return DeleteTaskPushNotificationConfigRequest(
        task_id=ident(d, "id"),
        id=ident(d, "pushNotificationConfigId"),
        metadata=optional_metadata(d.get("metadata")),
    )


def encode_extended_card_request(request: GetExtendedAgentCardRequest) -> None:
    """No params at all: the JSON-RPC request carries no `params` member."""
    return None


def decode_extended_card_request(value: Any) -> GetExtendedAgentCardRequest:
    if value is not None and type(value) is not dict:
        fail("", "params", "expected no params or an empty object")
    return GetExtendedAgentCardRequest()


def encode_push_list(response: ListTaskPushNotificationConfigsResponse) -> list[Obj]:
    """A bare array (`next_page_token` has no 0.3 home)."""
    return [encode_task_push_config(c) for c in response.configs]


def decode_push_list(value: Any) -> ListTaskPushNotificationConfigsResponse:
    if type(value) is not list:
        fail("", "result", "is required" if value is None else "expected a list")
    return ListTaskPushNotificationConfigsResponse(
        configs=listed("result", decode_task_push_config, value)
    )


# --- the tables ----------------------------------------------------------------------------

Op = Operation

REQUEST_DECODERS: dict[Operation, Callable[[Any], Model]] = {
    Op.SEND_MESSAGE: decode_send,
    Op.SEND_STREAMING_MESSAGE: decode_send,
    Op.GET_TASK: decode_get_task,
    Op.CANCEL_TASK: decode_cancel,
    Op.SUBSCRIBE_TO_TASK: decode_subscribe,
    Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: decode_set_push,
    Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: decode_get_push,
    Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: decode_list_push,
    Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: decode_delete_push,
    Op.GET_EXTENDED_AGENT_CARD: decode_extended_card_request,
}

REQUEST_ENCODERS: dict[Operation, Callable[[Any], JSON]] = {
    Op.SEND_MESSAGE: encode_send,
    Op.SEND_STREAMING_MESSAGE: encode_send,
    Op.GET_TASK: encode_get_task,
    Op.CANCEL_TASK: encode_task_id,
    Op.SUBSCRIBE_TO_TASK: encode_task_id,
    Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: encode_task_push_config,
    Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: encode_get_push,
    Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: encode_list_push,
    Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: encode_delete_push,
    Op.GET_EXTENDED_AGENT_CARD: encode_extended_card_request,
}


def _no_result(value: Any) -> None:
    """tasks/pushNotificationConfig/delete answers `null` (an empty object is tolerated)."""
    if value is not None and type(value) is not dict:
        fail("", "result", "expected null")


def _encode_no_result(value: Any) -> None:
    return None


# Each entry: the result types accepted by the encoder, the encoder, the decoder.
RESPONSES: dict[Operation, tuple[tuple[type, ...], Callable[[Any], JSON], Callable[[Any], Any]]] = {
    Op.SEND_MESSAGE: ((Task, Message), encode_event, decode_result),
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
        encode_push_list,
        decode_push_list,
    ),
    Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: ((object,), _encode_no_result, _no_result),
    Op.GET_EXTENDED_AGENT_CARD: ((AgentCard,), encode_card, decode_card),
}
