"""Field vocabulary of the 0.3 proto's JSON form: `ROLE_*` and `TASK_STATE_*` enums (the
proto spells canceled `TASK_STATE_CANCELLED`), oneofs, timestamps and resource names.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, NoReturn, TypeVar

from parley.model import JSONObject, Role, TaskState
from parley.wire.reader import Obj, fail, field, nested, timestamp

T = TypeVar("T")

ROLE_NAMES: dict[Role, str] = {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT"}
STATE_NAMES: dict[TaskState, str] = {state: f"TASK_STATE_{state.name}" for state in TaskState}
STATE_NAMES[TaskState.CANCELED] = "TASK_STATE_CANCELLED"

_ROLES: dict[str | int, Role] = {name: role for role, name in ROLE_NAMES.items()}
_ROLES.update({int(role): role for role in Role})
_STATES: dict[str | int, TaskState] = {name: state for state, name in STATE_NAMES.items()}
_STATES.update({int(state): state for state in TaskState})
_STATES["TASK_STATE_CANCELED"] = TaskState.CANCELED  # the 1.0 spelling, tolerated

_TASK_NAME = re.compile(r"tasks/([^/]+)")
_CONFIG_NAME = re.compile(r"tasks/([^/]+)/pushNotificationConfigs/([^/]+)")
_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", re.ASCII)


def obj(value: Any) -> Obj:
    """The value as a JSON object (an error names no field: the caller prefixes it)."""
    if type(value) is dict:
        return value
    fail("", "", "is required" if value is None else "expected a JSON object")


def required(key: str, decode: Callable[[Any], T], value: Any) -> T:
    """A required nested object: absent (or null) is an error naming `key`."""
    if value is None:
        fail("", key, "is required")
    return nested(key, decode, value)


def one_of(d: Obj, members: Sequence[tuple[str, str | None]]) -> tuple[str, Any]:
    """The single member of a oneof that is set, as (JSON name, value); null is unset."""
    found: tuple[str, Any] | None = None
    for camel, snake in members:
        value = field(d, camel, snake)
        if value is None:
            continue
        if found is not None:
            fail("", "", f"only one of {found[0]} and {camel} may be set")
        found = (camel, value)
    if found is None:
        fail("", "", "one of " + ", ".join(camel for camel, _ in members) + " is required")
    return found


def role(value: Any) -> Role:
    """`ROLE_USER` / `ROLE_AGENT` or their numbers; unspecified is an error."""
    if type(value) is str or type(value) is int:
        found = _ROLES.get(value)
        if found is not None:
            return found
    _bad_enum("role", value, "ROLE_USER or ROLE_AGENT")


def state(value: Any) -> TaskState:
    """A `TASK_STATE_*` name (`CANCELLED`, also `CANCELED`) or its number."""
    if type(value) is str or type(value) is int:
        found = _STATES.get(value)
        if found is not None:
            return found
    _bad_enum("state", value, "a TASK_STATE_* name")


def _bad_enum(key: str, value: Any, expected: str) -> NoReturn:
    fail("", key, "is required" if value is None else f"expected {expected}")


def moment(d: Obj, key: str) -> datetime | None:
    """An optional RFC 3339 timestamp, in UTC."""
    value = d.get(key)
    if type(value) is str and len(value) == 24 and _CANONICAL.fullmatch(value):
        with contextlib.suppress(ValueError):  # fast path: `2025-10-28T10:30:00.000Z`
            return datetime.fromisoformat(value)
    return timestamp(d, key, "")


def free(value: JSONObject) -> Obj:
    """A free-form object (Struct) for output: the model's mapping as a dict."""
    return value if type(value) is dict else dict(value)


# --- resource names (AIP-122) ----------------------------------------------------------------


def task_name(task_id: str) -> str:
    return f"tasks/{task_id}"


def config_name(task_id: str, config_id: str) -> str:
    return f"tasks/{task_id}/pushNotificationConfigs/{config_id}"


def parse_task_name(value: Any, key: str) -> str:
    """The task id of `tasks/{id}`; anything else is an error naming `key`."""
    match = _TASK_NAME.fullmatch(value) if type(value) is str else None
    if match is None:
        fail("", key, "expected a resource name tasks/{id}")
    return match.group(1)


def parse_config_name(value: Any, key: str) -> tuple[str, str]:
    """(task id, config id) of `tasks/{id}/pushNotificationConfigs/{configId}`."""
    match = _CONFIG_NAME.fullmatch(value) if type(value) is str else None
    if match is None:
        fail("", key, "expected a resource name tasks/{id}/pushNotificationConfigs/{configId}")
    return match.group(1), match.group(2)
