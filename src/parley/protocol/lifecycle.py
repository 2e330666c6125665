"""The task lifecycle as a table: terminal, interrupted and active states, legal moves.

Nothing else in Parley compares task states: ask this module. No I/O here.

    SUBMITTED ──► WORKING ──► COMPLETED | FAILED | CANCELED | REJECTED   (terminal)
        │            ▲  │
        │            │  └──► INPUT_REQUIRED | AUTH_REQUIRED              (interrupted)
        │            └──────────────┘  (resumed by a follow-up message or credentials)
        └──► any terminal or interrupted state directly
"""

from __future__ import annotations

from collections.abc import Mapping

from parley.model import TaskState
from parley.protocol.errors import InvalidAgentResponseError

S = TaskState

TERMINAL: frozenset[TaskState] = frozenset({S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED})
"""Immutable: no further messages, no restart (spec §8.1)."""

INTERRUPTED: frozenset[TaskState] = frozenset({S.INPUT_REQUIRED, S.AUTH_REQUIRED})
"""Waiting for the client: a blocking send returns, a stream ends (spec §3.2.2, §11.7)."""

ACTIVE: frozenset[TaskState] = frozenset({S.SUBMITTED, S.WORKING})
"""The agent is (or will be) working."""

_AFTER_ACTIVE = TERMINAL | INTERRUPTED | {S.WORKING}

TRANSITIONS: Mapping[TaskState, frozenset[TaskState]] = {
    S.UNSPECIFIED: frozenset(),
    S.SUBMITTED: frozenset(_AFTER_ACTIVE | {S.SUBMITTED}),
    S.WORKING: frozenset(_AFTER_ACTIVE),
    # A follow-up message resumes an interrupted task; it may also end there
    # (canceled, failed) or be asked again.
    S.INPUT_REQUIRED: frozenset(_AFTER_ACTIVE | {S.SUBMITTED}),
    S.AUTH_REQUIRED: frozenset(_AFTER_ACTIVE | {S.SUBMITTED}),
    S.COMPLETED: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELED: frozenset(),
    S.REJECTED: frozenset(),
}
"""Legal moves: `TRANSITIONS[current]` is the set of states a task may move to.

WORKING → WORKING is legal (a progress update with a new status message).
"""


def is_terminal(state: TaskState) -> bool:
    return state in TERMINAL


def is_interrupted(state: TaskState) -> bool:
    return state in INTERRUPTED


ENDS_STREAM: frozenset[TaskState] = TERMINAL | INTERRUPTED
"""The states after whose update a stream closes (`ends_stream`; a hot path asks the set)."""

ENDS_BLOCKING_SEND: frozenset[TaskState] = TERMINAL | INTERRUPTED
"""The states at which a blocking SendMessage returns (`ends_blocking_send`)."""


def ends_stream(state: TaskState) -> bool:
    """Whether a stream closes after an update to this state (terminal or interrupted).

    0.3 marks that update `final: true`; 1.0 simply closes the stream.
    """
    return state in ENDS_STREAM


def ends_blocking_send(state: TaskState) -> bool:
    """Whether a blocking SendMessage returns at this state (R-SEND-2)."""
    return state in ENDS_BLOCKING_SEND


def transition(current: TaskState, target: TaskState) -> TaskState:
    """The new state, or InvalidAgentResponseError for an illegal move."""
    if target not in TRANSITIONS[current]:
        raise InvalidAgentResponseError(
            f"Illegal task state transition {current.name} -> {target.name}",
            metadata={"from": current.name, "to": target.name},
        )
    return target
