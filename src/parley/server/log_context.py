"""The ids of the task being worked on, for log lines: the runner sets them for each run
of the agent (its asyncio task, so everything the agent and the runner log while it runs
carries them); a log formatter reads them (`parley serve --log-format json`). A record
may also name its own with `extra={"task_id": …, "context_id": …}`."""

from __future__ import annotations

from contextvars import ContextVar
from typing import NamedTuple


class TaskIds(NamedTuple):
    task_id: str
    context_id: str


_CURRENT: ContextVar[TaskIds | None] = ContextVar("parley_task_ids", default=None)


def enter_task(task_id: str, context_id: str) -> None:
    """Name the task of the running asyncio task (whose context is its own: no reset)."""
    _CURRENT.set(TaskIds(task_id, context_id))


def current_task() -> TaskIds | None:
    return _CURRENT.get()
