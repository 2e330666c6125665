"""Field vocabulary of ProtoJSON, both protos: `ROLE_*` and `TASK_STATE_*` enums (the 0.3
proto spells canceled `TASK_STATE_CANCELLED`), oneofs, lenient scalars, timestamps, and
the 0.3 proto's resource names (`tasks/{id}`, AIP-122).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, NoReturn, TypeVar

from parley.model import JSONObject, Role, TaskState
from parley.wire.reader import Obj, fail, field, nested, opt_bool, timestamp

T = TypeVar("T")

ROLE_NAMES: dict[Role, str] = {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT"}
STATE_NAMES: dict[TaskState, str] = {state: f"TASK_STATE_{state.name}" for state in TaskState}
"""The 1.0 proto's state names."""
STATE_NAMES_V0_3: dict[TaskState, str] = {
    **STATE_NAMES,
    TaskState.CANCELED: "TASK_STATE_CANCELLED",
}
"""The 0.3 proto's state names: canceled is `TASK_STATE_CANCELLED`."""

ROLES: dict[str | int, Role] = {name: role for role, name in ROLE_NAMES.items()}
ROLES.update({int(role): role for role in Role})
"""A role by name or number."""
STATES: dict[str | int, TaskState] = {name: state for state, name in STATE_NAMES.items()}
STATES.update({int(state): state for state in TaskState})
"""A 1.0 state by name or number."""
STATES_V0_3: dict[str | int, TaskState] = {
    **{name: state for state, name in STATE_NAMES_V0_3.items()},
    **{int(state): state for state in TaskState},
    "TASK_STATE_CANCELED": TaskState.CANCELED,  # the 1.0 spelling, tolerated
}
"""A 0.3 state by name (`CANCELLED`, also `CANCELED`) or number."""

_FLAGS = {"true": True, "1": True, "false": False, "0": False}
_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", re.ASCII)
_TASK_NAME = re.compile(r"tasks/([^/]+)")
_CONFIG_NAME = re.compile(r"tasks/([^/]+)/pushNotificationConfigs/([^/]+)")


def required(key: str, decode: Callable[[Any], T], value: Any) -> T:
    """Decode a REQUIRED nested object; absent (or null) is an error naming `key`."""
    if value is None:
        fail("", key, "is required")
    return nested(key, decode, value)


def obj(value: Any) -> Obj:
    """The payload as a JSON object (an error names no field: the caller prefixes it)."""
    if type(value) is dict:
        return value
    fail("", "", "expected a JSON object")


def present(value: Any) -> Obj:
    """As `obj`, but null is `is required` (the 0.3 codec's wording)."""
    if type(value) is dict:
        return value
    fail("", "", "is required" if value is None else "expected a JSON object")


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
    """`ROLE_USER` / `ROLE_AGENT` or their numbers; unspecified is an error (REQUIRED)."""
    if type(value) is str or type(value) is int:
        found = ROLES.get(value)
        if found is not None:
            return found
    _bad_enum("role", value, "ROLE_USER or ROLE_AGENT")


def state(
    value: Any, key: str = "state", states: Mapping[str | int, TaskState] = STATES
) -> TaskState:
    """A `TASK_STATE_*` name of `states` or its number (`TASK_STATE_UNSPECIFIED` included)."""
    if type(value) is str or type(value) is int:
        found = states.get(value)
        if found is not None:
            return found
    _bad_enum(key, value, "a TASK_STATE_* name")


def _bad_enum(key: str, value: Any, expected: str) -> NoReturn:
    fail("", key, "is required" if value is None else f"expected {expected}")


def flag(d: Obj, camel: str, snake: str | None = None) -> bool | None:
    """An optional bool; from a REST query string also `"true"`/`"false"`/`"1"`/`"0"`."""
    value = field(d, camel, snake)
    if type(value) is str:
        found = _FLAGS.get(value.lower())
        if found is not None:
            return found
    return opt_bool(d, camel, "", snake)


def moment(d: Obj, camel: str, snake: str | None = None) -> datetime | None:
    """An optional RFC 3339 timestamp, in UTC (also refusing ones that overflow once moved
    to UTC). Fast path for the form peers send, `2025-10-28T10:30:00.000Z`."""
    value = d.get(camel)
    if type(value) is str and len(value) == 24 and _CANONICAL.fullmatch(value):
        with contextlib.suppress(ValueError):
            return datetime.fromisoformat(value)
    try:
        return timestamp(d, camel, "", snake)
    except OverflowError:
        fail("", camel, "timestamp out of range")


def tenanted(out: Obj, tenant: str) -> Obj:
    """A request object with its routing `tenant` first, when there is one."""
    return {"tenant": tenant, **out} if tenant else out


def free(value: JSONObject) -> Obj:
    """A free-form object (Struct) for output: the model's mapping as a dict."""
    return value if type(value) is dict else dict(value)


# --- the 0.3 proto's resource names (AIP-122) --------------------------------------------------


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
