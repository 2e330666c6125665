"""The A2A 0.3 REST codec (ProtoJSON of the 0.3 proto, `a2a.v1`): round trips of every
model type it can express, strict agreement with the official 0.3 protobuf messages
(a2a-sdk's `a2a.compat.v0_3.a2a_v0_3_pb2`, through json_format), the official SDK's own
printing read back (camelCase and snake_case), hand-written examples from REFERENCE §2.3,
§3.2, §3.5, §4 and §8.4, and bad input raising only Parley's typed errors.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from parley import model as m
from parley.protocol.errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
)
from parley.protocol.lifecycle import ends_stream
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation
from parley.wire import codec_table
from parley.wire.codec_seam import Codec
from parley.wire.json_bytes import JSON
from parley.wire.json_codec import JsonCodec
from parley.wire.v0_3 import CODEC as JSONRPC
from parley.wire.v0_3.rest import CODEC
from tests.strategies import (
    Flavor,
    all_models,
    cards,
    ids,
    json_values,
    push_configs,
    requests,
)
from tests.wire.json_equality import same

V03 = Flavor.V0_3
TYPED: Codec[JSON] = CODEC  # JsonCodec satisfies the Codec protocol (checked by mypy)

# ---------------------------------------------------------------- what 0.3 REST can express
# The v0.3.0 proto has no part metadata, file name or referenceTaskIds, no metadata on
# any request but SendMessage, and `historyLength` 0 means unlimited there (None).


def _part(part: m.Part) -> m.Part:
    if isinstance(part, m.RawPart | m.UrlPart):
        return replace(part, filename="", metadata=None)
    return replace(part, metadata=None)


def _message(message: m.Message) -> m.Message:
    return replace(message, parts=tuple(map(_part, message.parts)), reference_task_ids=())


def _status(status: m.TaskStatus) -> m.TaskStatus:
    return replace(status, message=None if status.message is None else _message(status.message))


def _artifact(artifact: m.Artifact) -> m.Artifact:
    return replace(artifact, parts=tuple(map(_part, artifact.parts)))


def _task(task: m.Task) -> m.Task:
    return replace(
        task,
        status=_status(task.status),
        artifacts=tuple(map(_artifact, task.artifacts)),
        history=tuple(map(_message, task.history)),
    )


def _configuration(config: m.SendMessageConfiguration) -> m.SendMessageConfiguration:
    return replace(config, history_length=config.history_length or None)


def _send(request: m.SendMessageRequest) -> m.SendMessageRequest:
    config = request.configuration
    return replace(
        request,
        message=_message(request.message),
        configuration=None if config is None else _configuration(config),
    )


def _no_metadata(request: Any) -> Any:
    return replace(request, metadata=None)


EXPRESSIBLE: dict[type[m.Model], Callable[[Any], Any]] = {
    m.TextPart: _part,
    m.RawPart: _part,
    m.UrlPart: _part,
    m.DataPart: _part,
    m.Message: _message,
    m.TaskStatus: _status,
    m.Artifact: _artifact,
    m.Task: _task,
    m.TaskStatusUpdateEvent: lambda e: replace(e, status=_status(e.status)),
    m.TaskArtifactUpdateEvent: lambda e: replace(e, artifact=_artifact(e.artifact)),
    m.SendMessageConfiguration: _configuration,
    m.SendMessageRequest: _send,
    m.GetTaskRequest: lambda r: replace(r, metadata=None, history_length=r.history_length or None),
    m.CancelTaskRequest: _no_metadata,
    m.SubscribeToTaskRequest: _no_metadata,
    m.GetTaskPushNotificationConfigRequest: _no_metadata,
    m.DeleteTaskPushNotificationConfigRequest: _no_metadata,
}


def _models() -> dict[type[m.Model], st.SearchStrategy[Any]]:
    out = {
        kind: strategy.map(EXPRESSIBLE[kind]) if kind in EXPRESSIBLE else strategy
        for kind, strategy in all_models(V03).items()
    }
    # The 0.3 proto pages push-config lists (the JSON-RPC form cannot).
    out[m.ListTaskPushNotificationConfigsRequest] = st.builds(
        m.ListTaskPushNotificationConfigsRequest,
        task_id=ids,
        page_size=st.integers(0, 100),
        page_token=st.just("") | ids,
    )
    out[m.ListTaskPushNotificationConfigsResponse] = st.builds(
        m.ListTaskPushNotificationConfigsResponse,
        configs=st.lists(push_configs(V03), max_size=2).map(tuple),
        next_page_token=st.just("") | ids,
    )
    return out


MODELS = _models()
EVENTS = MODELS[m.Task] | MODELS[m.Message] | MODELS[m.TaskStatusUpdateEvent]
EVENTS |= MODELS[m.TaskArtifactUpdateEvent]

# ---------------------------------------------------------------- the official messages

PART_KINDS = (m.TextPart, m.RawPart, m.UrlPart, m.DataPart)
CARD_KINDS = (
    m.AgentCard,
    m.AgentSkill,
    m.AgentCapabilities,
    m.AgentInterface,
    m.AgentExtension,
    m.SecurityRequirement,
)
OFFICIAL_NAMES: dict[type[m.Model], str] = {
    m.SubscribeToTaskRequest: "TaskSubscriptionRequest",
    m.ListTaskPushNotificationConfigsRequest: "ListTaskPushNotificationConfigRequest",
    m.ListTaskPushNotificationConfigsResponse: "ListTaskPushNotificationConfigResponse",
    m.GetExtendedAgentCardRequest: "GetAgentCardRequest",
}


def official_name(kind: type[m.Model]) -> str:
    if kind in PART_KINDS:
        return "Part"
    return OFFICIAL_NAMES.get(kind, kind.__name__)


def transcoded(name: str, payload: JSON) -> JSON:
    """A request payload as gRPC transcoding sees it: the path parameters (`id`,
    `taskId`) put back into the message's resource names."""
    d = dict(payload)
    if name in ("GetTaskRequest", "CancelTaskRequest", "TaskSubscriptionRequest"):
        d["name"] = f"tasks/{d.pop('id')}"
    elif name in (
        "GetTaskPushNotificationConfigRequest",
        "DeleteTaskPushNotificationConfigRequest",
    ):
        d["name"] = f"tasks/{d.pop('taskId')}/pushNotificationConfigs/{d.pop('id')}"
    elif name == "ListTaskPushNotificationConfigRequest":
        d["parent"] = f"tasks/{d.pop('taskId')}"
    elif name == "CreateTaskPushNotificationConfigRequest":
        assert f"tasks/{d.pop('taskId')}" == d["parent"]
    return d


