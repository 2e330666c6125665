"""Field-level vocabulary of the 1.0 wire form: enum spellings, lenient scalars,
oneof selection, lists, and error paths re-rooted under their parent object.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, NoReturn, TypeVar

from parley.model import JSONObject, Role, TaskState
from parley.protocol.errors import InvalidParamsError, invalid_field
from parley.wire.reader import Obj, fail, field, opt_bool, timestamp

T = TypeVar("T")

ROLE_NAMES: dict[Role, str] = {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT"}
STATE_NAMES: dict[TaskState, str] = {state: f"TASK_STATE_{state.name}" for state in TaskState}

_ROLES: dict[str | int, Role] = {name: role for role, name in ROLE_NAMES.items()}
_ROLES.update({int(role): role for role in Role})
_STATES: dict[str | int, TaskState] = {name: state for state, name in STATE_NAMES.items()}
_STATES.update({int(state): state for state in TaskState})
_FLAGS = {"true": True, "1": True, "false": False, "0": False}
_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", re.ASCII)


def nested(exc: InvalidParamsError, prefix: str) -> InvalidParamsError:
    """The same violation, with its field path put under `prefix` (`parts[0]` + `text`)."""
    if not exc.field_violations:
        return exc
    violation = exc.field_violations[0]
    inner = violation.field
    if not inner:
        path = prefix
    elif inner.startswith("["):
        path = prefix + inner
    else:
        path = f"{prefix}.{inner}"
    return invalid_field(path, violation.description)


def within(key: str, decode: Callable[[Any], T], value: Any) -> T:
    """Decode a nested object, naming `key` in any error."""
    try:
        return decode(value)
    except InvalidParamsError as exc:
        raise nested(exc, key) from None


def required(key: str, decode: Callable[[Any], T], value: Any) -> T:
    """Decode a REQUIRED nested object; absent (or null) is an error naming `key`."""
    if value is None:
        fail("", key, "is required")
    return within(key, decode, value)


def listed(key: str, decode: Callable[[Any], T], items: Any) -> tuple[T, ...]:
    """Decode a JSON list item by item; an error names the failing index, e.g. `parts[2]`."""
    if items is None:
        return ()
    if type(items) is not list:
        fail("", key, "expected a list")
    try:
        return tuple(map(decode, items))
    except InvalidParamsError as exc:
        raise nested(exc, f"{key}[{_failure_index(decode, items)}]") from None


def _failure_index(decode: Callable[[Any], object], items: list[Any]) -> int:
    """Which item fails to decode (found again, lazily, only once decoding has failed)."""
    for index, item in enumerate(items):
        try:
            decode(item)
        except InvalidParamsError:
            return index
    return 0


def obj(value: Any) -> Obj:
    """The payload as a JSON object (an error names no field: the caller prefixes it)."""
    if type(value) is dict:
        return value
    fail("", "", "expected a JSON object")


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
        found = _ROLES.get(value)
        if found is not None:
            return found
    _bad_enum("role", value, "ROLE_USER or ROLE_AGENT")


def state(value: Any, key: str = "state") -> TaskState:
    """A `TASK_STATE_*` name or its number (`TASK_STATE_UNSPECIFIED` included)."""
    if type(value) is str or type(value) is int:
        found = _STATES.get(value)
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
    """An optional RFC 3339 timestamp (also refusing ones that overflow once moved to UTC).

    Fast path for the form every 1.0 peer sends, `2025-10-28T10:30:00.000Z`.
    """
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
