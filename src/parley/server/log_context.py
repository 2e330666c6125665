"""The ids of the task being worked on, for log lines: the runner sets them for each run
of the agent (its asyncio task, so everything the agent and the runner log while it runs
carries them); a log formatter reads them (`parley serve --log-format json`). A record
may also name its own with `extra={"task_id": …, "context_id": …}`."""

from __future__ import annotations

from contextvars import ContextVar

TASK_IDS: ContextVar[tuple[str, str] | None] = ContextVar("parley_task_ids", default=None)
"""(task id, context id) of the agent's run in progress, set once per run: the runner
sets it in the run's own asyncio task, whose context is its own (no reset needed)."""


def current_task() -> tuple[str, str] | None:
    """(task id, context id) of the run in progress, or None."""
    return TASK_IDS.get()
