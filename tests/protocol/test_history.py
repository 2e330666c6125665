"""`historyLength` trimming with 1.0 semantics and artifact removal (REFERENCE §8.4, §8.5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.model import Artifact, Message, Role, Task, TaskState, TaskStatus, TextPart
from parley.protocol.errors import InvalidParamsError
from parley.protocol.history import trim_history, without_artifacts
from tests.strategies import Flavor, tasks


def make_task(n: int) -> Task:
    history = tuple(
        Message(message_id=f"m{i}", role=Role.USER, parts=(TextPart(text=str(i)),))
        for i in range(n)
    )
    return Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.WORKING),
        history=history,
        artifacts=(Artifact(artifact_id="a", parts=(TextPart(text="x"),)),),
    )


def ids(task: Task) -> list[str]:
    return [m.message_id for m in task.history]


def test_none_means_no_limit() -> None:
    """REFERENCE §8.4: unset ⇒ no client limit."""
    task = make_task(5)
    assert trim_history(task, None) is task


def test_zero_means_no_history() -> None:
    """R-TASK-1: `historyLength` 0 ⇒ no history (D11: 1.0 semantics)."""
    trimmed = trim_history(make_task(5), 0)
    assert trimmed.history == ()
    assert trimmed.artifacts == make_task(5).artifacts


@pytest.mark.parametrize(("length", "expected"), [(1, ["m4"]), (3, ["m2", "m3", "m4"])])
def test_n_keeps_the_most_recent(length: int, expected: list[str]) -> None:
    """R-TASK-2, R-SEND-5: at most n, the most recent ones, in order."""
    assert ids(trim_history(make_task(5), length)) == expected


@pytest.mark.parametrize("length", [5, 6, 1000])
def test_n_at_least_the_history_changes_nothing(length: int) -> None:
    task = make_task(5)
    assert trim_history(task, length) is task


@pytest.mark.parametrize("length", [-1, -100])
def test_negative_is_invalid_params(length: int) -> None:
    """REFERENCE §8.4: negative ⇒ InvalidParams, naming the field."""
    with pytest.raises(InvalidParamsError) as caught:
        trim_history(make_task(2), length)
    assert caught.value.field_violations[0].field == "historyLength"
    with pytest.raises(InvalidParamsError) as caught:
        trim_history(make_task(2), length, field="configuration.historyLength")
    assert caught.value.field_violations[0].field == "configuration.historyLength"


@given(tasks(Flavor.V1_0), st.none() | st.integers(0, 5))
def test_trim_is_a_suffix_never_longer_than_asked(task: Task, length: int | None) -> None:
    """R-TASK-2: never more than `historyLength`; everything else untouched."""
    trimmed = trim_history(task, length)
    limit = len(task.history) if length is None else length
    assert len(trimmed.history) == min(limit, len(task.history))
    assert task.history[len(task.history) - len(trimmed.history) :] == trimmed.history
    assert (trimmed.id, trimmed.status, trimmed.artifacts) == (task.id, task.status, task.artifacts)


def test_without_artifacts() -> None:
    """R-TASK-3: ListTasks without includeArtifacts carries no artifacts."""
    task = make_task(2)
    stripped = without_artifacts(task)
    assert stripped.artifacts == ()
    assert stripped.history == task.history
    assert without_artifacts(stripped) is stripped