def is_default(value: JSON) -> bool:
    return value in ("", [], {}) or value is False or (type(value) is int and value == 0)


def normalized(descriptor: Any, value: JSON) -> JSON:
    """`value` (one message's JSON) without the default values ProtoJSON drops, with
    timestamps parsed; every key must be a field of the message."""
    fields = {f.json_name: f for f in descriptor.fields}
    assert set(value) <= set(fields), (descriptor.full_name, set(value) - set(fields))
    return {
        key: normalized_field(fields[key], item)
        for key, item in value.items()
        if fields[key].has_presence or not is_default(item)
    }


def normalized_field(field: Any, value: JSON) -> JSON:
    kind = field.message_type
    if kind is None or value is None:
        return value
    if kind.full_name == "google.protobuf.Timestamp":
        return datetime.fromisoformat(value)
    if kind.full_name.startswith("google.protobuf."):
        return value
    if kind.GetOptions().map_entry:
        inner = kind.fields_by_name["value"]
        return {key: normalized_field(inner, item) for key, item in value.items()}
    if field.is_repeated:
        return [normalized(kind, item) for item in value]
    return normalized(kind, value)


def official(name: str, ours: JSON) -> Any:
    """Our JSON parsed strictly (unknown fields refused) into the official message, which
    must print back the same modulo dropped defaults. Returns the message."""
    message = getattr(pb, name)()
    json_format.Parse(orjson.dumps(ours).decode(), message, ignore_unknown_fields=False)
    theirs = json_format.MessageToDict(message)
    descriptor = message.DESCRIPTOR
    expected = normalized(descriptor, ours)
    assert same(normalized(descriptor, theirs), expected), (theirs, expected)
    return message


def printed(message: Any) -> tuple[JSON, JSON]:
    """How the official SDK prints a message: camelCase (its servers, its 0.3 clients) and
    snake_case (its 1.x compat clients, `preserving_proto_field_name`)."""
    return (
        json_format.MessageToDict(message),
        json_format.MessageToDict(message, preserving_proto_field_name=True),
    )


# ---------------------------------------------------------------- round trips


def test_codec_identity_and_registration() -> None:
    assert isinstance(CODEC, JsonCodec)
    assert CODEC.version is Version.V0_3
    assert codec_table.REST[Version.V0_3] is CODEC
    assert codec_table.JSONRPC[Version.V0_3] is JSONRPC


@pytest.mark.parametrize("kind", list(MODELS), ids=lambda kind: kind.__name__)
@settings(max_examples=60)
@given(data=st.data())
def test_every_model_round_trips_and_matches_the_official_proto(
    kind: type[m.Model], data: st.DataObject
) -> None:
    value = data.draw(MODELS[kind])
    encoded = CODEC.encode(value)
    assert CODEC.decode(kind, encoded) == value
    assert CODEC.decode(kind, orjson.loads(orjson.dumps(encoded))) == value
    if kind in CARD_KINDS:  # the card keeps its 0.3 JSON-RPC form (REFERENCE §3.2)
        assert encoded == JSONRPC.encode(value)
        return
    name = official_name(kind)
    message = official(name, transcoded(name, encoded))
    for form in printed(message):  # what the official SDK sends reads back the same
        assert CODEC.decode(kind, form) == value


def _requests() -> dict[Operation, st.SearchStrategy[Any]]:
    out: dict[Operation, st.SearchStrategy[Any]] = {
        operation: MODELS[OPERATIONS[operation].request]
        for operation in Operation
        if operation is not Operation.LIST_TASKS
    }
    out[Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG] = push_configs(V03)
    return out


REQUESTS = _requests()
REQUEST_NAMES = {
    Operation.SEND_STREAMING_MESSAGE: "SendMessageRequest",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "CreateTaskPushNotificationConfigRequest",
}


@pytest.mark.parametrize("operation", list(REQUESTS), ids=lambda op: op.value)
@settings(max_examples=40)
@given(data=st.data())
def test_every_request_round_trips_and_matches_the_official_proto(
    operation: Operation, data: st.DataObject
) -> None:
    request = data.draw(REQUESTS[operation])
    payload = CODEC.encode_request(operation, request)
    assert CODEC.decode_request(operation, orjson.loads(orjson.dumps(payload))) == request
    name = REQUEST_NAMES.get(operation) or official_name(type(request))
    message = official(name, transcoded(name, payload))
    for form in printed(message):  # resource names instead of path parameters
        assert CODEC.decode_request(operation, form) == request


