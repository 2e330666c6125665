"""Task generations (A2A 1.1 draft) as preconditions: a follow-up's `ifGenerationMatch`,
and whether a long-polling GetTask (`currentGeneration`) may answer now. Counting them
is `folding`'s. No I/O."""

from __future__ import annotations

from parley.model import SendMessageConfiguration, Task
from parley.protocol import lifecycle
from parley.protocol.errors import TaskGenerationMismatchError


def check_match(task: Task, configuration: SendMessageConfiguration | None) -> None:
    """Raise TaskGenerationMismatchError unless the follow-up's `ifGenerationMatch`, if
    any, is the task's current generation (a new task ignores it: the caller checks only
    follow-ups)."""
    expected = configuration.if_generation_match if configuration is not None else None
    if expected is None or expected == task.generation:
        return
    raise TaskGenerationMismatchError(
        f"Task generation mismatch: expected {expected} but current generation is "
        f"{task.generation}",
        metadata={
            "taskId": task.id,
            "expectedGeneration": str(expected),
            "currentGeneration": str(task.generation),
        },
    )


def answers_now(task: Task, current_generation: int | None) -> bool:
    """Whether GetTask returns `task` at once: no `currentGeneration`, the task is past
    it, or the task is terminal (its generation will not move again)."""
    return (
        current_generation is None
        or task.generation > current_generation
        or lifecycle.is_terminal(task.status.state)
    )
