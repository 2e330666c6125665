"""The a2a-sdk adapter's conversions at their edges: what an executor enqueues that is not
an event, updates of an unusual shape taking the reference (ProtoJSON) route, its
validation naming the invalid member, and SDK errors mapped to Parley's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from a2a.types import a2a_pb2 as sdk
from a2a.utils import errors as sdk_errors
from google.protobuf.timestamp_pb2 import Timestamp

from parley.adapters.a2a_sdk import convert
from parley.model import TaskState, TaskStatusUpdateEvent
from parley.protocol import errors


def test_an_enqueued_value_that_is_no_event_is_an_invalid_agent_response() -> None:
    with pytest.raises(errors.InvalidAgentResponseError, match="not AgentCard"):
        convert.event(sdk.AgentCard(), "t1", "c1")


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (sdk.TaskStatusUpdateEvent(), "TaskStatusUpdateEvent: status: is required"),
        (
            sdk.TaskStatusUpdateEvent(status=sdk.TaskStatus()),
            "TaskStatusUpdateEvent: status.state: is required",
        ),
        (sdk.TaskArtifactUpdateEvent(), "TaskArtifactUpdateEvent: artifact: is required"),
        (
            sdk.TaskArtifactUpdateEvent(artifact=sdk.Artifact(artifact_id="a")),
            "artifact.parts: at least one part is required",
        ),
        (
            sdk.TaskArtifactUpdateEvent(artifact=sdk.Artifact(parts=[sdk.Part(text="x")])),
            "artifact.artifactId: is required",
        ),
        (sdk.Task(), "invalid Task: id: is required"),
    ],
)
def test_an_invalid_event_is_named_by_the_reference_route(value: object, named: str) -> None:
    with pytest.raises(errors.InvalidAgentResponseError, match=named):
        convert.event(value, "t1", "c1")


def test_an_unusual_timestamp_is_read_by_the_reference_route_with_the_runs_ids() -> None:
    stamp = Timestamp(seconds=10, nanos=1500)  # not whole microseconds: unusual
    value = sdk.TaskStatusUpdateEvent(
        status=sdk.TaskStatus(state=sdk.TASK_STATE_WORKING, timestamp=stamp)
    )
    read = convert.event(value, "t1", "c1")
    assert isinstance(read, TaskStatusUpdateEvent)
    assert (read.task_id, read.context_id) == ("t1", "c1")
    assert read.status.state is TaskState.WORKING
    assert read.status.timestamp == datetime(1970, 1, 1, 0, 0, 10, 1, tzinfo=UTC)


def test_a_status_update_with_its_own_ids_message_and_timestamp_is_read_directly() -> None:
    message = sdk.Message(message_id="m", role=sdk.ROLE_AGENT, parts=[sdk.Part(text="hi")])
    value = sdk.TaskStatusUpdateEvent(
        task_id="own",
        status=sdk.TaskStatus(
            state=sdk.TASK_STATE_WORKING, timestamp=Timestamp(seconds=10), message=message
        ),
    )
    read = convert.event(value, "t1", "c1")
    assert isinstance(read, TaskStatusUpdateEvent)
    assert (read.task_id, read.context_id) == ("own", "c1")
    assert read.status.message is not None
    assert read.status.message.message_id == "m"
    assert read.status.timestamp == datetime(1970, 1, 1, 0, 0, 10, tzinfo=UTC)


def test_an_sdk_protocol_error_becomes_parleys_of_the_same_name() -> None:
    mapped = convert.error(sdk_errors.TaskNotFoundError("no such task"))
    assert type(mapped) is errors.TaskNotFoundError
    assert isinstance(mapped, errors.TaskNotFoundError)
    assert mapped.message == "no such task"


def test_an_sdk_error_parley_has_no_class_for_is_an_internal_error() -> None:
    class VendorError(sdk_errors.A2AError):  # type: ignore[misc]
        pass

    mapped = convert.error(VendorError("odd"))
    assert type(mapped) is errors.InternalError
    assert isinstance(mapped, errors.InternalError)
    assert mapped.message == "odd"


def test_any_other_exception_is_returned_as_it_is() -> None:
    problem = RuntimeError("boom")
    assert convert.error(problem) is problem
