"""The 1.0 wire form of every operation's request and response, with the tables that map
each `Operation` to its encoders and decoders.
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
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Model,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResult,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from parley.protocol.errors import InternalError
from parley.protocol.operations import Operation
from parley.wire.reader import (
    Obj,
    fail,
    field,
    format_timestamp,
    listed,
    nested,
    opt_bool,
    opt_int32,
    opt_str,
    req_str,
    str_list,
    struct,
)
from parley.wire.v1_0.card import decode_card, encode_card
from parley.wire.v1_0.content import decode_message, decode_task, encode_message, encode_task
from parley.wire.v1_0.fields import (
    STATE_NAMES,
    flag,
    free,
    moment,
    obj,
    one_of,
    required,
    state,
    tenanted,
)
from parley.wire.v1_0.push import (
    decode_delete_config,
    decode_get_config,
    decode_list_configs,
    decode_list_configs_result,
    decode_push_config,
    encode_config_ref,
    encode_list_configs,
    encode_list_configs_result,
    encode_push_config,
)

# ---------------------------------------------------------------- SendMessage


def encode_configuration(config: SendMessageConfiguration) -> Obj:
    out: Obj = {}
    if config.accepted_output_modes:
        out["acceptedOutputModes"] = list(config.accepted_output_modes)
    if config.push_notification_config is not None:
        out["taskPushNotificationConfig"] = encode_push_config(config.push_notification_config)
    if config.history_length is not None:
        out["historyLength"] = config.history_length
    if config.return_immediately:
        out["returnImmediately"] = True
    return out


def decode_configuration(value: Any) -> SendMessageConfiguration:
    d = obj(value)
    push = field(d, "taskPushNotificationConfig", "task_push_notification_config")
    return SendMessageConfiguration(
        accepted_output_modes=str_list(d, "acceptedOutputModes", "", "accepted_output_modes"),
        push_notification_config=(
            None if push is None else nested("taskPushNotificationConfig", decode_push_config, push)
        ),
        history_length=opt_int32(d, "historyLength", "", "history_length"),
        return_immediately=bool(opt_bool(d, "returnImmediately", "", "return_immediately")),
    )


def encode_send(request: SendMessageRequest) -> Obj:
    out: Obj = {"tenant": request.tenant} if request.tenant else {}
    out["message"] = encode_message(request.message)
    if request.configuration is not None:
        out["configuration"] = encode_configuration(request.configuration)
    if request.metadata is not None:
        out["metadata"] = free(request.metadata)
    return out


def decode_send(value: Any) -> SendMessageRequest:
    d = obj(value)
    config = d.get("configuration")
    metadata = d.get("metadata")
    tenant = d.get("tenant")
    return SendMessageRequest(
        message=required("message", decode_message, d.get("message")),
        configuration=None
        if config is None
        else nested("configuration", decode_configuration, config),
        metadata=None if metadata is None else struct(d, "metadata", ""),
        tenant=tenant if type(tenant) is str else opt_str(d, "tenant", ""),
    )


def encode_send_result(result: SendMessageResult) -> Obj:
    """`SendMessageResponse`: `{"task": ...}` or `{"message": ...}`."""
    if type(result) is Task:
        return {"task": encode_task(result)}
    if type(result) is Message:
        return {"message": encode_message(result)}
    raise InternalError(f"SendMessage returns a Task or a Message, not {type(result).__name__}")


def decode_send_result(value: Any) -> SendMessageResult:
    key, inner = one_of(obj(value), (("task", None), ("message", None)))
    if key == "task":
        return nested(key, decode_task, inner)
    return nested(key, decode_message, inner)


# ---------------------------------------------------------------- tasks


def encode_get_task(request: GetTaskRequest) -> Obj:
    """1.0's GetTaskRequest has no metadata: the model's is not sent."""
    out = tenanted({"id": request.id}, request.tenant)
    if request.history_length is not None:
        out["historyLength"] = request.history_length
    return out


def decode_get_task(value: Any) -> GetTaskRequest:
    d = obj(value)
    return GetTaskRequest(
        id=req_str(d, "id", ""),
        history_length=opt_int32(d, "historyLength", "", "history_length"),
        tenant=opt_str(d, "tenant", ""),
    )


def encode_list_tasks(request: ListTasksRequest) -> Obj:
    out = tenanted({}, request.tenant)
    if request.context_id:
        out["contextId"] = request.context_id
    if request.status is not None and request.status is not TaskState.UNSPECIFIED:
        out["status"] = STATE_NAMES[request.status]
    if request.page_size is not None:
        out["pageSize"] = request.page_size
    if request.page_token:
        out["pageToken"] = request.page_token
    if request.history_length is not None:
        out["historyLength"] = request.history_length
    if request.status_timestamp_after is not None:
        out["statusTimestampAfter"] = format_timestamp(request.status_timestamp_after)
    if request.include_artifacts is not None:
        out["includeArtifacts"] = request.include_artifacts
    return out


def decode_list_tasks(value: Any) -> ListTasksRequest:
    """Also accepts REST query strings: numbers and booleans given as strings."""
    d = obj(value)
    return ListTasksRequest(
        context_id=opt_str(d, "contextId", "", "context_id"),
        status=_status_filter(d.get("status")),
        page_size=opt_int32(d, "pageSize", "", "page_size"),
        page_token=opt_str(d, "pageToken", "", "page_token"),
        history_length=opt_int32(d, "historyLength", "", "history_length"),
        status_timestamp_after=moment(d, "statusTimestampAfter", "status_timestamp_after"),
        include_artifacts=flag(d, "includeArtifacts", "include_artifacts"),
        tenant=opt_str(d, "tenant", ""),
    )


def _status_filter(value: Any) -> TaskState | None:
    """A state filter; `TASK_STATE_UNSPECIFIED` (the proto default) means no filter."""
    if value is None:
        return None
    if type(value) is str and value.isdecimal() and len(value) < 4:  # a query string
        value = int(value)
    found = state(value, "status")
    return None if found is TaskState.UNSPECIFIED else found


def encode_list_tasks_result(response: ListTasksResponse) -> Obj:
    """Every field is REQUIRED: `nextPageToken` is `""` on the last page."""
    return {
        "tasks": [encode_task(task) for task in response.tasks],
        "nextPageToken": response.next_page_token,
        "pageSize": response.page_size,
        "totalSize": response.total_size,
    }


def decode_list_tasks_result(value: Any) -> ListTasksResponse:
    d = obj(value)
    return ListTasksResponse(
        tasks=listed("tasks", decode_task, d.get("tasks")),
        next_page_token=opt_str(d, "nextPageToken", "", "next_page_token"),
        page_size=opt_int32(d, "pageSize", "", "page_size") or 0,
        total_size=opt_int32(d, "totalSize", "", "total_size") or 0,
    )


def encode_cancel(request: CancelTaskRequest) -> Obj:
    out = tenanted({"id": request.id}, request.tenant)
    if request.metadata is not None:
        out["metadata"] = free(request.metadata)
    return out


def decode_cancel(value: Any) -> CancelTaskRequest:
    d = obj(value)
    return CancelTaskRequest(
        id=req_str(d, "id", ""), metadata=struct(d, "metadata", ""), tenant=opt_str(d, "tenant", "")
    )


def encode_subscribe(request: SubscribeToTaskRequest) -> Obj:
    return tenanted({"id": request.id}, request.tenant)


def decode_subscribe(value: Any) -> SubscribeToTaskRequest:
    d = obj(value)
    return SubscribeToTaskRequest(id=req_str(d, "id", ""), tenant=opt_str(d, "tenant", ""))


def encode_empty(result: None) -> Obj:
    if result is not None:
        raise InternalError(f"DeleteTaskPushNotificationConfig returns nothing, not {result!r}")
    return {}


def decode_empty(value: Any) -> None:
    """`google.protobuf.Empty`: `{}` (also `null`); members are ignored."""
    if value is not None and type(value) is not dict:
        fail("", "", "expected an empty JSON object")


# ---------------------------------------------------------------- agent card


def encode_card_request(request: GetExtendedAgentCardRequest) -> Obj:
    return tenanted({}, request.tenant)


def decode_card_request(value: Any) -> GetExtendedAgentCardRequest:
    """JSON-RPC `params` may be omitted: None is an empty request."""
    if value is None:
        return GetExtendedAgentCardRequest()
    return GetExtendedAgentCardRequest(tenant=opt_str(obj(value), "tenant", ""))


# ---------------------------------------------------------------- tables

Encoder = Callable[[Any], Obj]
Decoder = Callable[[Any], Any]

REQUESTS: dict[Operation, tuple[type[Model], Encoder, Decoder]] = {
    Operation.SEND_MESSAGE: (SendMessageRequest, encode_send, decode_send),
    Operation.SEND_STREAMING_MESSAGE: (SendMessageRequest, encode_send, decode_send),
    Operation.GET_TASK: (GetTaskRequest, encode_get_task, decode_get_task),
    Operation.LIST_TASKS: (ListTasksRequest, encode_list_tasks, decode_list_tasks),
    Operation.CANCEL_TASK: (CancelTaskRequest, encode_cancel, decode_cancel),
    Operation.SUBSCRIBE_TO_TASK: (SubscribeToTaskRequest, encode_subscribe, decode_subscribe),
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        TaskPushNotificationConfig,
        encode_push_config,
        decode_push_config,
    ),
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        GetTaskPushNotificationConfigRequest,
        encode_config_ref,
        decode_get_config,
    ),
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        ListTaskPushNotificationConfigsRequest,
        encode_list_configs,
        decode_list_configs,
    ),
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: (
        DeleteTaskPushNotificationConfigRequest,
        encode_config_ref,
        decode_delete_config,
    ),
    Operation.GET_EXTENDED_AGENT_CARD: (
        GetExtendedAgentCardRequest,
        encode_card_request,
        decode_card_request,
    ),
}
"""Per operation: the request model type, its encoder and its decoder."""

RESPONSES: dict[Operation, tuple[tuple[type[Any], ...], Encoder, Decoder]] = {
    Operation.SEND_MESSAGE: ((Task, Message), encode_send_result, decode_send_result),
    Operation.GET_TASK: ((Task,), encode_task, decode_task),
    Operation.LIST_TASKS: (
        (ListTasksResponse,),
        encode_list_tasks_result,
        decode_list_tasks_result,
    ),
    Operation.CANCEL_TASK: ((Task,), encode_task, decode_task),
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        (TaskPushNotificationConfig,),
        encode_push_config,
        decode_push_config,
    ),
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        (TaskPushNotificationConfig,),
        encode_push_config,
        decode_push_config,
    ),
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        (ListTaskPushNotificationConfigsResponse,),
        encode_list_configs_result,
        decode_list_configs_result,
    ),
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: ((type(None),), encode_empty, decode_empty),
    Operation.GET_EXTENDED_AGENT_CARD: (
        (AgentCard,),
        encode_card,
        decode_card,
    ),
}
"""Per unary operation: the result types, the response encoder and decoder (streaming
operations answer with events: see `content.encode_event`)."""
