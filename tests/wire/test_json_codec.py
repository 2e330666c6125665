"""The one JSON codec class (`parley.wire.json_codec.JsonCodec`) as every version's and
format's instance uses it: operations a version lacks, misuse of the encoders, types with
no standalone form and a part of another kind than asked for."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from parley import model as m
from parley.protocol.errors import InternalError, InvalidParamsError, MethodNotFoundError
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire import codec_table
from parley.wire.json_codec import JsonCodec
from parley.wire.v0_3.protobuf_codec import PROTOJSON

CODECS: dict[str, JsonCodec] = {
    "1.0": codec_table.JSONRPC[Version.V1_0],  # type: ignore[dict-item]
    "1.1": codec_table.JSONRPC[Version.V1_1],  # type: ignore[dict-item]
    "0.3 JSON-RPC": codec_table.JSONRPC[Version.V0_3],  # type: ignore[dict-item]
    "0.3 REST": codec_table.REST[Version.V0_3],  # type: ignore[dict-item]
    "0.3 gRPC ProtoJSON": PROTOJSON,
}
V0_3 = ["0.3 JSON-RPC", "0.3 REST", "0.3 gRPC ProtoJSON"]
TASK = m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING))


class Stray(m.Model, frozen=True):
    """A model type no wire form knows."""


@pytest.mark.parametrize("name", CODECS)
def test_every_instance_is_the_one_class(name: str) -> None:
    assert type(CODECS[name]) is JsonCodec


@pytest.mark.parametrize("name", V0_3)
def test_an_operation_0_3_lacks_is_method_not_found_naming_it(name: str) -> None:
    codec, op = CODECS[name], Operation.LIST_TASKS
    page = m.ListTasksResponse(tasks=(), next_page_token="", page_size=0, total_size=0)
    calls: list[Callable[[], object]] = [
        lambda: codec.decode_request(op, {}),
        lambda: codec.encode_request(op, m.ListTasksRequest()),
        lambda: codec.encode_response(op, page),
        lambda: codec.decode_response(op, {}),
    ]
    for call in calls:
        with pytest.raises(MethodNotFoundError) as raised:
            call()
        assert raised.value.message == "ListTasks does not exist in A2A 0.3"
        assert raised.value.metadata == {"method": "ListTasks"}


@pytest.mark.parametrize("name", CODECS)
def test_a_streaming_operation_has_no_unary_answer(name: str) -> None:
    codec = CODECS[name]
    with pytest.raises(InternalError, match="SendStreamingMessage answers with events"):
        codec.encode_response(Operation.SEND_STREAMING_MESSAGE, TASK)
    event = codec.encode_event(TASK)
    assert codec.decode_response(Operation.SUBSCRIBE_TO_TASK, event) == TASK


@pytest.mark.parametrize("name", CODECS)
def test_encoders_refuse_the_wrong_type(name: str) -> None:
    codec = CODECS[name]
    with pytest.raises(InternalError, match="GetTask takes a GetTaskRequest, not a Task"):
        codec.encode_request(Operation.GET_TASK, TASK)
    message = m.Message(message_id="m", role=m.Role.AGENT, parts=(m.TextPart(text="x"),))
    with pytest.raises(InternalError, match="GetTask cannot answer a Message"):
        codec.encode_response(Operation.GET_TASK, message)


@pytest.mark.parametrize("name", CODECS)
def test_a_type_with_no_standalone_form(name: str) -> None:
    codec = CODECS[name]
    with pytest.raises(InternalError, match="has no standalone form for Stray"):
        codec.encode(Stray())
    with pytest.raises(InternalError, match="has no standalone form for Stray"):
        codec.decode(Stray, {})


@pytest.mark.parametrize(
    ("name", "field", "description"),
    [
        ("1.0", "", "expected a text part"),
        ("1.1", "", "expected a text part"),
        ("0.3 JSON-RPC", "kind", "expected 'text'"),
        ("0.3 REST", "text", "is required"),
        ("0.3 gRPC ProtoJSON", "text", "is required"),
    ],
)
def test_a_part_of_another_kind_names_what_is_missing(
    name: str, field: str, description: str
) -> None:
    codec = CODECS[name]
    data = codec.encode(m.DataPart(data={"a": 1}))
    with pytest.raises(InvalidParamsError) as raised:
        codec.decode(m.TextPart, data)
    violation = raised.value.field_violations[0]
    assert (violation.field, violation.description) == (field, description)
