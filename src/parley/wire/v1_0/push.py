"""The 1.0 wire form of push-notification configs: the flat `TaskPushNotificationConfig`,
its `AuthenticationInfo`, and the Get/List/Delete config requests and the List response.
"""

from __future__ import annotations

from typing import Any

from parley.model import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
)
from parley.wire.reader import Obj, listed, nested, opt_int32, opt_str, req_str
from parley.wire.v1_0.fields import (
    obj,
    tenanted,
)


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


# ---------------------------------------------------------------- operations


def encode_config_ref(
    request: GetTaskPushNotificationConfigRequest | DeleteTaskPushNotificationConfigRequest,
) -> Obj:
    return tenanted({"taskId": request.task_id, "id": request.id}, request.tenant)


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


def encode_list_configs(request: ListTaskPushNotificationConfigsRequest) -> Obj:
    out = tenanted({"taskId": request.task_id}, request.tenant)
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


def encode_list_configs_result(response: ListTaskPushNotificationConfigsResponse) -> Obj:
    """`configs` always (a list is what clients index), `nextPageToken` iff non-empty."""
    out: Obj = {"configs": [encode_push_config(c) for c in response.configs]}
    if response.next_page_token:
        out["nextPageToken"] = response.next_page_token
    return out


def decode_list_configs_result(value: Any) -> ListTaskPushNotificationConfigsResponse:
    d = obj(value)
    return ListTaskPushNotificationConfigsResponse(
        configs=listed("configs", decode_push_config, d.get("configs")),
        next_page_token=opt_str(d, "nextPageToken", "", "next_page_token"),
    )
