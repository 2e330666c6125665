"""The conveniences on the model: every part's, message's, artifact's and task's `text`,
and task states that print as the `parley` command shows them."""

from __future__ import annotations

from parley.model import (
    Artifact,
    DataPart,
    Message,
    RawPart,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
    UrlPart,
)


def message(*parts: TextPart | RawPart | UrlPart | DataPart) -> Message:
    return Message(message_id="m", role=Role.AGENT, parts=parts)


def test_every_part_has_a_text_empty_unless_it_is_a_text_part() -> None:
    parts = (
        TextPart(text="hi"),
        RawPart(raw=b"a,b", media_type="text/csv", filename="r.csv"),
        UrlPart(url="https://example.com/r.csv"),
        DataPart(data={"a": 1}),
    )
    assert [part.text for part in parts] == ["hi", "", "", ""]


def test_a_message_joins_its_text_parts_by_lines() -> None:
    assert message(TextPart(text="a"), DataPart(data=1), TextPart(text="b")).text == "a\nb"
    assert message(DataPart(data=1)).text == ""


def test_an_artifact_runs_its_chunks_on() -> None:
    artifact = Artifact(artifact_id="a", parts=(TextPart(text="1 "), TextPart(text="2 ")))
    assert artifact.text == "1 2 "


def test_a_task_says_its_artifacts_else_its_status_message() -> None:
    status = TaskStatus(state=TaskState.INPUT_REQUIRED, message=message(TextPart(text="Who?")))
    asking = Task(id="t", context_id="c", status=status)
    assert asking.text == "Who?"
    done = Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.COMPLETED),
        artifacts=(
            Artifact(artifact_id="a", parts=(TextPart(text="one"),)),
            Artifact(artifact_id="f", parts=(RawPart(raw=b"x"),)),
            Artifact(artifact_id="b", parts=(TextPart(text="two"),)),
        ),
    )
    assert done.text == "one\ntwo"
    assert Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING)).text == ""


def test_states_print_as_names_and_stay_numbers() -> None:
    state = TaskState.INPUT_REQUIRED
    assert (str(state), f"{state}", f"[{state:>16}]") == (
        "input-required",
        "input-required",
        "[  input-required]",
    )
    assert repr(TaskState.COMPLETED) == "<TaskState.COMPLETED: 3>"
    assert (int(state), state == 6, state.name) == (6, True, "INPUT_REQUIRED")
    assert "state: %s" % (TaskState.AUTH_REQUIRED,) == "state: auth-required"  # noqa: UP031 - logging's form
