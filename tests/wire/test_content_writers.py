"""The content writers of each JSON form (`wire.content_writers`): member order, which
JSON objects do not compare but the bytes on the wire show, and what only one form writes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from parley.model import (
    Artifact,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.wire.json_codec import CONTENT_TYPES, JsonCodec
from parley.wire.v0_3.jsonrpc_codec import CODEC as JSONRPC_0_3
from parley.wire.v0_3.rest.protojson_codec import CODEC as REST_0_3
from parley.wire.v1_0.protojson_codec import CODEC as JSON_1_0

MESSAGE = Message(
    message_id="m",
    role=Role.AGENT,
    parts=(TextPart(text="hi"),),
    context_id="c",
    task_id="t",
    metadata={"k": 1},
    extensions=("urn:x",),
    reference_task_ids=("r",),
)
ARTIFACT = Artifact(
    artifact_id="a",
    parts=(TextPart(text="x"),),
    name="n",
    description="d",
    metadata={"k": 1},
    extensions=("urn:x",),
)
STATUS = TaskStatus(
    state=TaskState.INPUT_REQUIRED,
    message=MESSAGE,
    timestamp=datetime(2025, 10, 28, 10, 30, tzinfo=UTC),
)
TASK = Task(
    id="t", context_id="c", status=STATUS, artifacts=(ARTIFACT,), history=(MESSAGE,), metadata={}
)
STATUS_EVENT = TaskStatusUpdateEvent(task_id="t", context_id="c", status=STATUS, metadata={})
ARTIFACT_EVENT = TaskArtifactUpdateEvent(
    task_id="t", context_id="c", artifact=ARTIFACT, append=True, last_chunk=True, metadata={}
)
VALUES = (MESSAGE, ARTIFACT, STATUS, TASK, STATUS_EVENT, ARTIFACT_EVENT)

IDS = ["messageId", "role", "parts", "contextId", "taskId"]
TAIL = ["metadata", "extensions"]
ORDERS: dict[str, tuple[JsonCodec, list[list[str]]]] = {
    "0.3 JSON-RPC": (
        JSONRPC_0_3,
        [
            ["kind", *IDS, *TAIL, "referenceTaskIds"],
            ["artifactId", "parts", "name", "description", *TAIL],
            ["state", "message", "timestamp"],
            ["kind", "id", "contextId", "status", "artifacts", "history", "metadata"],
            ["kind", "taskId", "contextId", "status", "final", "metadata"],
            ["kind", "taskId", "contextId", "artifact", "append", "lastChunk", "metadata"],
        ],
    ),
    "1.0": (
        JSON_1_0,
        [
            [*IDS, *TAIL, "referenceTaskIds"],
            ["artifactId", "name", "description", "parts", *TAIL],
            ["state", "message", "timestamp"],
            ["id", "contextId", "status", "artifacts", "history", "metadata"],
            ["taskId", "contextId", "status", "metadata"],
            ["taskId", "contextId", "artifact", "append", "lastChunk", "metadata"],
        ],
    ),
    "0.3 REST": (
        REST_0_3,
        [
            ["messageId", "contextId", "taskId", "role", "content", *TAIL],
            ["artifactId", "name", "description", "parts", *TAIL],
            ["state", "message", "timestamp"],
            ["id", "contextId", "status", "artifacts", "history", "metadata"],
            ["taskId", "contextId", "status", "final", "metadata"],
            ["taskId", "contextId", "artifact", "append", "lastChunk", "metadata"],
        ],
    ),
}


@pytest.mark.parametrize("form", list(ORDERS))
@pytest.mark.parametrize("index", range(len(VALUES)))
def test_members_in_the_forms_order(form: str, index: int) -> None:
    codec, orders = ORDERS[form]
    out: Any = codec.encode(VALUES[index])
    assert list(out) == orders[index]
    assert codec.encode(codec.decode(CONTENT_TYPES[index], out)) == out  # its reader


@pytest.mark.parametrize("form", list(ORDERS))
def test_a_nested_message_has_the_same_members(form: str) -> None:
    codec, orders = ORDERS[form]
    out: Any = codec.encode(TASK)
    assert list(out["status"]["message"]) == orders[0]
    assert [list(message) for message in out["history"]] == [orders[0]]
    assert [list(artifact) for artifact in out["artifacts"]] == [orders[1]]


def test_final_is_written_when_false_where_the_form_has_it() -> None:
    working = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING)
    )
    assert JSONRPC_0_3.encode(working)["final"] is False
    assert REST_0_3.encode(working)["final"] is False
    assert "final" not in JSON_1_0.encode(working)


@pytest.mark.parametrize("codec", [JSONRPC_0_3, JSON_1_0, REST_0_3])
def test_encodings_already_made_are_put_in_as_they_are(codec: JsonCodec) -> None:
    """What a stored row's fragment stands for is not encoded again."""
    status, history, parts = object(), [object()], [object()]
    task: Any = codec.forms.standalone[Task][0]
    assert task(TASK, status, history)["status"] is status
    assert task(TASK, status, history)["history"] is history
    event: Any = codec.forms.standalone[TaskArtifactUpdateEvent][0]
    assert event(ARTIFACT_EVENT, parts)["artifact"]["parts"] is parts
