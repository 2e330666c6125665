"""The canonical model: immutable, compared by value, keyword-only, sensible defaults."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from parley import model as m


def _task() -> m.Task:
    return m.Task(
        id="t-1",
        context_id="c-1",
        status=m.TaskStatus(
            state=m.TaskState.WORKING, timestamp=datetime(2025, 10, 28, 10, 30, tzinfo=UTC)
        ),
        history=(m.Message(message_id="m", role=m.Role.USER, parts=(m.TextPart(text="hi"),)),),
    )


def test_objects_are_immutable() -> None:
    task = _task()
    with pytest.raises(AttributeError):
        task.id = "other"  # type: ignore[misc]


def test_equality_is_by_value_and_type() -> None:
    assert _task() == _task()
    assert m.TextPart(text="a") != m.TextPart(text="b")
    assert m.UrlPart(url="x") != m.TextPart(text="x")  # type: ignore[comparison-overlap]
    assert hash(m.TextPart(text="a")) == hash(m.TextPart(text="a"))


def test_changes_make_new_objects() -> None:
    task = _task()
    done = msgspec.structs.replace(task, status=m.TaskStatus(state=m.TaskState.COMPLETED))
    assert task.status.state is m.TaskState.WORKING
    assert done.status.state is m.TaskState.COMPLETED
    assert done.history == task.history


def test_arguments_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        m.TextPart("positional")  # type: ignore[call-arg]


def test_defaults_mean_absent() -> None:
    part = m.RawPart(raw=b"\x00")
    assert (part.media_type, part.filename, part.metadata) == ("", "", None)
    capabilities = m.AgentCapabilities()
    assert capabilities.streaming is None  # not stated, unlike an explicit False
    assert m.SendMessageConfiguration().return_immediately is False  # blocking by default


def test_enum_values_are_the_protobuf_numbers() -> None:
    """Numeric values are the same in both versions' protos (REFERENCE §4.1)."""
    assert [s.value for s in m.TaskState] == list(range(9))
    assert (m.Role.USER.value, m.Role.AGENT.value) == (1, 2)
