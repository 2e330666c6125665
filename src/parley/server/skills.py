"""What `Agent.skill` learns from a function's signature: whether it takes the message's
text rather than the `TaskContext`, and what its return annotation says it produces."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from parley.model import DataPart, RawPart, TextPart, UrlPart
from parley.server.task_context import TaskContext

JSON_MODE = "application/json"

_PARTS = (TextPart, RawPart, UrlPart, DataPart)


def _hints(function: Callable[..., Any]) -> dict[str, Any]:
    """The function's resolved annotations (a callable object's: its `__call__`'s, the
    signature `inspect` reads); {} when they cannot be resolved."""
    if not (inspect.isroutine(function) or inspect.isclass(function)):
        function = type(function).__call__
    try:
        return typing.get_type_hints(function)
    except Exception:  # a forward reference to a name the function's module lacks
        return {}


def taking_text(function: Callable[..., Any]) -> Callable[[TaskContext], Any]:
    """`function` as a skill: itself if it takes the `TaskContext`; if its one parameter
    is a `str`, a function calling it with the message's text (what it returns, awaits
    or yields is the skill's)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return function
    if len(parameters) != 1 or _hints(function).get(parameters[0].name) is not str:
        return function

    def skill(task: TaskContext) -> Any:
        return function(task.text)

    skill.__name__ = getattr(function, "__name__", "skill")
    skill.__doc__ = function.__doc__
    return skill


def declared_output_modes(function: Callable[..., Any]) -> tuple[str, ...]:
    """`application/json` for a function annotated to return a dict or a list (its
    result becomes a data part); none (the agent's defaults) otherwise."""
    returned = _hints(function).get("return")
    origin = typing.get_origin(returned) or returned
    if not isinstance(origin, type):
        return ()
    if issubclass(origin, Mapping):
        return (JSON_MODE,)
    if issubclass(origin, list):  # a list of parts is parts, any other list data
        items = typing.get_args(returned)
        if not items or not _are_parts(items[0]):
            return (JSON_MODE,)
    return ()


def _are_parts(annotation: Any) -> bool:
    kinds = typing.get_args(annotation) or (annotation,)
    return all(isinstance(kind, type) and issubclass(kind, _PARTS) for kind in kinds)