def _results() -> dict[Operation, tuple[st.SearchStrategy[Any], str]]:
    return {
        Operation.SEND_MESSAGE: (MODELS[m.Task] | MODELS[m.Message], "SendMessageResponse"),
        Operation.GET_TASK: (MODELS[m.Task], "Task"),
        Operation.CANCEL_TASK: (MODELS[m.Task], "Task"),
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
            push_configs(V03),
            "TaskPushNotificationConfig",
        ),
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
            push_configs(V03),
            "TaskPushNotificationConfig",
        ),
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
            MODELS[m.ListTaskPushNotificationConfigsResponse],
            "ListTaskPushNotificationConfigResponse",
        ),
    }


RESULTS = _results()


@pytest.mark.parametrize("operation", list(RESULTS), ids=lambda op: op.value)
@settings(max_examples=40)
@given(data=st.data())
def test_every_response_round_trips_and_matches_the_official_proto(
    operation: Operation, data: st.DataObject
) -> None:
    strategy, name = RESULTS[operation]
    result = data.draw(strategy)
    encoded = CODEC.encode_response(operation, result)
    assert CODEC.decode_response(operation, orjson.loads(orjson.dumps(encoded))) == result
    for form in printed(official(name, encoded)):
        assert CODEC.decode_response(operation, form) == result


@settings(max_examples=100)
@given(event=EVENTS)
def test_every_stream_event_round_trips_and_matches_the_official_proto(
    event: m.StreamEvent,
) -> None:
    encoded = CODEC.encode_event(event)
    assert CODEC.decode_event(orjson.loads(orjson.dumps(encoded))) == event
    for form in printed(official("StreamResponse", encoded)):
        assert CODEC.decode_event(form) == event
    if isinstance(event, m.TaskStatusUpdateEvent):
        assert encoded["statusUpdate"]["final"] is ends_stream(event.status.state)
    for operation in (Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK):
        assert CODEC.decode_response(operation, encoded) == event


@settings(max_examples=30)
@given(card=cards(V03))
def test_the_card_is_the_json_rpc_card(card: m.AgentCard) -> None:
    encoded = CODEC.encode_card(card)
    assert encoded == JSONRPC.encode_card(card)
    assert CODEC.decode_card(encoded) == JSONRPC.decode_card(encoded)
    card_op = Operation.GET_EXTENDED_AGENT_CARD
    assert CODEC.encode_response(card_op, card) == encoded
    assert CODEC.decode_response(card_op, encoded) == JSONRPC.decode_card(encoded)


# ---------------------------------------------------------------- hand-written examples

NOW = datetime(2025, 10, 28, 10, 30, tzinfo=UTC)
HELLO = m.Message(message_id="m-1", role=m.Role.USER, parts=(m.TextPart(text="hello"),))
HELLO_WIRE = {"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": "hello"}]}
SEND = Operation.SEND_MESSAGE
CREATE = Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG
GET_PUSH = Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG
DELETE_PUSH = Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG
LIST_PUSH = Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS


def status_task(state: m.TaskState) -> m.Task:
    return m.Task(id="t-1", context_id="c-1", status=m.TaskStatus(state=state, timestamp=NOW))


def field_of(error: A2AError) -> str:
    assert error.field_violations, error
    return error.field_violations[0].field


def decoding(operation: Operation, payload: JSON) -> Callable[[], object]:
    return lambda: CODEC.decode_request(operation, payload)


def raises_on(field: str, call: Callable[[], object]) -> InvalidParamsError:
    with pytest.raises(InvalidParamsError) as raised:
        call()
    assert field_of(raised.value) == field, raised.value
    return raised.value


def test_send_message_body_and_response_of_the_reference() -> None:
    """REFERENCE §3.2: `POST /v1/message:send`, answered `{"task": …}` or `{"message": …}`."""
    body = {
        "message": {**HELLO_WIRE, "contextId": "c-1", "extensions": ["https://ext"]},
        "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 5},
        "metadata": {"k": "v"},
    }
    request = CODEC.decode_request(SEND, body)
    assert request == m.SendMessageRequest(
        message=replace(HELLO, context_id="c-1", extensions=("https://ext",)),
        configuration=m.SendMessageConfiguration(
            accepted_output_modes=("text/plain",), history_length=5, return_immediately=True
        ),
        metadata={"k": "v"},
    )
    task = replace(
        status_task(m.TaskState.COMPLETED),
        artifacts=(m.Artifact(artifact_id="a-1", parts=(m.TextPart(text="hi"),)),),
    )
    assert CODEC.encode_response(SEND, task) == {
        "task": {
            "id": "t-1",
            "contextId": "c-1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-10-28T10:30:00.000Z"},
            "artifacts": [{"artifactId": "a-1", "parts": [{"text": "hi"}]}],
        }
    }
    assert CODEC.encode_response(SEND, HELLO) == {"message": HELLO_WIRE}
    assert CODEC.decode_response(SEND, {"msg": HELLO_WIRE}) == HELLO  # the proto name
    raises_on("", lambda: CODEC.decode_response(SEND, {"task": {}, "message": HELLO_WIRE}))
    with pytest.raises(InternalError):
        CODEC.encode_response(SEND, m.GetTaskRequest(id="t"))


