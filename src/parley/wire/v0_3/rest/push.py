"""Push-notification configs in the 0.3 proto's JSON form: `TaskPushNotificationConfig`
named `tasks/{id}/pushNotificationConfigs/{configId}`, the create request in both of its
shapes, the get/list/delete requests (path parameters `taskId`, `id`), the list response.
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from parley.model import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
)
from parley.wire.reader import Obj, fail, field, listed, nested, opt_int32, opt_str
from parley.wire.v0_3.push import decode_push_config as jsonrpc_decode_push_config
from parley.wire.v0_3.push import encode_push_config
from parley.wire.v0_3.rest.fields import (
    config_name,
    obj,
    parse_config_name,
    parse_task_name,
    required,
    task_name,
)

# --- the config ------------------------------------------------------------------------------


def decode_push_config(value: Any, task_id: str = "") -> TaskPushNotificationConfig:
    """A PushNotificationConfig as the 0.3 proto reads it. The proto requires no field, so
    an `authentication` with no scheme and no credentials (`{}`, ProtoJSON's form of an
    empty message, which the official TCK sends) is no authentication; the JSON-RPC form's
    schema requires `schemes`, and its decoder refuses the same object."""
    d = obj(value)
    auth = d.get("authentication")
    if type(auth) is dict and not auth.get("schemes") and not auth.get("credentials"):
        d = {key: item for key, item in d.items() if key != "authentication"}
    return jsonrpc_decode_push_config(d, task_id)


def encode_task_push_config(config: TaskPushNotificationConfig) -> Obj:
    """`{name, pushNotificationConfig}`. Without a task id and a config id there is no
    resource name (a config not created yet): `name` is left out. The tenant is dropped."""
    out: Obj = {}
    if config.task_id and config.id:
        out["name"] = config_name(config.task_id, config.id)
    out["pushNotificationConfig"] = encode_push_config(config)
    return out


def decode_task_push_config(value: Any) -> TaskPushNotificationConfig:
    """A `TaskPushNotificationConfig`, or a whole `CreateTaskPushNotificationConfigRequest`
    (`{parent, configId, config}`, what the official SDK posts).

    The task id comes from `taskId` (the path), else `parent`, else the config's `name`;
    the config id from `pushNotificationConfig.id`, else `configId`, else the `name`.
    """
    d = obj(value)
    task_id = opt_str(d, "taskId", "", "task_id")
    config = d.get("config")
    if config is None:
        result = _named(d, task_id, "")
    else:
        parent = opt_str(d, "parent", "")
        if not task_id and parent:
            task_id = parse_task_name(parent, "parent")
        config_id = opt_str(d, "configId", "", "config_id")
        result = nested("config", lambda inner: _named(obj(inner), task_id, config_id), config)
    if not result.task_id:
        fail("", "name" if config is None else "parent", "is required")
    return result


def _named(d: Obj, task_id: str, config_id: str) -> TaskPushNotificationConfig:
    name = opt_str(d, "name", "")
    if name:
        named_task, named_config = parse_config_name(name, "name")
        task_id = task_id or named_task
        config_id = config_id or named_config
    push = field(d, "pushNotificationConfig", "push_notification_config")
    result = required(
        "pushNotificationConfig", lambda inner: decode_push_config(inner, task_id), push
    )
    return replace(result, id=config_id) if config_id and not result.id else result


def encode_create(config: TaskPushNotificationConfig) -> Obj:
    """The whole `CreateTaskPushNotificationConfigRequest`, as the official SDK posts it,
    with the task id under `taskId` for the path."""
    out: Obj = {}
    if config.task_id:
        out["taskId"] = config.task_id
        out["parent"] = task_name(config.task_id)
    if config.id:
        out["configId"] = config.id
    out["config"] = encode_task_push_config(config)
    return out


# --- get, delete, list -------------------------------------------------------------------------


def encode_config_ref(
    request: GetTaskPushNotificationConfigRequest | DeleteTaskPushNotificationConfigRequest,
) -> Obj:
    """The path parameters `taskId` and `id` (the body or query is empty)."""
    return {"taskId": request.task_id, "id": request.id}


def _config_ref(value: Any) -> tuple[str, str]:
    d = obj(value)
    task_id = opt_str(d, "taskId", "", "task_id")
    config_id = opt_str(d, "id", "")
    if not (task_id and config_id):
        name = opt_str(d, "name", "")
        if not name:
            fail("", "name", "is required")
        named_task, named_config = parse_config_name(name, "name")
        task_id, config_id = task_id or named_task, config_id or named_config
    return task_id, config_id


def decode_get_config(value: Any) -> GetTaskPushNotificationConfigRequest:
    task_id, config_id = _config_ref(value)
    return GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)


def decode_delete_config(value: Any) -> DeleteTaskPushNotificationConfigRequest:
    task_id, config_id = _config_ref(value)
    return DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)


def encode_list_configs(request: ListTaskPushNotificationConfigsRequest) -> Obj:
    """The path parameter `taskId`, and `pageSize`/`pageToken` for the query."""
    out: Obj = {"taskId": request.task_id}
    if request.page_size:
        out["pageSize"] = request.page_size
    if request.page_token:
        out["pageToken"] = request.page_token
    return out


def decode_list_configs(value: Any) -> ListTaskPushNotificationConfigsRequest:
    """Query strings are fine: `pageSize` may be a decimal string."""
    d = obj(value)
    task_id = opt_str(d, "taskId", "", "task_id")
    if not task_id:
        parent = opt_str(d, "parent", "")
        if not parent:
            fail("", "parent", "is required")
        task_id = parse_task_name(parent, "parent")
    return ListTaskPushNotificationConfigsRequest(
        task_id=task_id,
        page_size=opt_int32(d, "pageSize", "", "page_size") or 0,
        page_token=opt_str(d, "pageToken", "", "page_token"),
    )


def encode_list_configs_result(response: ListTaskPushNotificationConfigsResponse) -> Obj:
    """`configs` always (also when empty), `nextPageToken` when there is a next page."""
    out: Obj = {"configs": [encode_task_push_config(c) for c in response.configs]}
    if response.next_page_token:
        out["nextPageToken"] = response.next_page_token
    return out


def decode_list_configs_result(value: Any) -> ListTaskPushNotificationConfigsResponse:
    d = obj(value)
    return ListTaskPushNotificationConfigsResponse(
        configs=listed("configs", decode_task_push_config, d.get("configs")),
        next_page_token=opt_str(d, "nextPageToken", "", "next_page_token"),
    )
