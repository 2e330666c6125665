"""`JsonCodec`: the A2A 1.1 draft JSON codec — 1.0's (`parley.wire.v1_0.protojson_codec`), plus the
draft's additive fields: `Task.generation`, `generation` on status and artifact updates,
`SendMessageConfiguration.ifGenerationMatch` and `GetTaskRequest.currentGeneration`.

The draft adds fields only, so this codec lets 1.0's encode and decode everything and
then adds or reads those five members. int64 values are written as ProtoJSON writes them
(decimal strings) and read as numbers or decimal strings. A generation of 0 (not
numbered) is left out, as proto3 leaves out a default.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

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
from parley.wire.reader import fail
from parley.wire.v1_0.protojson_codec import JsonCodec as JsonCodecV1_0

M = TypeVar("M", bound=Model)

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


class JsonCodec(JsonCodecV1_0):
    """Model <-> 1.1 draft JSON values: 1.0's forms and the generation fields."""

    version: Version = Version.V1_1

    # ------------------------------------------------------------ requests

    def decode_request(self, operation: Operation, payload: JSON) -> Model:
        request = super().decode_request(operation, payload)
        if operation in _SENDS and type(request) is SendMessageRequest:
            raw = payload.get("configuration") if type(payload) is dict else None
            match = read_int64(raw, "ifGenerationMatch", "configuration")
            if match is not None:
                config = request.configuration or SendMessageConfiguration()
                request = replace(request, configuration=replace(config, if_generation_match=match))
        elif operation is Operation.GET_TASK and type(request) is GetTaskRequest:
            current = read_int64(payload, "currentGeneration", "")
            if current is not None:
                request = replace(request, current_generation=current)
        return request

    def encode_request(self, operation: Operation, request: Model) -> JSON:
        out = super().encode_request(operation, request)
        if type(request) is SendMessageRequest:
            config = request.configuration
            if config is not None and config.if_generation_match is not None:
                out.setdefault("configuration", {})["ifGenerationMatch"] = str(
                    config.if_generation_match
                )
        elif type(request) is GetTaskRequest and request.current_generation is not None:
            out["currentGeneration"] = str(request.current_generation)
        return out

    # ------------------------------------------------------------ responses

    def encode_response(self, operation: Operation, result: Any) -> JSON:
        out = super().encode_response(operation, result)
        if type(result) is Task:
            _put(out.get("task", out) if operation in _SENDS else out, result.generation)
        elif type(result) is ListTasksResponse:
            for task, encoded in zip(result.tasks, out.get("tasks", ()), strict=False):
                _put(encoded, task.generation)
        return out

    def decode_response(self, operation: Operation, payload: JSON) -> Any:
        result = super().decode_response(operation, payload)
        if type(result) is Task:
            inner = payload.get("task", payload) if operation in _SENDS else payload
            return _with_generation(result, _generation(inner, ""))
        if type(result) is ListTasksResponse:
            encoded = payload.get("tasks") or []
            tasks = tuple(
                _with_generation(task, _generation(raw, f"tasks[{i}]"))
                for i, (task, raw) in enumerate(zip(result.tasks, encoded, strict=False))
            )
            return replace(result, tasks=tasks)
        if isinstance(result, (TaskStatusUpdateEvent, TaskArtifactUpdateEvent)):
            return self._read_event(result, payload)
        return result

    # ------------------------------------------------------------ events

    def encode_event(self, event: StreamEvent) -> JSON:
        out = super().encode_event(event)
        member = _EVENT_MEMBERS.get(type(event))
        if member is not None:
            _put(out[member], event.generation)  # type: ignore[union-attr]
        return out

    def decode_event(self, payload: JSON) -> StreamEvent:
        return self._read_event(super().decode_event(payload), payload)

    @staticmethod
    def _read_event(event: StreamEvent, payload: JSON) -> StreamEvent:
        member = _EVENT_MEMBERS.get(type(event))
        if member is None or type(payload) is not dict:
            return event
        numbered: StreamEvent = _with_generation(event, _generation(payload.get(member), member))
        return numbered

    # ------------------------------------------------------------ standalone

    def encode(self, value: Model) -> JSON:
        out = super().encode(value)
        if type(value) in _EVENT_MEMBERS:
            _put(out, value.generation)  # type: ignore[attr-defined]
        return out

    def decode(self, kind: type[M], payload: JSON) -> M:
        value = super().decode(kind, payload)
        if kind in _EVENT_MEMBERS:
            numbered: M = _with_generation(value, _generation(payload, ""))
            return numbered
        return value


def _with_generation(value: Any, generation: int) -> Any:
    return value if generation == value.generation else replace(value, generation=generation)


CODEC = JsonCodec()
"""The 1.1 draft JSON codec."""