def test_snake_case_body_of_the_official_compat_client() -> None:
    """REFERENCE §2.3: a2a-python 1.x's 0.3 REST client sends proto field names, and
    `request` for the message."""
    body = {
        "request": {
            "message_id": "m-1",
            "context_id": "c-1",
            "task_id": "t-1",
            "role": "ROLE_AGENT",
            "content": [
                {"file": {"file_with_uri": "https://h/f.png", "mime_type": "image/png"}},
                {"file": {"file_with_bytes": "aGk", "name": "hi.txt"}},
            ],
        },
        "configuration": {
            "accepted_output_modes": ["image/png"],
            "push_notification": {
                "id": "p-1",
                "url": "https://client/hook",
                "authentication": {"schemes": ["Bearer"]},
            },
            "history_length": 0,
            "blocking": True,
        },
    }
    request = CODEC.decode_request(SEND, body)
    assert request == m.SendMessageRequest(
        message=m.Message(
            message_id="m-1",
            role=m.Role.AGENT,
            context_id="c-1",
            task_id="t-1",
            parts=(
                m.UrlPart(url="https://h/f.png", media_type="image/png"),
                m.RawPart(raw=b"hi", filename="hi.txt"),
            ),
        ),
        configuration=m.SendMessageConfiguration(
            accepted_output_modes=("image/png",),
            push_notification_config=m.TaskPushNotificationConfig(
                url="https://client/hook",
                id="p-1",
                authentication=m.AuthenticationInfo(scheme="Bearer"),
            ),
            history_length=None,  # 0 = unlimited in the 0.3 proto (D11)
            return_immediately=False,
        ),
    )
    # The same body built the way the SDK builds it.
    message = pb.SendMessageRequest(
        request=pb.Message(message_id="m-1", role=pb.ROLE_USER, content=[pb.Part(text="hello")]),
        configuration=pb.SendMessageConfiguration(blocking=True, history_length=3),
    )
    sdk_body = json_format.MessageToDict(message, preserving_proto_field_name=True)
    assert CODEC.decode_request(SEND, sdk_body) == m.SendMessageRequest(
        message=HELLO, configuration=m.SendMessageConfiguration(history_length=3)
    )


def test_canceled_is_spelled_with_two_ls() -> None:
    encoded = CODEC.encode(status_task(m.TaskState.CANCELED))
    assert encoded["status"] == {
        "state": "TASK_STATE_CANCELLED",
        "timestamp": "2025-10-28T10:30:00.000Z",
    }
    for spelling in ("TASK_STATE_CANCELLED", "TASK_STATE_CANCELED", 5):
        status = CODEC.decode(m.TaskStatus, {"state": spelling})
        assert status.state is m.TaskState.CANCELED
    raises_on("state", lambda: CODEC.decode(m.TaskStatus, {"state": "canceled"}))
    raises_on("status.state", lambda: CODEC.decode(m.Task, {"id": "t", "status": {}}))
    assert CODEC.decode(m.TaskStatus, {"state": 0}).state is m.TaskState.UNSPECIFIED
    assert CODEC.decode(m.Message, {**HELLO_WIRE, "role": 1}) == HELLO
    raises_on("role", lambda: CODEC.decode(m.Message, {**HELLO_WIRE, "role": "ROLE_UNSPECIFIED"}))
    raises_on("role", lambda: CODEC.decode(m.Message, {**HELLO_WIRE, "role": "user"}))


def test_status_message_is_update_in_the_proto() -> None:
    status = m.TaskStatus(state=m.TaskState.INPUT_REQUIRED, message=HELLO)
    assert CODEC.encode(status) == {"state": "TASK_STATE_INPUT_REQUIRED", "message": HELLO_WIRE}
    assert CODEC.decode(m.TaskStatus, {"state": 6, "update": HELLO_WIRE}) == status
    raises_on(
        "message.content",
        lambda: CODEC.decode(m.TaskStatus, {"state": 6, "message": {**HELLO_WIRE, "content": []}}),
    )


@pytest.mark.parametrize(
    ("state", "final"),
    [
        (m.TaskState.WORKING, False),
        (m.TaskState.INPUT_REQUIRED, True),
        (m.TaskState.AUTH_REQUIRED, True),
        (m.TaskState.COMPLETED, True),
    ],
)
def test_status_update_final_follows_the_state(state: m.TaskState, final: bool) -> None:
    event = m.TaskStatusUpdateEvent(
        task_id="t-1", context_id="c-1", status=m.TaskStatus(state=state)
    )
    encoded = CODEC.encode_event(event)
    assert encoded == {
        "statusUpdate": {
            "taskId": "t-1",
            "contextId": "c-1",
            "status": {"state": f"TASK_STATE_{state.name}"},
            "final": final,
        }
    }
    encoded["statusUpdate"]["final"] = not final  # ignored on decode
    assert CODEC.decode_event(encoded) == event
    snake = {
        "status_update": {"task_id": "t-1", "context_id": "c-1", "status": {"state": int(state)}}
    }
    assert CODEC.decode_event(snake) == event


def test_stream_response_is_a_oneof() -> None:
    assert CODEC.decode_event({"msg": HELLO_WIRE}) == HELLO
    raises_on("", lambda: CODEC.decode_event({}))
    raises_on("", lambda: CODEC.decode_event({"message": HELLO_WIRE, "task": {"id": "t"}}))
    raises_on("task.status", lambda: CODEC.decode_event({"task": {"id": "t"}}))
    artifact = m.Artifact(artifact_id="a", parts=(m.TextPart(text="x"),))
    chunk = m.TaskArtifactUpdateEvent(
        task_id="t", context_id="c", artifact=artifact, append=True, last_chunk=True
    )
    encoded = CODEC.encode_event(chunk)
    assert encoded == {
        "artifactUpdate": {
            "taskId": "t",
            "contextId": "c",
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
            "append": True,
            "lastChunk": True,
        }
    }
    inner = encoded["artifactUpdate"]
    snake = {"artifact_update": {**inner, "last_chunk": True, "artifact": {"artifact_id": "a"}}}
    snake["artifact_update"]["artifact"]["parts"] = [{"text": "x"}]
    del snake["artifact_update"]["lastChunk"]
    assert CODEC.decode_event(snake) == chunk


