"""Task generations as preconditions (`parley.protocol.generations`, A2A 1.1 draft): a
follow-up's `ifGenerationMatch`, when a long-polling GetTask answers at once, and the
generation an event carries on a stream that shows it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.model import (
    Artifact,
    Message,
    Role,
    SendMessageConfiguration,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import generations, lifecycle
from parley.protocol.errors import TaskGenerationMismatchError
from parley.protocol.negotiation import NUMBERED_VERSIONS, Version


def task(state: TaskState = TaskState.WORKING, generation: int = 3) -> Task:
    return Task(id="t", context_id="c", status=TaskStatus(state=state), generation=generation)


STATUS = TaskStatusUpdateEvent(
    task_id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING)
)
ARTIFACT = TaskArtifactUpdateEvent(
    task_id="t", context_id="c", artifact=Artifact(artifact_id="a", parts=(TextPart(text="x"),))
)
MESSAGE = Message(message_id="m", role=Role.AGENT, parts=(TextPart(text="hi"),))


def test_only_the_draft_shows_generations() -> None:
    assert frozenset({Version.V1_1}) == generations.SHOWN_IN
    assert generations.SHOWN_IN <= NUMBERED_VERSIONS


@pytest.mark.parametrize("event", [STATUS, ARTIFACT, task(generation=0)], ids=type)
def test_numbered_copies_the_sequence_into_task_events(
    event: Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent,
) -> None:
    out = generations.numbered(event, 9)
    assert out.generation == 9  # type: ignore[union-attr]
    assert event.generation == 0  # the original is untouched (immutable)
    assert type(out) is type(event)


def test_numbered_leaves_an_event_that_already_carries_it_as_it_is() -> None:
    event = generations.numbered(STATUS, 4)
    assert generations.numbered(event, 4) is event


@pytest.mark.parametrize("sequence", [None, 5])
def test_numbered_never_touches_a_message(sequence: int | None) -> None:
    assert generations.numbered(MESSAGE, sequence) is MESSAGE


def test_numbered_without_a_sequence_is_the_event_itself() -> None:
    assert generations.numbered(STATUS, None) is STATUS


@pytest.mark.parametrize(
    "configuration",
    [None, SendMessageConfiguration(), SendMessageConfiguration(if_generation_match=3)],
    ids=["no-configuration", "no-precondition", "matching"],
)
def test_check_match_passes_without_a_precondition_or_when_it_matches(
    configuration: SendMessageConfiguration | None,
) -> None:
    generations.check_match(task(generation=3), configuration)


@pytest.mark.parametrize("expected", [0, 2, 4])
def test_check_match_names_task_and_both_generations_on_a_mismatch(expected: int) -> None:
    configuration = SendMessageConfiguration(if_generation_match=expected)
    with pytest.raises(TaskGenerationMismatchError) as caught:
        generations.check_match(task(generation=3), configuration)
    assert caught.value.metadata == {
        "taskId": "t",
        "expectedGeneration": str(expected),
        "currentGeneration": "3",
    }
    assert f"expected {expected}" in caught.value.message


@given(
    state=st.sampled_from(list(TaskState)),
    generation=st.integers(min_value=0, max_value=50),
    current=st.none() | st.integers(min_value=0, max_value=50),
)
def test_answers_now_exactly_when_no_wait_could_change_the_answer(
    state: TaskState, generation: int, current: int | None
) -> None:
    """A long-poll waits only for a live task not yet past the generation the client has."""
    answer = generations.answers_now(task(state, generation), current)
    waits = current is not None and generation <= current and not lifecycle.is_terminal(state)
    assert answer is not waits


@pytest.mark.parametrize("state", sorted(lifecycle.INTERRUPTED))
def test_an_interrupted_task_at_the_known_generation_still_waits(state: TaskState) -> None:
    """Only a terminal task is final: an interrupted one moves again after the reply."""
    assert not generations.answers_now(task(state, 3), 3)
