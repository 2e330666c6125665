"""The A2A 1.1 draft JSON codec's `JsonForms` — 1.0's (`parley.wire.v1_0.protojson_codec`), plus the
draft's additive fields: `Task.generation`, `generation` on status and artifact updates,
`SendMessageConfiguration.ifGenerationMatch` and `GetTaskRequest.currentGeneration`.

The draft adds fields only, so its forms are 1.0's, each wrapped where it adds or reads
those five members. int64 values are written as ProtoJSON writes them
(decimal strings) and read as numbers or decimal strings. A generation of 0 (not
numbered) is left out, as proto3 leaves out a default.
"""

from __future__ import annotations

import re
from typing import Any

from msgspec.structs import replace

from parley.model import (
    GetTaskRequest,
    ListTasksResponse,
    Model,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.json_bytes import JSON
from parley.wire.json_codec import Decoder, Encoder, JsonCodec, JsonForms
from parley.wire.reader import fail
from parley.wire.v1_0.protojson_codec import FORMS as BASE

_INT64 = re.compile(r"-?\d{1,19}")
_INT64_MAX = 2**63 - 1
_SENDS = (Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE)
_TASK_RESULTS = (Operation.GET_TASK, Operation.CANCEL_TASK)
_EVENT_MEMBERS = {
    TaskStatusUpdateEvent: "statusUpdate",
    TaskArtifactUpdateEvent: "artifactUpdate",
    Task: "task",
}


def read_int64(d: Any, camel: str, path: str) -> int | None:
    """An int64 member: a JSON integer or a decimal string (ProtoJSON), None if absent."""
    if type(d) is not dict:
        return None
    value = d.get(camel)
    if value is None:
        return None
    if (type(value) is str and _INT64.fullmatch(value)) or (
        type(value) is float and value.is_integer()
    ):
        value = int(value)
    if type(value) is not int or not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        fail(path, camel, "expected an int64 integer")
    return value


def _generation(d: Any, path: str) -> int:
    value = read_int64(d, "generation", path)
    if value is not None and value < 0:
        fail(path, "generation", "must be >= 0")
    return value or 0


def _put(out: Any, generation: int) -> Any:
    if generation and type(out) is dict:
        out["generation"] = str(generation)
    return out


def _with_generation(value: Any, generation: int) -> Any:
    return value if generation == value.generation else replace(value, generation=generation)


def _numbered(decode: Decoder) -> Decoder:
    """A task or update decoder that also reads `generation`."""
    return lambda payload: _with_generation(decode(payload), _generation(payload, ""))


def _numbering(encode: Encoder) -> Encoder:
    """A task or update encoder that also writes `generation`."""
    return lambda value: _put(encode(value), value.generation)


# ------------------------------------------------------------ requests


def _decode_send(payload: JSON) -> SendMessageRequest:
    request: SendMessageRequest = BASE.requests[Operation.SEND_MESSAGE][2](payload)
    raw = payload.get("configuration") if type(payload) is dict else None
    match = read_int64(raw, "ifGenerationMatch", "configuration")
    if match is None:
        return request
    config = request.configuration or SendMessageConfiguration()
    return replace(request, configuration=replace(config, if_generation_match=match))


def _encode_send(request: SendMessageRequest) -> JSON:
    out = BASE.requests[Operation.SEND_MESSAGE][1](request)
    config = request.configuration
    if config is not None and config.if_generation_match is not None:
        out.setdefault("configuration", {})["ifGenerationMatch"] = str(config.if_generation_match)
    return out


def _decode_get_task(payload: JSON) -> GetTaskRequest:
    request: GetTaskRequest = BASE.requests[Operation.GET_TASK][2](payload)
    current = read_int64(payload, "currentGeneration", "")
    return request if current is None else replace(request, current_generation=current)


def _encode_get_task(request: GetTaskRequest) -> JSON:
    out = BASE.requests[Operation.GET_TASK][1](request)
    if request.current_generation is not None:
        out["currentGeneration"] = str(request.current_generation)
    return out


_REQUESTS: dict[Operation, tuple[type[Model], Encoder, Decoder]] = {
    **BASE.requests,
    Operation.SEND_MESSAGE: (SendMessageRequest, _encode_send, _decode_send),
    Operation.SEND_STREAMING_MESSAGE: (SendMessageRequest, _encode_send, _decode_send),
    Operation.GET_TASK: (GetTaskRequest, _encode_get_task, _decode_get_task),
}

# ------------------------------------------------------------ responses


def _encode_send_result(result: Any) -> JSON:
    out = BASE.responses[Operation.SEND_MESSAGE][1](result)
    if type(result) is Task:
        _put(out.get("task", out), result.generation)
    return out


def _decode_send_result(payload: JSON) -> Any:
    result = BASE.responses[Operation.SEND_MESSAGE][2](payload)
    if type(result) is not Task:
        return result
    return _with_generation(result, _generation(payload.get("task", payload), ""))


def _encode_list_tasks_result(result: ListTasksResponse) -> JSON:
    out = BASE.responses[Operation.LIST_TASKS][1](result)
    for task, encoded in zip(result.tasks, out.get("tasks", ()), strict=False):
        _put(encoded, task.generation)
    return out


def _decode_list_tasks_result(payload: JSON) -> ListTasksResponse:
    result: ListTasksResponse = BASE.responses[Operation.LIST_TASKS][2](payload)
    encoded = payload.get("tasks") or []
    tasks = tuple(
        _with_generation(task, _generation(raw, f"tasks[{i}]"))
        for i, (task, raw) in enumerate(zip(result.tasks, encoded, strict=False))
    )
    return replace(result, tasks=tasks)


def _task_result(operation: Operation) -> tuple[tuple[type[Any], ...], Encoder, Decoder]:
    kinds, encode, decode = BASE.responses[operation]
    return kinds, _numbering(encode), _numbered(decode)


_RESPONSES = {
    **BASE.responses,
    Operation.SEND_MESSAGE: (
        BASE.responses[Operation.SEND_MESSAGE][0],
        _encode_send_result,
        _decode_send_result,
    ),
    Operation.GET_TASK: _task_result(Operation.GET_TASK),
    Operation.CANCEL_TASK: _task_result(Operation.CANCEL_TASK),
    Operation.LIST_TASKS: (
        BASE.responses[Operation.LIST_TASKS][0],
        _encode_list_tasks_result,
        _decode_list_tasks_result,
    ),
}

# ------------------------------------------------------------ events


def _encode_event(event: StreamEvent) -> JSON:
    out = BASE.encode_event(event)
    member = _EVENT_MEMBERS.get(type(event))
    if member is not None:
        _put(out[member], event.generation)  # type: ignore[union-attr]
    return out


def _decode_event(payload: JSON) -> StreamEvent:
    event = BASE.decode_event(payload)
    member = _EVENT_MEMBERS.get(type(event))
    if member is None or type(payload) is not dict:
        return event
    numbered: StreamEvent = _with_generation(event, _generation(payload.get(member), member))
    return numbered


FORMS = JsonForms(
    version=Version.V1_1,
    label="A2A 1.1",
    requests=_REQUESTS,
    responses=_RESPONSES,
    standalone={
        **BASE.standalone,
        **{
            kind: (_numbering(BASE.standalone[kind][0]), _numbered(BASE.standalone[kind][1]))
            for kind in _EVENT_MEMBERS
        },
    },
    encode_event=_encode_event,
    decode_event=_decode_event,
    encode_card=BASE.encode_card,
    decode_card=BASE.decode_card,
    mismatch=BASE.mismatch,
)
"""The 1.1 draft forms: 1.0's, with the generation fields read and written."""

CODEC = JsonCodec(FORMS)
"""The 1.1 draft JSON codec."""