def test_parts_have_no_kind_and_lose_what_the_proto_cannot_hold() -> None:
    assert CODEC.encode(m.TextPart(text="x", media_type="text/markdown", metadata={"a": 1})) == {
        "text": "x"
    }
    raw = m.RawPart(raw=b"hi", media_type="text/plain", filename="hi.txt", metadata={"a": 1})
    assert CODEC.encode(raw) == {"file": {"fileWithBytes": "aGk=", "mimeType": "text/plain"}}
    url = m.UrlPart(url="https://h/f", filename="f")
    assert CODEC.encode(url) == {"file": {"fileWithUri": "https://h/f"}}
    assert CODEC.encode(m.DataPart(data={"a": [1]})) == {"data": {"data": {"a": [1]}}}
    # a2a-sdk's later 0.3 proto adds part metadata and file names: read when sent.
    wire = {"file": {"fileWithBytes": "aGk", "name": "hi.txt"}, "metadata": {"a": 1}}
    assert CODEC.decode(m.RawPart, wire) == m.RawPart(
        raw=b"hi", filename="hi.txt", metadata={"a": 1}
    )
    assert CODEC.decode(m.DataPart, {"data": {}}) == m.DataPart(data={})
    assert CODEC.decode(m.TextPart, {"text": "", "kind": "text"}) == m.TextPart(text="")


@pytest.mark.parametrize("data", [[1, 2], "text", 3.5, None, True])
def test_non_object_data_is_wrapped(data: Any) -> None:
    encoded = CODEC.encode(m.DataPart(data=data, media_type="application/json"))
    assert encoded == {"data": {"data": {"value": data}}}
    official("Part", encoded)
    assert CODEC.decode(m.DataPart, encoded) == m.DataPart(data={"value": data})


@pytest.mark.parametrize(
    ("part", "field"),
    [
        ({}, "content[0]"),
        ({"text": "x", "data": {"data": {}}}, "content[0]"),
        ({"text": 7}, "content[0].text"),
        ({"file": {}}, "content[0].file"),
        ({"file": {"fileWithUri": "u", "fileWithBytes": "aGk="}}, "content[0].file"),
        ({"file": {"fileWithBytes": "***"}}, "content[0].file.fileWithBytes"),
        ({"file": {"fileWithUri": 7}}, "content[0].file.fileWithUri"),
        ({"file": "x"}, "content[0].file"),
        ({"data": {"data": [1]}}, "content[0].data.data"),
        ({"data": 1}, "content[0].data"),
        ({"text": "x", "metadata": 1}, "content[0].metadata"),
        ({"kind": "text", "text": "x", "parts": 1}, ""),
    ],
)
def test_bad_parts_name_the_field(part: Any, field: str) -> None:
    wire = {**HELLO_WIRE, "content": [part]}
    if not field:  # a valid part: unknown members are ignored
        assert CODEC.decode(m.Message, wire) == replace(HELLO, parts=(m.TextPart(text="x"),))
        return
    raises_on(field, lambda: CODEC.decode(m.Message, wire))


def test_message_needs_content_and_drops_reference_task_ids() -> None:
    raises_on("content", lambda: CODEC.decode(m.Message, {"messageId": "m", "role": 1}))
    parts_wire = {"messageId": "m", "role": 1, "parts": [{"text": "x"}]}
    raises_on("content", lambda: CODEC.decode(m.Message, parts_wire))
    raises_on("messageId", lambda: CODEC.decode(m.Message, {**HELLO_WIRE, "messageId": ""}))
    assert CODEC.encode(replace(HELLO, reference_task_ids=("t-0",))) == HELLO_WIRE


def test_unknown_fields_are_ignored_and_null_is_absent() -> None:
    wire = {
        **HELLO_WIRE,
        "content": [{"text": "hello", "data": None, "extra": 1}],
        "contextId": None,
        "taskId": None,
        "extensions": None,
        "referenceTaskIds": ["t-0"],
        "novel": {"x": 1},
    }
    assert CODEC.decode(m.Message, wire) == HELLO


def test_timestamps() -> None:
    for moment in ("2025-10-28T10:30:00Z", "2025-10-28T10:30:00.000Z", "2025-10-28T11:30:00+01:00"):
        status = CODEC.decode(m.TaskStatus, {"state": 2, "timestamp": moment})
        assert status.timestamp == NOW
    raises_on(
        "timestamp",
        lambda: CODEC.decode(m.TaskStatus, {"state": 2, "timestamp": "2025-W43-2T10:30:00.000Z"}),
    )
    raises_on(
        "timestamp",
        lambda: CODEC.decode(m.TaskStatus, {"state": 2, "timestamp": "0001-01-01T00:00:00+01:00"}),
    )


