"""Every operation's request and response payload in ProtoJSON, both protos, where they
are not content or push configs: SendMessage and its configuration, the task requests,
ListTasks (1.0), the empty ones.
"""

# A 0.3 request payload is the REST body with the path and query parameters merged in
# under the model's names: `id` for `/v1/tasks/{id}…`, `taskId` and `id` for
# `/v1/tasks/{taskId}/pushNotificationConfigs/{id}`, and `historyLength`, `pageSize`,
# `pageToken` from the query (strings or numbers). Encoders write the same keys, so a
# binding takes the path parameters out and sends the rest as the body or the query.
# A payload without path parameters may name its resources as the proto does
# (`name: "tasks/{id}"`, `parent`), and path parameters win over names. `historyLength`
# 0 means unlimited in the 0.3 proto: read as None (REFERENCE D11); the model's 0 (no
# history) has no 0.3 REST spelling and is not sent. The 0.3 proto has no tenant and no
# metadata of task requests: the model's are not sent.

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parley.model import (
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from parley.protocol.errors import InternalError, InvalidParamsError
from parley.wire import reader
from parley.wire.protojson.content import V0_3, V1_0
from parley.wire.protojson.fields import (
    STATE_NAMES,
    flag,
    free,
    moment,
    obj,
    parse_task_name,
    present,
    required,
    state,
    tenanted,
)
from parley.wire.protojson.push import decode_config_v0_3, decode_push_config, encode_push_config
from parley.wire.reader import Obj
from parley.wire.v0_3.push import encode_push_config as encode_push_config_v0_3

# Bound once: a method bound per call would cost an allocation on the hot path.
_ENCODE_MESSAGE, _DECODE_MESSAGE = V1_0.encode_message, V1_0.decode_message
_ENCODE_MESSAGE_V0_3, _DECODE_MESSAGE_V0_3 = V0_3.encode_message, V0_3.decode_message
_ENCODE_TASK = V1_0.encode_task

# --- SendMessage -------------------------------------------------------------------------------


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
    push = reader.field(d, "taskPushNotificationConfig", "task_push_notification_config")
    return SendMessageConfiguration(
        accepted_output_modes=reader.str_list(
            d, "acceptedOutputModes", "", "accepted_output_modes"
        ),
        push_notification_config=(
            None
            if push is None
            else reader.nested("taskPushNotificationConfig", decode_push_config, push)
        ),
        history_length=reader.opt_int32(d, "historyLength", "", "history_length"),
        return_immediately=bool(reader.opt_bool(d, "returnImmediately", "", "return_immediately")),
    )


def encode_configuration_v0_3(config: SendMessageConfiguration) -> Obj:
    """`blocking` is written only when true: ProtoJSON drops false, and an absent
    `blocking` is false (return immediately). History length 0 is not written (D11)."""
    out: Obj = {}
    if config.accepted_output_modes:
        out["acceptedOutputModes"] = list(config.accepted_output_modes)
    if config.push_notification_config is not None:
        out["pushNotification"] = encode_push_config_v0_3(config.push_notification_config)
    if config.history_length:
        out["historyLength"] = config.history_length
    if not config.return_immediately:
        out["blocking"] = True
    return out


def decode_configuration_v0_3(value: Any) -> SendMessageConfiguration:
    """As the proto (and the official SDK) reads it: an absent `blocking` is false."""
    d = present(value)
    push = reader.field(d, "pushNotification", "push_notification")
    return SendMessageConfiguration(
        accepted_output_modes=reader.str_list(
            d, "acceptedOutputModes", "", "accepted_output_modes"
        ),
        push_notification_config=(
            None if push is None else reader.nested("pushNotification", decode_config_v0_3, push)
        ),
        history_length=history_length(d),
        return_immediately=not reader.opt_bool(d, "blocking", ""),
    )


def _send_message(d: Obj, decode: Callable[[Any], Message], proto_name: str | None) -> Message:
    """A send's `message` (or, where ProtoJSON names it so, `proto_name`), decoded."""
    message = d.get("message")
    if type(message) is dict:  # (`required`'s work, without its two calls)
        try:
            return decode(message)
        except InvalidParamsError as exc:
            raise reader.under(exc, "message") from None
    return required("message", decode, reader.field(d, "message", proto_name))


def encode_send(request: SendMessageRequest) -> Obj:
    out: Obj = {"tenant": request.tenant} if request.tenant else {}
    out["message"] = _ENCODE_MESSAGE(request.message)
    if request.configuration is not None:
        out["configuration"] = encode_configuration(request.configuration)
    if request.metadata is not None:
        out["metadata"] = free(request.metadata)
    return out


def decode_send(value: Any) -> SendMessageRequest:
    d = obj(value)
    message = _send_message(d, _DECODE_MESSAGE, None)
    config = d.get("configuration")
    metadata = d.get("metadata")
    tenant = d.get("tenant", "")
    return SendMessageRequest(
        message=message,
        configuration=None
        if config is None
        else reader.nested("configuration", decode_configuration, config),
        metadata=None if metadata is None else reader.struct(d, "metadata", ""),
        tenant=tenant if type(tenant) is str else reader.opt_str(d, "tenant", ""),
    )


def encode_send_v0_3(request: SendMessageRequest) -> Obj:
    out: Obj = {"message": _ENCODE_MESSAGE_V0_3(request.message)}
    if request.configuration is not None:
        out["configuration"] = encode_configuration_v0_3(request.configuration)
    if request.metadata is not None:
        out["metadata"] = free(request.metadata)
    return out


def decode_send_v0_3(value: Any) -> SendMessageRequest:
    """The message under its JSON name `message` or its proto name `request`."""
    d = present(value)
    message = _send_message(d, _DECODE_MESSAGE_V0_3, "request")
    config = d.get("configuration")
    return SendMessageRequest(
        message=message,
        configuration=(
            None
            if config is None
            else reader.nested("configuration", decode_configuration_v0_3, config)
        ),
        metadata=None if d.get("metadata") is None else reader.struct(d, "metadata", ""),
    )


# --- tasks -------------------------------------------------------------------------------------


def history_length(d: Obj) -> int | None:
    """0.3's `historyLength`: 0 (the proto default) is unlimited, None in the model (D11)."""
    return reader.opt_int32(d, "historyLength", "", "history_length") or None


def task_id_v0_3(d: Obj) -> str:
    """The task of `/v1/tasks/{id}…`: the path's `id`, else the body's `name`."""
    value = d.get("id")
    if type(value) is str and value:
        return value
    if value is not None and type(value) is not str:
        reader.fail("", "id", "expected a string")
    name = reader.field(d, "name")
    if name is None or name == "":
        reader.fail("", "name", "is required")
    return parse_task_name(name, "name")


def encode_get_task(request: GetTaskRequest, tenant: bool = True) -> Obj:
    """`id` (0.3: for the path) and `historyLength` (0.3: for the query, 0 is not sent,
    D11); the tenant where there is one; the model's metadata has no place in either."""
    out: Obj = tenanted({"id": request.id}, request.tenant) if tenant else {"id": request.id}
    if request.history_length is not None and (tenant or request.history_length):
        out["historyLength"] = request.history_length
    return out


def decode_get_task(value: Any) -> GetTaskRequest:
    d = obj(value)
    return GetTaskRequest(
        id=reader.req_str(d, "id", ""),
        history_length=reader.opt_int32(d, "historyLength", "", "history_length"),
        tenant=reader.opt_str(d, "tenant", ""),
    )


def decode_get_task_v0_3(value: Any) -> GetTaskRequest:
    d = present(value)
    return GetTaskRequest(id=task_id_v0_3(d), history_length=history_length(d))


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
        out["statusTimestampAfter"] = reader.format_timestamp(request.status_timestamp_after)
    if request.include_artifacts is not None:
        out["includeArtifacts"] = request.include_artifacts
    return out


def decode_list_tasks(value: Any) -> ListTasksRequest:
    """Also accepts REST query strings: numbers and booleans given as strings."""
    d = obj(value)
    return ListTasksRequest(
        context_id=reader.opt_str(d, "contextId", "", "context_id"),
        status=_status_filter(d.get("status")),
        page_size=reader.opt_int32(d, "pageSize", "", "page_size"),
        page_token=reader.opt_str(d, "pageToken", "", "page_token"),
        history_length=reader.opt_int32(d, "historyLength", "", "history_length"),
        status_timestamp_after=moment(d, "statusTimestampAfter", "status_timestamp_after"),
        include_artifacts=flag(d, "includeArtifacts", "include_artifacts"),
        tenant=reader.opt_str(d, "tenant", ""),
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
        "tasks": list(map(_ENCODE_TASK, response.tasks)),
        "nextPageToken": response.next_page_token,
        "pageSize": response.page_size,
        "totalSize": response.total_size,
    }


def decode_list_tasks_result(value: Any) -> ListTasksResponse:
    d = obj(value)
    return ListTasksResponse(
        tasks=reader.listed("tasks", V1_0.decode_task, d.get("tasks")),
        next_page_token=reader.opt_str(d, "nextPageToken", "", "next_page_token"),
        page_size=reader.opt_int32(d, "pageSize", "", "page_size") or 0,
        total_size=reader.opt_int32(d, "totalSize", "", "total_size") or 0,
    )


def encode_task_ref(request: CancelTaskRequest | SubscribeToTaskRequest) -> Obj:
    """0.3: only `id`, for the path; the body is empty."""
    return {"id": request.id}


def encode_cancel(request: CancelTaskRequest) -> Obj:
    out = tenanted({"id": request.id}, request.tenant)
    if request.metadata is not None:
        out["metadata"] = free(request.metadata)
    return out


def decode_cancel(value: Any) -> CancelTaskRequest:
    d = obj(value)
    return CancelTaskRequest(
        id=reader.req_str(d, "id", ""),
        metadata=reader.struct(d, "metadata", ""),
        tenant=reader.opt_str(d, "tenant", ""),
    )


def decode_cancel_v0_3(value: Any) -> CancelTaskRequest:
    """`id` from the path wins over a body's `name` (the official SDK ignores it too)."""
    return CancelTaskRequest(id=task_id_v0_3(present(value)))


def encode_subscribe(request: SubscribeToTaskRequest) -> Obj:
    return tenanted({"id": request.id}, request.tenant)


def decode_subscribe(value: Any) -> SubscribeToTaskRequest:
    d = obj(value)
    return SubscribeToTaskRequest(
        id=reader.req_str(d, "id", ""), tenant=reader.opt_str(d, "tenant", "")
    )


def decode_subscribe_v0_3(value: Any) -> SubscribeToTaskRequest:
    return SubscribeToTaskRequest(id=task_id_v0_3(present(value)))


# --- the agent card request and the empty response ---------------------------------------------


def encode_card_request(request: GetExtendedAgentCardRequest, tenant: bool = True) -> Obj:
    return tenanted({}, request.tenant) if tenant else {}


def decode_card_request(value: Any) -> GetExtendedAgentCardRequest:
    """JSON-RPC `params` may be omitted: None is an empty request."""
    if value is None:
        return GetExtendedAgentCardRequest()
    return GetExtendedAgentCardRequest(tenant=reader.opt_str(obj(value), "tenant", ""))


def decode_card_request_v0_3(value: Any) -> GetExtendedAgentCardRequest:
    """`GetAgentCardRequest` is empty: no payload, or any object."""
    decode_empty(value)
    return GetExtendedAgentCardRequest()


def encode_empty(result: None) -> Obj:
    if result is not None:
        raise InternalError(f"DeleteTaskPushNotificationConfig returns nothing, not {result!r}")
    return {}


def decode_empty(value: Any) -> None:
    """`google.protobuf.Empty`: `{}` (also `null`, or no body at all); members are ignored."""
    if value is not None and type(value) is not dict:
        reader.fail("", "", "expected an empty JSON object")
