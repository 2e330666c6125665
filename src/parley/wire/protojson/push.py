"""Push-notification configs in ProtoJSON. 1.0: the flat `TaskPushNotificationConfig`
with its `AuthenticationInfo`. 0.3: `{name, pushNotificationConfig}` named
`tasks/{id}/pushNotificationConfigs/{configId}` (the inner config is the 0.3 JSON-RPC
form), the create request in both of its shapes. Both: the get/list/delete requests and
the list response.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from parley.model import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
)
from parley.wire.protojson.fields import (
    config_name,
    obj,
    parse_config_name,
    parse_task_name,
    present,
    required,
    task_name,
    tenanted,
)
from parley.wire.reader import Obj, fail, field, listed, nested, opt_int32, opt_str, req_str
from parley.wire.v0_3.push import decode_push_config as jsonrpc_decode_push_config
from parley.wire.v0_3.push import encode_push_config as jsonrpc_encode_push_config

ConfigRef = GetTaskPushNotificationConfigRequest | DeleteTaskPushNotificationConfigRequest

# --- the 1.0 config ----------------------------------------------------------------------------


def encode_auth(auth: AuthenticationInfo) -> Obj:
    out: Obj = {"scheme": auth.scheme}
    if auth.credentials:
        out["credentials"] = auth.credentials
    return out


def decode_auth(value: Any) -> AuthenticationInfo:
    d = obj(value)
    return AuthenticationInfo(
        scheme=req_str(d, "scheme", ""), credentials=opt_str(d, "credentials", "")
    )


def encode_push_config(config: TaskPushNotificationConfig) -> Obj:
    out: Obj = {}
    if config.tenant:
        out["tenant"] = config.tenant
    if config.id:
        out["id"] = config.id
    if config.task_id:
        out["taskId"] = config.task_id
    out["url"] = config.url
    if config.token:
        out["token"] = config.token
    if config.authentication is not None:
        out["authentication"] = encode_auth(config.authentication)
    return out


def decode_push_config(value: Any) -> TaskPushNotificationConfig:
    """`url` is REQUIRED; `taskId` may be empty (inside SendMessage's configuration)."""
    d = obj(value)
    auth = d.get("authentication")
    return TaskPushNotificationConfig(
        url=req_str(d, "url", ""),
        task_id=opt_str(d, "taskId", "", "task_id"),
        id=opt_str(d, "id", ""),
        token=opt_str(d, "token", ""),
        authentication=None if auth is None else nested("authentication", decode_auth, auth),
        tenant=opt_str(d, "tenant", ""),
    )


def encode_config_ref(request: ConfigRef, tenant: bool = True) -> Obj:
    """`taskId` and `id` (0.3: the path parameters, the body or query is empty); the
    `tenant` first where the version has one."""
    out: Obj = {"taskId": request.task_id, "id": request.id}
    return tenanted(out, request.tenant) if tenant else out


def decode_get_config(value: Any) -> GetTaskPushNotificationConfigRequest:
    task_id, config_id, tenant = _config_ref(obj(value))
    return GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id, tenant=tenant)


def decode_delete_config(value: Any) -> DeleteTaskPushNotificationConfigRequest:
    task_id, config_id, tenant = _config_ref(obj(value))
    return DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id, tenant=tenant)


def _config_ref(d: Obj) -> tuple[str, str, str]:
    return (
        req_str(d, "taskId", "", "task_id"),
        req_str(d, "id", ""),
        opt_str(d, "tenant", ""),
    )


def encode_list_configs(
    request: ListTaskPushNotificationConfigsRequest, tenant: bool = True
) -> Obj:
    """`taskId` (0.3: the path parameter), `pageSize` and `pageToken` (0.3: the query);
    the `tenant` first where the version has one."""
    out: Obj = {"taskId": request.task_id}
    if tenant:
        out = tenanted(out, request.tenant)
    if request.page_size:
        out["pageSize"] = request.page_size
    if request.page_token:
        out["pageToken"] = request.page_token
    return out


def decode_list_configs(value: Any) -> ListTaskPushNotificationConfigsRequest:
    d = obj(value)
    return ListTaskPushNotificationConfigsRequest(
        task_id=req_str(d, "taskId", "", "task_id"),
        page_size=opt_int32(d, "pageSize", "", "page_size") or 0,
        page_token=opt_str(d, "pageToken", "", "page_token"),
        tenant=opt_str(d, "tenant", ""),
    )


def encode_list_configs_result(
    response: ListTaskPushNotificationConfigsResponse,
    encode: Callable[[TaskPushNotificationConfig], Obj] = encode_push_config,
) -> Obj:
    """`configs` always (a list is what clients index), `nextPageToken` iff non-empty."""
    out: Obj = {"configs": [encode(config) for config in response.configs]}
    if response.next_page_token:
        out["nextPageToken"] = response.next_page_token
    return out