def test_blocking_follows_the_proto() -> None:
    """An absent `blocking` is false (ProtoJSON; the official SDK reads it so too)."""
    assert CODEC.decode(m.SendMessageConfiguration, {}) == m.SendMessageConfiguration(
        return_immediately=True
    )
    assert CODEC.decode(m.SendMessageConfiguration, {"blocking": True}) == (
        m.SendMessageConfiguration()
    )
    assert CODEC.encode(m.SendMessageConfiguration()) == {"blocking": True}
    assert CODEC.encode(m.SendMessageConfiguration(return_immediately=True)) == {}
    assert "configuration" not in CODEC.encode_request(SEND, m.SendMessageRequest(message=HELLO))
    assert CODEC.decode_request(SEND, {"message": HELLO_WIRE}) == m.SendMessageRequest(
        message=HELLO
    )


def test_history_length_zero_is_unlimited() -> None:
    """REFERENCE §8.4, D11: 0 is the proto default and means unlimited: None."""
    get = Operation.GET_TASK
    for zero in (0, "0", None):
        request = CODEC.decode_request(get, {"id": "t-1", "historyLength": zero})
        assert request == m.GetTaskRequest(id="t-1")
    query = CODEC.decode_request(get, {"id": "t-1", "historyLength": "7"})
    assert query == m.GetTaskRequest(id="t-1", history_length=7)
    assert CODEC.encode_request(get, query) == {"id": "t-1", "historyLength": 7}
    # The model's 0 (no history) has no 0.3 REST spelling: it is not sent.
    assert CODEC.encode_request(get, m.GetTaskRequest(id="t-1", history_length=0)) == {"id": "t-1"}
    config = CODEC.decode(m.SendMessageConfiguration, {"historyLength": 0, "blocking": True})
    assert config.history_length is None
    raises_on("historyLength", lambda: CODEC.decode_request(get, {"id": "t", "historyLength": "x"}))


def test_task_requests_take_the_path_id_or_a_resource_name() -> None:
    get, cancel = Operation.GET_TASK, Operation.CANCEL_TASK
    subscribe = Operation.SUBSCRIBE_TO_TASK
    assert CODEC.decode_request(get, {"name": "tasks/t-1", "history_length": 2}) == (
        m.GetTaskRequest(id="t-1", history_length=2)
    )
    # CancelTask: the body is `{}` or `{"name": …}`; the path's id wins.
    assert CODEC.decode_request(cancel, {"id": "t-1"}) == m.CancelTaskRequest(id="t-1")
    assert CODEC.decode_request(cancel, {"name": "tasks/t-1"}) == m.CancelTaskRequest(id="t-1")
    both = {"id": "t-1", "name": "tasks/other"}
    assert CODEC.decode_request(cancel, both) == m.CancelTaskRequest(id="t-1")
    assert CODEC.encode_request(cancel, m.CancelTaskRequest(id="t-1", metadata={"a": 1})) == {
        "id": "t-1"
    }
    assert CODEC.decode_request(subscribe, {"name": "tasks/t-1"}) == m.SubscribeToTaskRequest(
        id="t-1"
    )
    for operation in (get, cancel, subscribe):
        raises_on("name", decoding(operation, {}))
        raises_on("id", decoding(operation, {"id": 7}))
        for name in ("task/t-1", "tasks/", "tasks/t-1/x", "t-1", "/tasks/t-1", 7):
            raises_on("name", decoding(operation, {"name": name}))


SDK_CREATE_BODY: dict[str, Any] = {
    "parent": "tasks/t-1",
    "configId": "p-1",
    "config": {
        "name": "tasks/t-1/pushNotificationConfigs/p-1",
        "pushNotificationConfig": {
            "id": "p-1",
            "url": "https://client/hook",
            "token": "tok",
            "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "c"},
        },
    },
}
PUSH = m.TaskPushNotificationConfig(
    url="https://client/hook",
    task_id="t-1",
    id="p-1",
    token="tok",
    authentication=m.AuthenticationInfo(scheme="Bearer", credentials="c"),
)


def test_create_push_config_accepts_the_sdk_body_and_the_bare_config() -> None:
    """REFERENCE §3.2 (D12): the SDK posts the whole request; the proto rule implies the
    inner config only. The task id comes from the path (`taskId`) when merged in."""
    assert CODEC.decode_request(CREATE, SDK_CREATE_BODY) == PUSH
    assert CODEC.decode_request(CREATE, {**SDK_CREATE_BODY, "taskId": "t-1"}) == PUSH
    bare = dict(SDK_CREATE_BODY["config"])
    assert CODEC.decode_request(CREATE, {**bare, "taskId": "t-1"}) == PUSH
    assert CODEC.decode_request(CREATE, bare) == PUSH
    snake = {
        "parent": "tasks/t-1",
        "config_id": "p-1",
        "config": {
            "push_notification_config": {"url": "https://client/hook", "token": "tok"},
        },
    }
    assert CODEC.decode_request(CREATE, snake) == m.TaskPushNotificationConfig(
        url="https://client/hook", task_id="t-1", id="p-1", token="tok"
    )
    unnamed = {"taskId": "t-1", "pushNotificationConfig": {"url": "https://h"}}
    assert CODEC.decode_request(CREATE, unnamed) == m.TaskPushNotificationConfig(
        url="https://h", task_id="t-1"
    )
    # What Parley posts is the SDK's body (the authentication keeps one scheme).
    payload = CODEC.encode_request(CREATE, PUSH)
    assert payload.pop("taskId") == "t-1"
    expected = orjson.loads(orjson.dumps(SDK_CREATE_BODY))
    expected["config"]["pushNotificationConfig"]["authentication"]["schemes"] = ["Bearer"]
    assert payload == expected
    new = m.TaskPushNotificationConfig(url="https://h", task_id="t-1")
    assert CODEC.encode_request(CREATE, new) == {
        "taskId": "t-1",
        "parent": "tasks/t-1",
        "config": {"pushNotificationConfig": {"url": "https://h"}},
    }


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"pushNotificationConfig": {"url": "https://h"}}, "name"),
        ({"config": {"pushNotificationConfig": {"url": "https://h"}}}, "parent"),
        ({"parent": "task/t-1", "config": {}}, "parent"),
        ({"parent": "tasks/t-1", "config": {}}, "config.pushNotificationConfig"),
        ({"parent": "tasks/t-1", "config": []}, "config"),
        ({"config": {"name": "tasks/t-1", "pushNotificationConfig": {}}}, "config.name"),
        ({"taskId": "t", "pushNotificationConfig": {"token": "x"}}, "pushNotificationConfig.url"),
        ({"taskId": 7, "pushNotificationConfig": {"url": "https://h"}}, "taskId"),
    ],
)
def test_create_push_config_errors_name_the_field(payload: Any, field: str) -> None:
    raises_on(field, lambda: CODEC.decode_request(CREATE, payload))


