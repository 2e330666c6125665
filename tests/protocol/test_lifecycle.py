"""The lifecycle table (REFERENCE §8.1): every pair of states, reachability, stream ends.

Also: folding any sequence of events never leaves a terminal state (R-SEND-8) and fails
only with protocol errors.
"""

from __future__ import annotations

import itertools
from collections import deque
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from parley.model import (
    Artifact,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskEvent,
    TaskState,
    TaskStatus,
    TextPart,
)
from parley.protocol import folding, lifecycle
from parley.protocol.errors import (
    A2AError,
    InvalidAgentResponseError,
    UnsupportedOperationError,
)
from tests.strategies import Flavor, artifact_events, messages, status_events

ALL_PAIRS = list(itertools.product(TaskState, TaskState))
TERMINAL = {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
INTERRUPTED = {TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED}


def test_every_pair_is_covered() -> None:
    assert len(ALL_PAIRS) == 81
    assert set(lifecycle.TRANSITIONS) == set(TaskState)


@pytest.mark.parametrize(("current", "target"), ALL_PAIRS, ids=lambda s: s.name)
def test_transition_agrees_with_the_table(current: TaskState, target: TaskState) -> None:
    """`transition` returns the target iff the move is legal, else InvalidAgentResponseError."""
    if target in lifecycle.TRANSITIONS[current]:
        assert lifecycle.transition(current, target) is target
    else:
        with pytest.raises(InvalidAgentResponseError) as caught:
            lifecycle.transition(current, target)
        assert caught.value.metadata == {"from": current.name, "to": target.name}


def test_the_sets_are_as_the_spec_names_them() -> None:
    """REFERENCE §8.1: terminal, interrupted and active states."""
    assert lifecycle.TERMINAL == TERMINAL
    assert lifecycle.INTERRUPTED == INTERRUPTED
    assert {TaskState.SUBMITTED, TaskState.WORKING} == lifecycle.ACTIVE


@pytest.mark.parametrize("state", sorted(TERMINAL), ids=lambda s: s.name)
def test_terminal_states_have_no_exits(state: TaskState) -> None:
    """Terminal tasks are immutable (REFERENCE §8.1, R-SEND-8)."""
    assert lifecycle.is_terminal(state)
    assert not lifecycle.TRANSITIONS[state]
    assert not any(target in lifecycle.TRANSITIONS[state] for target in TaskState)


def test_unspecified_is_never_entered_nor_left() -> None:
    """Never emit UNSPECIFIED (REFERENCE §8.1)."""
    assert not lifecycle.TRANSITIONS[TaskState.UNSPECIFIED]
    assert not any(TaskState.UNSPECIFIED in lifecycle.TRANSITIONS[s] for s in TaskState)


def _reachable(start: TaskState) -> set[TaskState]:
    seen = {start}
    queue = deque([start])
    while queue:
        for nxt in lifecycle.TRANSITIONS[queue.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


LIVE = [s for s in TaskState if s not in TERMINAL and s is not TaskState.UNSPECIFIED]


@pytest.mark.parametrize("state", LIVE, ids=lambda s: s.name)
def test_every_live_state_can_reach_every_terminal_state(state: TaskState) -> None:
    """REFERENCE §8.1: any live task can still complete, fail, be canceled or rejected."""
    assert _reachable(state) >= TERMINAL


def test_interrupted_states_resume() -> None:
    """INPUT_REQUIRED / AUTH_REQUIRED ↔ WORKING (REFERENCE §8.1, §8.8)."""
    for state in INTERRUPTED:
        assert TaskState.WORKING in lifecycle.TRANSITIONS[state]
        assert state in lifecycle.TRANSITIONS[TaskState.WORKING]


@pytest.mark.parametrize("state", list(TaskState), ids=lambda s: s.name)
def test_stream_and_blocking_send_end_exactly_at_terminal_or_interrupted(
    state: TaskState,
) -> None:
    """R-SEND-2, R-STREAM-4, R-STREAM-11: the end of a blocking send and of a stream."""
    expected = state in TERMINAL | INTERRUPTED
    assert lifecycle.ends_stream(state) is expected
    assert lifecycle.ends_blocking_send(state) is expected
    assert lifecycle.is_terminal(state) is (state in TERMINAL)
    assert lifecycle.is_interrupted(state) is (state in INTERRUPTED)


TASK_ID = "task-1"
CONTEXT_ID = "ctx-1"


def _own(event: TaskEvent, task_id: str, context_id: str) -> TaskEvent:
    return replace(event, task_id=task_id, context_id=context_id)


def _events() -> st.SearchStrategy[TaskEvent]:
    raw: st.SearchStrategy[TaskEvent] = (
        status_events(Flavor.V1_0) | artifact_events(Flavor.V1_0) | messages(Flavor.V1_0)
    )
    # Mostly events of our task, sometimes empty ids, sometimes foreign ones.
    owner = st.sampled_from([(TASK_ID, CONTEXT_ID)] * 4 + [("", ""), ("other", CONTEXT_ID)])
    return st.tuples(raw, owner).map(lambda pair: _own(pair[0], *pair[1]))


@settings(max_examples=100)
@given(st.lists(_events(), max_size=12))
def test_folding_never_leaves_a_terminal_state(events: list[TaskEvent]) -> None:
    """R-SEND-8 / §8.1: once terminal, every further event is refused; errors are A2AErrors."""
    task = Task(
        id=TASK_ID,
        context_id=CONTEXT_ID,
        status=TaskStatus(state=TaskState.SUBMITTED, timestamp=datetime(2025, 1, 1, tzinfo=UTC)),
    )
    for event in events:
        before = task
        try:
            task = folding.apply_event(task, event)
        except A2AError:
            assert task is before
            continue
        except Exception as exc:  # pragma: no cover - the failure being tested for
            pytest.fail(f"non-protocol error {exc!r} for {event!r}")
        if lifecycle.is_terminal(before.status.state):
            pytest.fail(f"terminal task changed by {event!r}")
        assert task.id == TASK_ID
        assert task.context_id == CONTEXT_ID
        assert len({a.artifact_id for a in task.artifacts}) == len(task.artifacts)


def _event_kinds() -> dict[str, TaskEvent]:
    """One event of every kind that is not a status update (those are the 81 pairs)."""
    chunk = Artifact(artifact_id="a", parts=(TextPart(text="x"),))

    def message(role: Role) -> Message:
        return Message(message_id=f"m-{role.name}", role=role, parts=(TextPart(text="x"),))

    return {
        "artifact": TaskArtifactUpdateEvent(task_id=TASK_ID, context_id=CONTEXT_ID, artifact=chunk),
        "artifact-append": TaskArtifactUpdateEvent(
            task_id=TASK_ID, context_id=CONTEXT_ID, artifact=chunk, append=True, last_chunk=True
        ),
        "user-message": message(Role.USER),
        "agent-message": message(Role.AGENT),
    }


@pytest.mark.parametrize("kind", sorted(_event_kinds()))
@pytest.mark.parametrize("state", list(TaskState), ids=lambda s: s.name)
def test_every_state_and_event_kind(state: TaskState, kind: str) -> None:
    """Every (state, event) pair beyond status updates: live tasks take artifacts and
    messages without changing state; terminal tasks refuse them (R-SEND-8, §8.1)."""
    task = Task(id=TASK_ID, context_id=CONTEXT_ID, status=TaskStatus(state=state))
    event = _event_kinds()[kind]
    if lifecycle.is_terminal(state):
        expected = (
            UnsupportedOperationError if kind == "user-message" else InvalidAgentResponseError
        )
        with pytest.raises(expected):
            folding.apply_event(task, event)
        return
    after = folding.apply_event(task, event)
    assert after.status.state is state
    if kind.startswith("artifact"):
        assert after.artifacts == (event.artifact,)  # type: ignore[union-attr]
    else:
        assert after.history[-1].message_id == event.message_id  # type: ignore[union-attr]