def decode_list_configs_result(value: Any) -> ListTaskPushNotificationConfigsResponse:
    return _configs(obj(value), decode_push_config)


def _configs(
    d: Obj, decode: Callable[[Any], TaskPushNotificationConfig]
) -> ListTaskPushNotificationConfigsResponse:
    return ListTaskPushNotificationConfigsResponse(
        configs=listed("configs", decode, d.get("configs")),
        next_page_token=opt_str(d, "nextPageToken", "", "next_page_token"),
    )


# --- the 0.3 config (named) --------------------------------------------------------------------


def decode_config_v0_3(value: Any, task_id: str = "") -> TaskPushNotificationConfig:
    """A PushNotificationConfig as the 0.3 proto reads it. The proto requires no field, so
    an `authentication` with no scheme and no credentials (`{}`, ProtoJSON's form of an
    empty message, which the official TCK sends) is no authentication; the JSON-RPC form's
    schema requires `schemes`, and its decoder refuses the same object."""
    d = present(value)
    auth = d.get("authentication")
    if type(auth) is dict and not auth.get("schemes") and not auth.get("credentials"):
        d = {key: item for key, item in d.items() if key != "authentication"}
    return jsonrpc_decode_push_config(d, task_id)


def encode_named_config(config: TaskPushNotificationConfig) -> Obj:
    """`{name, pushNotificationConfig}`. Without a task id and a config id there is no
    resource name (a config not created yet): `name` is left out. The tenant is dropped."""
    out: Obj = {}
    if config.task_id and config.id:
        out["name"] = config_name(config.task_id, config.id)
    out["pushNotificationConfig"] = jsonrpc_encode_push_config(config)
    return out


def decode_named_config(value: Any) -> TaskPushNotificationConfig:
    """A 0.3 `TaskPushNotificationConfig`, or a whole `CreateTaskPushNotificationConfigRequest`
    (`{parent, configId, config}`, what the official SDK posts).

    The task id comes from `taskId` (the path), else `parent`, else the config's `name`;
    the config id from `pushNotificationConfig.id`, else `configId`, else the `name`.
    """
    d = present(value)
    task_id = opt_str(d, "taskId", "", "task_id")
    config = d.get("config")
    if config is None:
        result = _named(d, task_id, "")
    else:
        parent = opt_str(d, "parent", "")
        if not task_id and parent:
            task_id = parse_task_name(parent, "parent")
        config_id = opt_str(d, "configId", "", "config_id")
        result = nested("config", lambda inner: _named(present(inner), task_id, config_id), config)
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
        "pushNotificationConfig", lambda inner: decode_config_v0_3(inner, task_id), push
    )
    return replace(result, id=config_id) if config_id and not result.id else result


def encode_create_v0_3(config: TaskPushNotificationConfig) -> Obj:
    """The whole `CreateTaskPushNotificationConfigRequest`, as the official SDK posts it,
    with the task id under `taskId` for the path."""
    out: Obj = {}
    if config.task_id:
        out["taskId"] = config.task_id
        out["parent"] = task_name(config.task_id)
    if config.id:
        out["configId"] = config.id
    out["config"] = encode_named_config(config)
    return out


def _named_ref(value: Any) -> tuple[str, str]:
    """(task id, config id) of the path parameters `taskId` and `id`, else of `name`."""
    d = present(value)
    task_id = opt_str(d, "taskId", "", "task_id")
    config_id = opt_str(d, "id", "")
    if not (task_id and config_id):
        name = opt_str(d, "name", "")
        if not name:
            fail("", "name", "is required")
        named_task, named_config = parse_config_name(name, "name")
        task_id, config_id = task_id or named_task, config_id or named_config
    return task_id, config_id


def decode_get_config_v0_3(value: Any) -> GetTaskPushNotificationConfigRequest:
    task_id, config_id = _named_ref(value)
    return GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)


def decode_delete_config_v0_3(value: Any) -> DeleteTaskPushNotificationConfigRequest:
    task_id, config_id = _named_ref(value)
    return DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)


def decode_list_configs_v0_3(value: Any) -> ListTaskPushNotificationConfigsRequest:
    """Query strings are fine: `pageSize` may be a decimal string."""
    d = present(value)
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


def encode_list_named_configs(response: ListTaskPushNotificationConfigsResponse) -> Obj:
    return encode_list_configs_result(response, encode_named_config)


def decode_list_named_configs(value: Any) -> ListTaskPushNotificationConfigsResponse:
    return _configs(present(value), decode_named_config)