def test_push_config_response_is_named() -> None:
    encoded = CODEC.encode_response(GET_PUSH, PUSH)
    assert encoded == {
        "name": "tasks/t-1/pushNotificationConfigs/p-1",
        "pushNotificationConfig": {
            "url": "https://client/hook",
            "id": "p-1",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "c"},
        },
    }
    assert CODEC.decode_response(GET_PUSH, encoded) == PUSH
    # The config id of the name serves when the inner config has none.
    del encoded["pushNotificationConfig"]["id"]
    assert CODEC.decode_response(GET_PUSH, encoded) == PUSH
    tenanted = replace(PUSH, tenant="acme")
    assert CODEC.encode(tenanted) == CODEC.encode(PUSH)


def test_push_config_requests_take_path_parameters_or_a_resource_name() -> None:
    name = "tasks/t-1/pushNotificationConfigs/p-1"
    get = m.GetTaskPushNotificationConfigRequest(task_id="t-1", id="p-1")
    delete = m.DeleteTaskPushNotificationConfigRequest(task_id="t-1", id="p-1")
    assert CODEC.encode_request(GET_PUSH, get) == {"taskId": "t-1", "id": "p-1"}
    assert CODEC.decode_request(GET_PUSH, {"taskId": "t-1", "id": "p-1"}) == get
    assert CODEC.decode_request(GET_PUSH, {"name": name}) == get
    assert CODEC.decode_request(DELETE_PUSH, {"name": name}) == delete
    assert CODEC.decode_request(DELETE_PUSH, {"task_id": "t-1", "id": "p-1"}) == delete
    for operation in (GET_PUSH, DELETE_PUSH):
        raises_on("name", decoding(operation, {"taskId": "t-1"}))
        for bad in ("tasks/t-1", "tasks/t-1/pushNotificationConfigs/", "tasks/t/configs/p", 3):
            raises_on("name", decoding(operation, {"name": bad}))
    listing = m.ListTaskPushNotificationConfigsRequest(task_id="t-1", page_size=5, page_token="x")
    assert CODEC.encode_request(LIST_PUSH, listing) == {
        "taskId": "t-1",
        "pageSize": 5,
        "pageToken": "x",
    }
    query = {"taskId": "t-1", "pageSize": "5", "pageToken": "x"}
    assert CODEC.decode_request(LIST_PUSH, query) == listing
    snake = {"parent": "tasks/t-1", "page_size": 5, "page_token": "x"}
    assert CODEC.decode_request(LIST_PUSH, snake) == listing
    raises_on("parent", lambda: CODEC.decode_request(LIST_PUSH, {}))
    raises_on("parent", lambda: CODEC.decode_request(LIST_PUSH, {"parent": "tasks/t-1/x"}))


def test_push_list_and_delete_responses() -> None:
    listing = m.ListTaskPushNotificationConfigsResponse(configs=(PUSH,), next_page_token="n")
    encoded = CODEC.encode_response(LIST_PUSH, listing)
    assert encoded["nextPageToken"] == "n"
    assert encoded["configs"] == [CODEC.encode(PUSH)]
    empty = m.ListTaskPushNotificationConfigsResponse(configs=())
    assert CODEC.encode_response(LIST_PUSH, empty) == {"configs": []}
    assert CODEC.decode_response(LIST_PUSH, {}) == empty
    unnamed = {"configs": [{"pushNotificationConfig": {"url": "https://h"}}]}
    raises_on("configs[0].name", lambda: CODEC.decode_response(LIST_PUSH, unnamed))
    assert CODEC.encode_response(DELETE_PUSH, None) == {}
    assert CODEC.decode_response(DELETE_PUSH, {}) is None
    assert CODEC.decode_response(DELETE_PUSH, None) is None
    raises_on("", lambda: CODEC.decode_response(DELETE_PUSH, []))
    with pytest.raises(InternalError):
        CODEC.encode_response(DELETE_PUSH, PUSH)


def test_card_request_is_empty() -> None:
    card_op = Operation.GET_EXTENDED_AGENT_CARD
    assert CODEC.encode_request(card_op, m.GetExtendedAgentCardRequest(tenant="x")) == {}
    assert CODEC.decode_request(card_op, None) == m.GetExtendedAgentCardRequest()
    assert CODEC.decode_request(card_op, {"x": 1}) == m.GetExtendedAgentCardRequest()
    raises_on("", lambda: CODEC.decode_request(card_op, [1]))


