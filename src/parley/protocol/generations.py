"""Task generations (A2A 1.1 draft) as preconditions: a follow-up's `ifGenerationMatch`,
and whether a long-polling GetTask (`currentGeneration`) may answer now; and on streams,
the generation an update carries where a version shows it. Counting them is `folding`'s.
No I/O.

A published update carries no generation in the model: the generation it produced is its
sequence number (`Entry`, the SSE `id:`), and only an encoder of a version that writes
generations (`SHOWN_IN`) copies it in, with `numbered`. The other versions' streams pay
nothing for the count."""

from __future__ import annotations

from msgspec.structs import replace

from parley.model import Message, SendMessageConfiguration, StreamEvent, Task
from parley.protocol import lifecycle
from parley.protocol.errors import TaskGenerationMismatchError
from parley.protocol.negotiation import Version

SHOWN_IN = frozenset({Version.V1_1})
"""The versions whose events carry their generation (the A2A 1.1 draft's)."""


def numbered(event: StreamEvent, sequence: int | None) -> StreamEvent:
    """`event` carrying `sequence`, the generation it produced, as its generation (a
    message, or an event without a sequence number, is returned as it is)."""
    if sequence is None or type(event) is Message or event.generation == sequence:  # type: ignore[union-attr]
        return event
    return replace(event, generation=sequence)


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
