"""Push-notification configs in 0.3 form: the nested `{taskId, pushNotificationConfig}`
and `authentication.schemes` list, against the model's flat config and single scheme.
"""

from __future__ import annotations

from typing import Any

from parley.model import AuthenticationInfo, TaskPushNotificationConfig
from parley.wire.reader import fail
from parley.wire.v0_3.fields import Obj, ident, nested, obj, optional_text


def encode_auth(auth: AuthenticationInfo) -> Obj:
    out: Obj = {"schemes": [auth.scheme]}
    if auth.credentials:
        out["credentials"] = auth.credentials
    return out


def decode_auth(value: Any) -> AuthenticationInfo:
    """The model holds one scheme: of several on the wire, the first (the preferred) is kept."""
    d = obj(value)
    schemes = d.get("schemes")
    if type(schemes) is not list or not schemes or type(schemes[0]) is not str:
        if schemes is None:
            fail("", "schemes", "is required")
        if schemes == []:
            fail("", "schemes", "expected at least one scheme")
        fail("", "schemes", "expected a list of strings")
    if not all(type(item) is str for item in schemes):
        fail("", "schemes", "expected a list of strings")
    return AuthenticationInfo(
        scheme=schemes[0], credentials=optional_text(d.get("credentials"), "credentials")
    )


def encode_push_config(config: TaskPushNotificationConfig) -> Obj:
    """The 0.3 PushNotificationConfig (no task id; the tenant has no 0.3 home)."""
    out: Obj = {"url": config.url}
    if config.id:
        out["id"] = config.id
    if config.token:
        out["token"] = config.token
    if config.authentication is not None:
        out["authentication"] = encode_auth(config.authentication)
    return out


def decode_push_config(value: Any, task_id: str = "") -> TaskPushNotificationConfig:
    """A PushNotificationConfig, of the given task. An absent `id` stays empty: giving a
    new config its id (0.3 servers use the task id) is the server's job, not the codec's."""
    d = obj(value)
    auth = d.get("authentication")
    return TaskPushNotificationConfig(
        url=ident(d, "url"),
        task_id=task_id,
        id=optional_text(d.get("id"), "id"),
        token=optional_text(d.get("token"), "token"),
        authentication=None if auth is None else nested(auth, decode_auth, "authentication"),
    )


def encode_task_push_config(config: TaskPushNotificationConfig) -> Obj:
    return {"taskId": config.task_id, "pushNotificationConfig": encode_push_config(config)}


def decode_task_push_config(value: Any) -> TaskPushNotificationConfig:
    """`{taskId, pushNotificationConfig}`, flattened into the model's config."""
    d = obj(value)
    task_id = ident(d, "taskId")
    return nested(
        d.get("pushNotificationConfig"),
        lambda inner: decode_push_config(inner, task_id),
        "pushNotificationConfig",
    )
