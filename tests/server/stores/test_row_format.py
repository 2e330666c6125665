"""The stores' row format 1: every model object a store keeps reads back equal to what was
written (Hypothesis over the model); the documents are pinned, so a change to the format
fails here and needs a new format number with a migration; the rewrite from format 0 (A2A
1.0 wire JSON) gives format 1 and leaves a format-1 value as it is."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from parley.model import (
    Artifact,
    AuthenticationInfo,
    DataPart,
    Message,
    RawPart,
    Role,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TextPart,
    UrlPart,
)
from parley.server.stores import row_format as f
from parley.server.stores import row_upgrade
from tests.strategies import Flavor, artifacts, messages, push_configs, statuses


def _again(value: object) -> Any:
    """A value through its JSON text, as a database gives it back."""
    return f.loads(f.dumps(value))


@given(messages(Flavor.V1_0))
def test_messages_read_back_equal(message: Message) -> None:
    assert f.decode_message(_again(f.encode_message(message))) == message


@given(statuses(Flavor.V1_0))
def test_statuses_read_back_equal(status: TaskStatus) -> None:
    assert f.decode_status(_again(f.encode_status(status))) == status


@given(artifacts(Flavor.V1_0), st.integers(0, 3))
def test_artifacts_read_back_equal_from_their_chunks(artifact: Artifact, cut: int) -> None:
    parts = [f.encode_part(part) for part in artifact.parts]
    chunks = [parts[:cut], parts[cut:]]
    header = _again(f.encode_header(artifact))
    assert f.decode_artifact(header, _again(chunks)) == artifact


@given(push_configs(Flavor.V1_0))
def test_push_configs_read_back_equal(config: TaskPushNotificationConfig) -> None:
    text = f.dumps(f.encode_push_config(config))
    assert f.decode_push_config(f.loads(text)) == config


def test_timestamps_keep_their_zone_and_microseconds() -> None:
    for moment in (
        datetime(2025, 3, 15, 18, 30, 0, 123_456, tzinfo=UTC),
        datetime(2025, 3, 15, 20, 30, tzinfo=timezone(timedelta(hours=2))),
        datetime(2025, 3, 15, 18, 30),  # naive: as given
    ):
        status = TaskStatus(state=TaskState.WORKING, timestamp=moment)
        found = f.decode_status(_again(f.encode_status(status)))
        assert found == status
        assert found.timestamp is not None
        assert found.timestamp.tzinfo == moment.tzinfo


def test_metadata_of_any_mapping_is_stored_as_an_object() -> None:
    frozen: Mapping[str, Any] = MappingProxyType({"k": [1, "two"]})
    message = Message(message_id="m", role=Role.USER, parts=(), metadata=frozen)
    assert f.decode_message(_again(f.encode_message(message))) == Message(
        message_id="m", role=Role.USER, parts=(), metadata={"k": [1, "two"]}
    )


# ----------------------------------------------------------------------------- pinned

QUESTION = Message(
    message_id="m1",
    role=Role.USER,
    parts=(
        TextPart(text="hi"),
        TextPart(text="note", media_type="text/plain", filename="n.txt", metadata={"a": 1}),
        RawPart(raw=b"\x00\xff"),
        UrlPart(url="https://example.com/f", media_type="application/pdf"),
        DataPart(data=None),
    ),
    context_id="c1",
    task_id="t1",
    metadata={"k": "v"},
    extensions=("urn:x",),
    reference_task_ids=("t0",),
)

PINNED = [
    (
        f.encode_message(QUESTION),
        '{"message_id":"m1","role":1,"parts":[{"text":"hi"},{"text":"note",'
        '"media_type":"text/plain","filename":"n.txt","metadata":{"a":1}},{"raw":"AP8="},'
        '{"url":"https://example.com/f","media_type":"application/pdf"},{"data":null}],'
        '"context_id":"c1","task_id":"t1","metadata":{"k":"v"},"extensions":["urn:x"],'
        '"reference_task_ids":["t0"]}',
    ),
    (
        f.encode_status(
            TaskStatus(
                state=TaskState.INPUT_REQUIRED,
                message=Message(message_id="m2", role=Role.AGENT, parts=(TextPart(text="?"),)),
                timestamp=datetime(2025, 3, 15, 18, 30, 0, 5000, tzinfo=UTC),
            )
        ),
        '{"state":6,"message":{"message_id":"m2","role":2,"parts":[{"text":"?"}]},'
        '"timestamp":"2025-03-15T18:30:00.005000Z"}',
    ),
    (
        f.encode_header(
            Artifact(
                artifact_id="a1",
                parts=(TextPart(text="x"),),
                name="n",
                description="d",
                metadata={},
                extensions=("urn:y",),
            )
        ),
        '{"artifact_id":"a1","name":"n","description":"d","metadata":{},"extensions":["urn:y"]}',
    ),
    (
        f.encode_push_config(
            TaskPushNotificationConfig(
                url="https://hook.example/",
                task_id="t1",
                id="c1",
                token="tok",
                authentication=AuthenticationInfo(scheme="Bearer", credentials="s"),
                tenant="acme",
            )
        ),
        '{"url":"https://hook.example/","task_id":"t1","id":"c1","token":"tok",'
        '"authentication":{"scheme":"Bearer","credentials":"s"},"tenant":"acme"}',
    ),
    (
        f.encode_push_config(
            TaskPushNotificationConfig(
                url="https://hook.example/", authentication=AuthenticationInfo(scheme="Basic")
            )
        ),
        '{"url":"https://hook.example/","authentication":{"scheme":"Basic"}}',
    ),
]


def test_format_1_is_pinned() -> None:
    """Changing these documents changes every database: that takes a new format number
    and a migration rewriting the rows (`row_upgrade`), not an edit here."""
    assert f.FORMAT == 1
    for document, text in PINNED:
        assert f.dumps(document) == text


# ----------------------------------------------------------------------------- format 0

FORMAT_0: list[tuple[Callable[[Any], Any], Any, Any]] = [
    (
        row_upgrade.message,
        {
            "messageId": "m1",
            "role": "ROLE_USER",
            "parts": [{"text": "note", "mediaType": "text/plain"}, {"raw": "AP8="}],
            "contextId": "c1",
            "taskId": "t1",
            "referenceTaskIds": ["t0"],
            "extensions": ["urn:x"],
        },
        {
            "message_id": "m1",
            "role": 1,
            "parts": [{"text": "note", "media_type": "text/plain"}, {"raw": "AP8="}],
            "context_id": "c1",
            "task_id": "t1",
            "reference_task_ids": ["t0"],
            "extensions": ["urn:x"],
        },
    ),
    (
        row_upgrade.status,
        {
            "state": "TASK_STATE_COMPLETED",
            "message": {"messageId": "m2", "role": "ROLE_AGENT", "parts": []},
            "timestamp": "2025-03-15T18:30:00.000Z",
        },
        {
            "state": 3,
            "message": {"message_id": "m2", "role": 2, "parts": []},
            "timestamp": "2025-03-15T18:30:00.000Z",
        },
    ),
    (row_upgrade.status, {"state": "TASK_STATE_SUBMITTED"}, {"state": 1}),
    (row_upgrade.header, {"artifactId": "a1", "name": "n"}, {"artifact_id": "a1", "name": "n"}),
    (row_upgrade.parts, [{"data": {"mediaType": 1}, "mediaType": "x"}], [
        {"data": {"mediaType": 1}, "media_type": "x"}
    ]),
    (
        row_upgrade.push_config,
        {"tenant": "acme", "id": "c1", "taskId": "t1", "url": "https://hook.example/"},
        {"tenant": "acme", "id": "c1", "task_id": "t1", "url": "https://hook.example/"},
    ),
]  # fmt: skip


def test_format_0_is_rewritten_into_format_1_once() -> None:
    for rewrite, old, new in FORMAT_0:
        assert rewrite(old) == new
        assert rewrite(new) == new  # already format 1: left as it is
    status = f.decode_status(row_upgrade.status(FORMAT_0[1][1]))
    assert status.timestamp == datetime(2025, 3, 15, 18, 30, tzinfo=UTC)