@pytest.mark.parametrize(
    "operation", [Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK]
)
def test_streaming_operations_answer_with_events(operation: Operation) -> None:
    with pytest.raises(InternalError):
        CODEC.encode_response(operation, status_task(m.TaskState.WORKING))
    assert CODEC.decode_response(operation, {"message": HELLO_WIRE}) == HELLO


def test_list_tasks_does_not_exist() -> None:
    list_tasks = Operation.LIST_TASKS
    response = m.ListTasksResponse(tasks=(), next_page_token="", page_size=0, total_size=0)
    calls: list[Callable[[], object]] = [
        lambda: CODEC.decode_request(list_tasks, {}),
        lambda: CODEC.encode_request(list_tasks, m.ListTasksRequest()),
        lambda: CODEC.encode_response(list_tasks, response),
        lambda: CODEC.decode_response(list_tasks, {}),
        lambda: CODEC.encode(m.ListTasksRequest()),
        lambda: CODEC.decode(m.ListTasksRequest, {}),
        lambda: CODEC.decode(m.ListTasksResponse, {}),
    ]
    for call in calls:
        with pytest.raises(MethodNotFoundError):
            call()


def test_wrong_types_are_internal_errors() -> None:
    with pytest.raises(InternalError):
        CODEC.encode_request(Operation.GET_TASK, m.CancelTaskRequest(id="t"))
    with pytest.raises(InternalError):
        CODEC.encode(m.DeviceCodeOAuthFlow(device_authorization_url="u", token_url="u", scopes={}))
    with pytest.raises(InternalError):
        CODEC.encode_event(HELLO.parts[0])  # type: ignore[arg-type]


def test_decoding_a_part_of_another_kind_is_refused() -> None:
    raises_on("text", lambda: CODEC.decode(m.TextPart, {"data": {"data": {}}}))
    raises_on("file.fileWithBytes", lambda: CODEC.decode(m.RawPart, {"file": {"fileWithUri": "u"}}))
    raises_on("file.fileWithUri", lambda: CODEC.decode(m.UrlPart, {"file": {"fileWithBytes": ""}}))
    raises_on("data", lambda: CODEC.decode(m.DataPart, {"text": "x"}))


# ---------------------------------------------------------------- bad input


def _operation(operation: Operation) -> list[Callable[[JSON], object]]:
    def request(document: JSON) -> object:
        return CODEC.decode_request(operation, document)

    def response(document: JSON) -> object:
        return CODEC.decode_response(operation, document)

    return [request, response]


def _standalone(kind: type[m.Model]) -> Callable[[JSON], object]:
    def decode(document: JSON) -> object:
        return CODEC.decode(kind, document)

    return decode


STANDALONE_KINDS: list[type[m.Model]] = [*MODELS, m.ListTasksRequest, m.ListTasksResponse]
DECODERS: list[Callable[[JSON], object]] = [
    CODEC.decode_event,
    CODEC.decode_card,
    *(_standalone(kind) for kind in STANDALONE_KINDS),
    *(decoder for operation in Operation for decoder in _operation(operation)),
]
KEYS = st.sampled_from(
    [
        *("id", "name", "parent", "taskId", "contextId", "messageId", "role", "content"),
        *("parts", "text", "file", "data", "fileWithBytes", "fileWithUri", "mimeType"),
        *("status", "state", "timestamp", "message", "msg", "update", "artifact", "task"),
        *("statusUpdate", "artifactUpdate", "artifacts", "history", "metadata", "url"),
        *("schemes", "authentication", "pushNotificationConfig", "config", "configId"),
        *("configuration", "pushNotification", "historyLength", "blocking", "configs"),
        *("request", "pageSize", "artifactId", "append", "lastChunk", "final"),
    ]
)
SCALARS = (
    st.sampled_from(
        [
            *("TASK_STATE_CANCELLED", "TASK_STATE_WORKING", "ROLE_USER", "ROLE_AGENT"),
            *("tasks/t-1", "tasks/t/pushNotificationConfigs/p", "tasks/", "YQ==", ""),
            *("2025-10-28T10:30:00Z", "0001-01-01T00:00:00+01:00", "https://h"),
        ]
    )
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
)
WILD: st.SearchStrategy[Any] = st.recursive(
    json_values | SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=12,
)


def mutated(value: JSON, data: st.DataObject) -> JSON:
    """The value with one node (chosen by Hypothesis) replaced by a wild value."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {**value, key: mutated(value[key], data)}
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        return [*value[:index], mutated(value[index], data), *value[index + 1 :]]
    return data.draw(WILD)


@settings(max_examples=150)
@given(document=WILD)
def test_arbitrary_json_raises_only_typed_errors(document: JSON) -> None:
    for decode in DECODERS:
        with contextlib.suppress(A2AError):
            decode(document)


@pytest.mark.parametrize(
    "kind",
    [m.Task, m.Message, m.SendMessageRequest, m.TaskPushNotificationConfig, m.GetTaskRequest],
    ids=lambda kind: kind.__name__,
)
@settings(max_examples=60)
@given(data=st.data())
def test_mutated_documents_raise_only_typed_errors(
    kind: type[m.Model], data: st.DataObject
) -> None:
    document = mutated(CODEC.encode(data.draw(MODELS[kind])), data)
    for decode in DECODERS:
        with contextlib.suppress(A2AError):
            decode(document)


def test_every_v0_3_model_type_is_covered() -> None:
    """Every type the 0.3 strategies draw is round-tripped above."""
    assert set(all_models(V03)) <= set(MODELS)
    assert set(requests(V03)) <= set(MODELS)
