"""Shaping a task for a response: `historyLength` trimming (1.0 semantics) and artifact removal.

Pure functions over frozen model objects. No I/O.
"""

from __future__ import annotations

from msgspec.structs import replace

from parley.model import Task
from parley.protocol.errors import invalid_field


def trim_history(task: Task, history_length: int | None, *, field: str = "historyLength") -> Task:
    """The task with at most `history_length` of its most recent messages (R-TASK-1, R-TASK-2).

    None: unchanged (no client limit); 0: no history; n > 0: the n most recent messages;
    negative: InvalidParamsError naming `field`. 0.3 codecs map their "0 = unlimited"
    to None before calling this (REFERENCE §8.4).
    """
    if history_length is None:
        return task
    if history_length < 0:
        raise invalid_field(field, f"must be >= 0, got {history_length}")
    if len(task.history) <= history_length:
        return task
    kept = task.history[len(task.history) - history_length :]
    return replace(task, history=kept)


def without_artifacts(task: Task) -> Task:
    """The task without artifacts (ListTasks without `includeArtifacts`, R-TASK-3)."""
    if not task.artifacts:
        return task
    return replace(task, artifacts=())
