"""The A2A 1.1 draft codecs (`parley.wire.v1_1`): the five generation fields round-trip
through the JSON codec (int64 as ProtoJSON strings, read as numbers or strings) and the
protobuf codec (direct and reference routes agree); everything else is 1.0's; the 1.0
codecs never write them."""

from __future__ import annotations

from typing import Any

import pytest

from parley import model as m
from parley.protocol.errors import InvalidParamsError
from parley.protocol.operations import Operation
from parley.wire.protobuf import from_json, to_json
from parley.wire.v1_0 import protobuf_codec as grpc10
from parley.wire.v1_0.protojson_codec import CODEC as JSON10
from parley.wire.v1_1 import protobuf_codec as grpc11
from parley.wire.v1_1._pb import a2a_pb2 as pb11
from parley.wire.v1_1.protojson_codec import CODEC as JSON11

STATUS = m.TaskStatus(state=m.TaskState.WORKING)
ARTIFACT = m.Artifact(artifact_id="a", parts=(m.TextPart(text="x"),))
MESSAGE = m.Message(message_id="m", role=m.Role.USER, parts=(m.TextPart(text="hi"),), task_id="t")
TASK = m.Task(id="t", context_id="c", status=STATUS, artifacts=(ARTIFACT,), generation=7)
STATUS_EVENT = m.TaskStatusUpdateEvent(task_id="t", context_id="c", status=STATUS, generation=8)
ARTIFACT_EVENT = m.TaskArtifactUpdateEvent(
    task_id="t", context_id="c", artifact=ARTIFACT, append=True, generation=9
)
SEND = m.SendMessageRequest(
    message=MESSAGE, configuration=m.SendMessageConfiguration(if_generation_match=3)
)
GET = m.GetTaskRequest(id="t", current_generation=5)
EVENTS: list[m.Task | m.TaskStatusUpdateEvent | m.TaskArtifactUpdateEvent] = [
    TASK,
    STATUS_EVENT,
    ARTIFACT_EVENT,
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_events_carry_their_generation(
    event: m.Task | m.TaskStatusUpdateEvent | m.TaskArtifactUpdateEvent,
) -> None:
    encoded = JSON11.encode_event(event)
    ((member, inner),) = encoded.items()
    assert inner["generation"] == str(event.generation)  # ProtoJSON int64
    assert JSON11.decode_event(encoded) == event
    assert "generation" not in JSON10.encode_event(event)[member]
    message = grpc11.CODEC.encode_event(event)
    assert grpc11.CODEC.decode_event(message) == event
    assert from_json(to_json(message), pb11.StreamResponse) == message  # both routes
    assert grpc10.CODEC.decode_event(grpc10.CODEC.encode_event(event)).generation == 0  # type: ignore[union-attr]


def test_a_generation_is_read_as_a_number_or_a_string() -> None:
    encoded = JSON11.encode(TASK)
    assert JSON11.decode(m.Task, {**encoded, "generation": 7}) == TASK
    assert JSON11.decode(m.Task, {**encoded, "generation": "7"}) == TASK
    assert JSON11.decode(m.Task, {k: v for k, v in encoded.items() if k != "generation"}) == (
        m.Task(id="t", context_id="c", status=STATUS, artifacts=(ARTIFACT,))
    )
    for bad in ("seven", -1, 1.5, 2**63):
        with pytest.raises(InvalidParamsError):
            JSON11.decode(m.Task, {**encoded, "generation": bad})


@pytest.mark.parametrize(
    ("operation", "request_", "member"),
    [
        (Operation.SEND_MESSAGE, SEND, ("configuration", "ifGenerationMatch")),
        (Operation.SEND_STREAMING_MESSAGE, SEND, ("configuration", "ifGenerationMatch")),
        (Operation.GET_TASK, GET, ("currentGeneration",)),
    ],
)
def test_requests_carry_their_preconditions(
    operation: Operation, request_: m.Model, member: tuple[str, ...]
) -> None:
    encoded: Any = JSON11.encode_request(operation, request_)
    value = encoded
    for key in member:
        value = value[key]
    assert value in ("3", "5")
    assert JSON11.decode_request(operation, encoded) == request_
    message = grpc11.CODEC.encode_request(operation, request_)
    assert grpc11.CODEC.decode_request(operation, message) == request_
    plain = JSON10.decode_request(operation, encoded)  # 1.0 does not read them
    assert plain != request_


@pytest.mark.parametrize("operation", [Operation.GET_TASK, Operation.CANCEL_TASK])
def test_task_results_carry_the_generation(operation: Operation) -> None:
    assert JSON11.encode_response(operation, TASK)["generation"] == "7"
    assert JSON11.decode_response(operation, JSON11.encode_response(operation, TASK)) == TASK
    message = grpc11.CODEC.encode_response(operation, TASK)
    assert message.generation == 7
    assert grpc11.CODEC.decode_response(operation, message) == TASK


def test_send_and_list_results_carry_the_generation() -> None:
    sent = JSON11.encode_response(Operation.SEND_MESSAGE, TASK)
    assert sent["task"]["generation"] == "7"
    assert JSON11.decode_response(Operation.SEND_MESSAGE, sent) == TASK
    page = m.ListTasksResponse(tasks=(TASK,), next_page_token="", page_size=1, total_size=1)
    listed = JSON11.encode_response(Operation.LIST_TASKS, page)
    assert listed["tasks"][0]["generation"] == "7"
    assert JSON11.decode_response(Operation.LIST_TASKS, listed) == page
    message = grpc11.CODEC.encode_response(Operation.SEND_MESSAGE, TASK)
    assert grpc11.CODEC.decode_response(Operation.SEND_MESSAGE, message) == TASK
