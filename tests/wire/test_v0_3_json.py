"""The A2A 0.3 JSON-RPC codec: round trips of every model type, every encoding checked
against the official 0.3 JSON schema, hand-written examples of each 0.3 ⇄ model
difference, and bad input that may only raise Parley's typed errors.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

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
from parley.wire.codec_seam import Codec
from parley.wire.json_bytes import JSON
from parley.wire.json_codec import JsonCodec
from parley.wire.reader import timestamp
from parley.wire.v0_3 import CODEC
from tests.strategies import (
    Flavor,
    all_models,
    cards,
    json_values,
    messages,
    push_configs,
    requests,
    stream_events,
    tasks,
)

V03 = Flavor.V0_3
MODELS = all_models(V03)
SCHEMA = json.loads((Path(__file__).parents[2] / "spec" / "a2a-v0.3.schema.json").read_text())
_CODEC: Codec[JSON] = CODEC  # the type checker proves the protocol is satisfied

# --- the official schema -------------------------------------------------------------------


@cache
def validator(definition: str) -> Any:
    """A validator of one definition (a JSON pointer below `#/definitions/`)."""
    return Draft7Validator(
        {"$ref": f"#/definitions/{definition}", "definitions": SCHEMA["definitions"]}
    )


def assert_valid(definition: str, document: JSON) -> None:
    errors = sorted(validator(definition).iter_errors(document), key=str)
    assert not errors, f"{definition}: {errors[0].message} at {list(errors[0].absolute_path)}"


def method(operation: Operation) -> str:
    return OPERATIONS[operation].bindings[Version.V0_3].jsonrpc_method


def request_envelope(operation: Operation, params: JSON) -> dict[str, Any]:
    envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method(operation)}
    if params is not None:
        envelope["params"] = params
    return envelope


def response_envelope(result: JSON) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": result}


REQUEST_DEFINITIONS = {
    Operation.SEND_MESSAGE: "SendMessageRequest",
    Operation.SEND_STREAMING_MESSAGE: "SendStreamingMessageRequest",
    Operation.GET_TASK: "GetTaskRequest",
    Operation.CANCEL_TASK: "CancelTaskRequest",
    Operation.SUBSCRIBE_TO_TASK: "TaskResubscriptionRequest",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "SetTaskPushNotificationConfigRequest",
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: "GetTaskPushNotificationConfigRequest",
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: "ListTaskPushNotificationConfigRequest",
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: "DeleteTaskPushNotificationConfigRequest",
    Operation.GET_EXTENDED_AGENT_CARD: "GetAuthenticatedExtendedCardRequest",
}
RESPONSE_DEFINITIONS = {
    Operation.SEND_MESSAGE: "SendMessageSuccessResponse",
    Operation.GET_TASK: "GetTaskSuccessResponse",
    Operation.CANCEL_TASK: "CancelTaskSuccessResponse",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "SetTaskPushNotificationConfigSuccessResponse",
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: "GetTaskPushNotificationConfigSuccessResponse",
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: "ListTaskPushNotificationConfigSuccessResponse",
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: (
        "DeleteTaskPushNotificationConfigSuccessResponse"
    ),
    Operation.GET_EXTENDED_AGENT_CARD: "GetAuthenticatedExtendedCardSuccessResponse",
}
EVENT_DEFINITION = "SendStreamingMessageSuccessResponse"

# The standalone form of each model type that is an object of the schema.
STANDALONE_DEFINITIONS: dict[type[m.Model], str] = {
    m.TextPart: "TextPart",
    m.RawPart: "FilePart",
    m.UrlPart: "FilePart",
    m.DataPart: "DataPart",
    m.Message: "Message",
    m.TaskStatus: "TaskStatus",
    m.Artifact: "Artifact",
    m.Task: "Task",
    m.TaskStatusUpdateEvent: "TaskStatusUpdateEvent",
    m.TaskArtifactUpdateEvent: "TaskArtifactUpdateEvent",
    m.AuthenticationInfo: "PushNotificationAuthenticationInfo",
    m.TaskPushNotificationConfig: "TaskPushNotificationConfig",
    m.AgentCard: "AgentCard",
    m.AgentSkill: "AgentSkill",
    m.AgentCapabilities: "AgentCapabilities",
    m.AgentInterface: "AgentInterface",
    m.AgentExtension: "AgentExtension",
    m.SecurityRequirement: "AgentCard/properties/security/items",
    m.SendMessageConfiguration: "MessageSendConfiguration",
}
REQUEST_OPERATIONS: dict[type[m.Model], Operation] = {
    m.SendMessageRequest: Operation.SEND_MESSAGE,
    m.GetTaskRequest: Operation.GET_TASK,
    m.CancelTaskRequest: Operation.CANCEL_TASK,
    m.SubscribeToTaskRequest: Operation.SUBSCRIBE_TO_TASK,
    m.GetTaskPushNotificationConfigRequest: Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
    m.ListTaskPushNotificationConfigsRequest: Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
    m.DeleteTaskPushNotificationConfigRequest: Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
    m.GetExtendedAgentCardRequest: Operation.GET_EXTENDED_AGENT_CARD,
}


def assert_standalone_valid(kind: type[m.Model], encoded: JSON) -> None:
    if kind in STANDALONE_DEFINITIONS:
        assert_valid(STANDALONE_DEFINITIONS[kind], encoded)
    elif kind in REQUEST_OPERATIONS:
        operation = REQUEST_OPERATIONS[kind]
        assert_valid(REQUEST_DEFINITIONS[operation], request_envelope(operation, encoded))
    elif kind is m.ListTaskPushNotificationConfigsResponse:
        assert_valid(
            RESPONSE_DEFINITIONS[Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS],
            response_envelope(encoded),
        )
    else:  # pragma: no cover - a new model type needs its definition above
        raise AssertionError(f"no schema definition for {kind.__name__}")


# --- round trips and the schema, for every model type --------------------------------------


def test_codec_identity() -> None:
    assert isinstance(CODEC, JsonCodec)
    assert CODEC.version is Version.V0_3


@pytest.mark.parametrize("kind", list(MODELS), ids=lambda kind: kind.__name__)
@settings(
    max_examples=60, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow]
)
@given(data=st.data())
def test_every_model_type_round_trips_and_matches_the_schema(
    kind: type[m.Model], data: st.DataObject
) -> None:
    value = data.draw(MODELS[kind])
    encoded = CODEC.encode(value)
    assert CODEC.decode(kind, encoded) == value
    assert CODEC.decode(kind, orjson.loads(orjson.dumps(encoded))) == value
    assert_standalone_valid(kind, encoded)


def _results() -> dict[Operation, st.SearchStrategy[Any]]:
    return {
        Operation.SEND_MESSAGE: tasks(V03) | messages(V03),
        Operation.GET_TASK: tasks(V03),
        Operation.CANCEL_TASK: tasks(V03),
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: push_configs(V03),
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: push_configs(V03),
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: requests(V03)[
            m.ListTaskPushNotificationConfigsResponse
        ],
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: st.none(),
        Operation.GET_EXTENDED_AGENT_CARD: cards(V03),
    }


def _requests() -> dict[Operation, st.SearchStrategy[Any]]:
    out = {op: requests(V03)[type_] for type_, op in REQUEST_OPERATIONS.items()}
    out[Operation.SEND_STREAMING_MESSAGE] = requests(V03)[m.SendMessageRequest]
    out[Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG] = push_configs(V03)
    return out


RESULTS = _results()
REQUESTS = _requests()


@pytest.mark.parametrize("operation", list(REQUESTS), ids=lambda op: op.value)
@settings(max_examples=40)
@given(data=st.data())
def test_every_request_round_trips_and_matches_the_schema(
    operation: Operation, data: st.DataObject
) -> None:
    request = data.draw(REQUESTS[operation])
    params = CODEC.encode_request(operation, request)
    assert_valid(REQUEST_DEFINITIONS[operation], request_envelope(operation, params))
    assert CODEC.decode_request(operation, orjson.loads(orjson.dumps(params))) == request


@pytest.mark.parametrize("operation", list(RESULTS), ids=lambda op: op.value)
@settings(max_examples=40)
@given(data=st.data())
def test_every_response_round_trips_and_matches_the_schema(
    operation: Operation, data: st.DataObject
) -> None:
    result = data.draw(RESULTS[operation])
    encoded = CODEC.encode_response(operation, result)
    assert_valid(RESPONSE_DEFINITIONS[operation], response_envelope(encoded))
    assert CODEC.decode_response(operation, orjson.loads(orjson.dumps(encoded))) == result


@settings(max_examples=100)
@given(event=stream_events(V03))
def test_every_stream_event_round_trips_and_matches_the_schema(event: m.StreamEvent) -> None:
    encoded = CODEC.encode_event(event)
    assert_valid(EVENT_DEFINITION, response_envelope(encoded))
    assert CODEC.decode_event(orjson.loads(orjson.dumps(encoded))) == event
    if isinstance(event, m.TaskStatusUpdateEvent):
        assert encoded["final"] is ends_stream(event.status.state)


# --- hand-written examples -----------------------------------------------------------------

NOW = datetime(2025, 10, 28, 10, 30, tzinfo=UTC)
HELLO = m.Message(message_id="m-1", role=m.Role.USER, parts=(m.TextPart(text="hello"),))


def status_task(state: m.TaskState) -> m.Task:
    return m.Task(id="t-1", context_id="c-1", status=m.TaskStatus(state=state, timestamp=NOW))


def field_of(error: A2AError) -> str:
    assert error.field_violations, error
    return error.field_violations[0].field


def test_canceled_is_spelled_with_one_l() -> None:
    encoded = CODEC.encode(status_task(m.TaskState.CANCELED))
    assert encoded["status"] == {"state": "canceled", "timestamp": "2025-10-28T10:30:00.000Z"}
    assert CODEC.decode(m.Task, encoded) == status_task(m.TaskState.CANCELED)
    encoded["status"]["state"] = "cancelled"
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode(m.Task, encoded)
    assert field_of(raised.value) == "status.state"


def test_unknown_state_is_unspecified() -> None:
    status = CODEC.decode(m.TaskStatus, {"state": "unknown"})
    assert status == m.TaskStatus(state=m.TaskState.UNSPECIFIED)
    assert CODEC.encode(status) == {"state": "unknown"}


@pytest.mark.parametrize(
    ("state", "name", "final"),
    [
        (m.TaskState.WORKING, "working", False),
        (m.TaskState.SUBMITTED, "submitted", False),
        (m.TaskState.INPUT_REQUIRED, "input-required", True),
        (m.TaskState.AUTH_REQUIRED, "auth-required", True),
        (m.TaskState.COMPLETED, "completed", True),
        (m.TaskState.REJECTED, "rejected", True),
    ],
)
def test_status_update_final_follows_the_state(state: m.TaskState, name: str, final: bool) -> None:
    event = m.TaskStatusUpdateEvent(
        task_id="t-1", context_id="c-1", status=m.TaskStatus(state=state)
    )
    encoded = CODEC.encode_event(event)
    assert encoded == {
        "kind": "status-update",
        "taskId": "t-1",
        "contextId": "c-1",
        "status": {"state": name},
        "final": final,
    }
    encoded["final"] = not final  # ignored on decode
    assert CODEC.decode_event(encoded) == event


def test_artifact_update_flags_are_sent_only_when_true() -> None:
    artifact = m.Artifact(artifact_id="a-1", parts=(m.TextPart(text="x"),))
    event = m.TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=artifact)
    encoded = CODEC.encode_event(event)
    assert "append" not in encoded
    assert "lastChunk" not in encoded
    chunk = m.TaskArtifactUpdateEvent(
        task_id="t", context_id="c", artifact=artifact, append=True, last_chunk=True
    )
    assert CODEC.encode_event(chunk)["append"] is True
    assert CODEC.encode_event(chunk)["lastChunk"] is True


def test_file_part_with_bytes() -> None:
    wire = {
        "kind": "file",
        "file": {"bytes": "aGk=", "name": "hi.txt", "mimeType": "text/plain"},
        "metadata": {"k": 1},
    }
    part = m.RawPart(raw=b"hi", filename="hi.txt", media_type="text/plain", metadata={"k": 1})
    assert CODEC.decode(m.RawPart, wire) == part
    assert CODEC.encode(part) == wire
    assert CODEC.decode(m.RawPart, {"kind": "file", "file": {"bytes": "aGk"}}) == m.RawPart(
        raw=b"hi"
    )


def test_file_part_with_uri() -> None:
    wire = {"kind": "file", "file": {"uri": "https://h/f.png", "mimeType": "image/png"}}
    part = m.UrlPart(url="https://h/f.png", media_type="image/png")
    assert CODEC.decode(m.UrlPart, wire) == part
    assert CODEC.encode(part) == wire


@pytest.mark.parametrize(
    ("file", "field"),
    [
        ({"bytes": "aGk=", "uri": "https://h/f"}, "parts[0].file"),
        ({"name": "f"}, "parts[0].file"),
        ({"bytes": "***"}, "parts[0].file.bytes"),
        ({"uri": 7}, "parts[0].file.uri"),
        (None, "parts[0].file"),
    ],
)
def test_file_part_needs_exactly_one_of_bytes_and_uri(file: Any, field: str) -> None:
    wire: dict[str, Any] = {"kind": "message", "messageId": "m", "role": "user"}
    wire["parts"] = [{"kind": "file", "file": file}]
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode(m.Message, wire)
    assert field_of(raised.value) == field


def test_text_part_drops_media_type_and_filename() -> None:
    part = m.TextPart(text="x", media_type="text/markdown", filename="a.md")
    assert CODEC.encode(part) == {"kind": "text", "text": "x"}


@pytest.mark.parametrize("data", [[1, 2], "text", 3.5, None, True])
def test_non_object_data_is_wrapped(data: Any) -> None:
    encoded = CODEC.encode(m.DataPart(data=data, media_type="application/json"))
    assert encoded == {"kind": "data", "data": {"value": data}}
    assert_valid("DataPart", encoded)
    assert CODEC.decode(m.DataPart, encoded) == m.DataPart(data={"value": data})


def test_data_must_be_an_object_on_decode() -> None:
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode(m.DataPart, {"kind": "data", "data": [1]})
    assert field_of(raised.value) == "data"


def test_missing_kind_is_rejected_with_the_field_named() -> None:
    message = {"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]}
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode(m.Message, message)
    assert field_of(raised.value) == "kind"
    assert "required" in raised.value.message
    message["kind"] = "message"
    message["parts"] = [{"text": "x"}]
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode_request(Operation.SEND_MESSAGE, {"message": message})
    assert field_of(raised.value) == "message.parts[0].kind"
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode_event({"kind": "taskStatusUpdate"})
    assert field_of(raised.value) == "kind"


def test_decoding_a_part_of_another_kind_is_refused() -> None:
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode(m.TextPart, {"kind": "data", "data": {}})
    assert field_of(raised.value) == "kind"
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode(m.RawPart, {"kind": "file", "file": {"uri": "https://h"}})
    assert field_of(raised.value) == "file.bytes"


def test_unknown_fields_are_ignored_and_null_is_absent() -> None:
    wire = {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hello", "metadata": None, "extra": 1}],
        "contextId": None,
        "taskId": None,
        "extensions": None,
        "novel": {"x": 1},
    }
    assert CODEC.decode(m.Message, wire) == HELLO


def test_zone_less_timestamps_are_utc() -> None:
    status = CODEC.decode(
        m.TaskStatus, {"state": "working", "timestamp": "2025-04-02T16:59:25.331844"}
    )
    assert status.timestamp == datetime(2025, 4, 2, 16, 59, 25, 331844, tzinfo=UTC)
    assert CODEC.encode(status)["timestamp"] == "2025-04-02T16:59:25.331844Z"


TIMESTAMP_CHARS = st.sampled_from([*"0123456789", "\u0663", "\uff15", "a", " ", "+", "-"])


@settings(max_examples=300)
@given(chars=st.lists(TIMESTAMP_CHARS, min_size=17, max_size=17))
def test_canonical_timestamp_fast_path_agrees_with_the_reader(chars: list[str]) -> None:
    moment = "{}{}{}{}-{}{}-{}{}T{}{}:{}{}:{}{}.{}{}{}Z".format(*chars)
    try:
        expected: object = timestamp({"t": moment}, "t", "")
    except InvalidParamsError:
        expected = InvalidParamsError
    try:
        status = CODEC.decode(m.TaskStatus, {"state": "working", "timestamp": moment})
        got: object = status.timestamp
    except InvalidParamsError:
        got = InvalidParamsError
    assert got == expected


def test_timestamp_out_of_range_after_conversion_is_refused() -> None:
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode(m.TaskStatus, {"state": "working", "timestamp": "0001-01-01T00:00:00+01:00"})
    assert field_of(raised.value) == "timestamp"


def test_blocking_is_the_negation_of_return_immediately() -> None:
    send = Operation.SEND_MESSAGE
    message = CODEC.encode(HELLO)
    decoded = CODEC.decode_request(send, {"message": message, "configuration": {}})
    assert decoded == m.SendMessageRequest(
        message=HELLO, configuration=m.SendMessageConfiguration(return_immediately=False)
    )
    decoded = CODEC.decode_request(send, {"message": message, "configuration": {"blocking": False}})
    assert isinstance(decoded, m.SendMessageRequest)
    assert decoded.configuration == m.SendMessageConfiguration(return_immediately=True)
    params = CODEC.encode_request(send, decoded)
    assert params["configuration"] == {"blocking": False}
    blocking = m.SendMessageRequest(message=HELLO, configuration=m.SendMessageConfiguration())
    assert CODEC.encode_request(send, blocking)["configuration"] == {"blocking": True}
    assert "configuration" not in CODEC.encode_request(send, m.SendMessageRequest(message=HELLO))


def test_push_config_nests_and_keeps_the_first_scheme() -> None:
    wire: dict[str, Any] = {
        "taskId": "t-1",
        "pushNotificationConfig": {
            "url": "https://client/hook",
            "id": "p-1",
            "token": "tok",
            "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "c"},
        },
    }
    config = CODEC.decode(m.TaskPushNotificationConfig, wire)
    assert config == m.TaskPushNotificationConfig(
        url="https://client/hook",
        task_id="t-1",
        id="p-1",
        token="tok",
        authentication=m.AuthenticationInfo(scheme="Bearer", credentials="c"),
    )
    wire["pushNotificationConfig"]["authentication"]["schemes"] = ["Bearer"]
    assert CODEC.encode(config) == wire
    wire["pushNotificationConfig"]["authentication"]["schemes"] = []
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode(m.TaskPushNotificationConfig, wire)
    assert field_of(raised.value) == "pushNotificationConfig.authentication.schemes"


def test_push_config_tenant_is_dropped() -> None:
    config = m.TaskPushNotificationConfig(url="https://h", task_id="t", id="p", tenant="acme")
    encoded = CODEC.encode(config)
    assert encoded == {"taskId": "t", "pushNotificationConfig": {"url": "https://h", "id": "p"}}


def test_legacy_push_get_means_the_default_config() -> None:
    get = Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG
    legacy = CODEC.decode_request(get, {"id": "t-1"})
    assert legacy == m.GetTaskPushNotificationConfigRequest(task_id="t-1", id="t-1")
    assert CODEC.encode_request(get, legacy) == {"id": "t-1", "pushNotificationConfigId": "t-1"}
    full = CODEC.decode_request(get, {"id": "t-1", "pushNotificationConfigId": "p-2"})
    assert full == m.GetTaskPushNotificationConfigRequest(task_id="t-1", id="p-2")


def test_push_config_params_carry_the_task_id_as_id() -> None:
    delete = Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG
    request = m.DeleteTaskPushNotificationConfigRequest(task_id="t-1", id="p-1")
    assert CODEC.encode_request(delete, request) == {"id": "t-1", "pushNotificationConfigId": "p-1"}
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode_request(delete, {"id": "t-1"})
    assert field_of(raised.value) == "pushNotificationConfigId"
    listing = m.ListTaskPushNotificationConfigsRequest(task_id="t-1", page_size=5, page_token="x")
    params = CODEC.encode_request(Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, listing)
    assert params == {"id": "t-1"}


def test_push_list_is_a_bare_array_and_delete_answers_null() -> None:
    config = m.TaskPushNotificationConfig(url="https://h", task_id="t", id="p")
    listing = m.ListTaskPushNotificationConfigsResponse(configs=(config,), next_page_token="n")
    encoded = CODEC.encode_response(Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, listing)
    assert encoded == [{"taskId": "t", "pushNotificationConfig": {"url": "https://h", "id": "p"}}]
    delete = Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG
    assert CODEC.encode_response(delete, None) is None
    assert CODEC.decode_response(delete, None) is None


def test_send_message_result_is_a_bare_task_or_message() -> None:
    send = Operation.SEND_MESSAGE
    task = status_task(m.TaskState.COMPLETED)
    assert CODEC.encode_response(send, task)["kind"] == "task"
    assert CODEC.encode_response(send, HELLO)["kind"] == "message"
    assert CODEC.decode_response(send, CODEC.encode(HELLO)) == HELLO
    with pytest.raises(InvalidParamsError):
        CODEC.decode_response(send, {"kind": "status-update"})
    with pytest.raises(InternalError):
        CODEC.encode_response(send, m.GetTaskRequest(id="t"))


def test_extended_card_request_has_no_params() -> None:
    card_op = Operation.GET_EXTENDED_AGENT_CARD
    assert CODEC.encode_request(card_op, m.GetExtendedAgentCardRequest(tenant="x")) is None
    assert CODEC.decode_request(card_op, None) == m.GetExtendedAgentCardRequest()
    assert CODEC.decode_request(card_op, {}) == m.GetExtendedAgentCardRequest()
    with pytest.raises(InvalidParamsError):
        CODEC.decode_request(card_op, [1])


@pytest.mark.parametrize(
    "operation", [Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK]
)
def test_streaming_operations_answer_with_events(operation: Operation) -> None:
    with pytest.raises(InternalError):
        CODEC.encode_response(operation, status_task(m.TaskState.WORKING))
    assert CODEC.decode_response(operation, CODEC.encode(HELLO)) == HELLO


def test_list_tasks_does_not_exist() -> None:
    list_tasks = Operation.LIST_TASKS
    calls: list[Callable[[], object]] = [
        lambda: CODEC.decode_request(list_tasks, {}),
        lambda: CODEC.encode_request(list_tasks, m.ListTasksRequest()),
        lambda: CODEC.encode_response(
            list_tasks,
            m.ListTasksResponse(tasks=(), next_page_token="", page_size=0, total_size=0),
        ),
        lambda: CODEC.decode_response(list_tasks, {}),
        lambda: CODEC.encode(m.ListTasksRequest()),
        lambda: CODEC.decode(m.ListTasksRequest, {}),
    ]
    for call in calls:
        with pytest.raises(MethodNotFoundError):
            call()


def test_request_of_the_wrong_type_is_an_internal_error() -> None:
    with pytest.raises(InternalError):
        CODEC.encode_request(Operation.GET_TASK, m.CancelTaskRequest(id="t"))


# --- the agent card ------------------------------------------------------------------------

FLOWS = m.OAuthFlows(
    authorization_code=m.AuthorizationCodeOAuthFlow(
        authorization_url="https://auth/authorize",
        token_url="https://auth/token",
        refresh_url="https://auth/refresh",
        scopes={"read": "Read", "write": "Write"},
        pkce_required=True,
    ),
    client_credentials=m.ClientCredentialsOAuthFlow(token_url="https://auth/token", scopes={}),
    device_code=m.DeviceCodeOAuthFlow(
        device_authorization_url="https://auth/device", token_url="https://auth/token", scopes={}
    ),
    implicit=m.ImplicitOAuthFlow(authorization_url="https://auth/authorize", scopes={"a": "b"}),
    password=m.PasswordOAuthFlow(token_url="https://auth/token", scopes={}),
)
SCHEMES: dict[str, m.SecurityScheme] = {
    "key": m.APIKeySecurityScheme(name="X-Api-Key", location="header", description="A key"),
    "bearer": m.HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT"),
    "oauth": m.OAuth2SecurityScheme(
        flows=FLOWS, oauth2_metadata_url="https://auth/.well-known/oauth-authorization-server"
    ),
    "oidc": m.OpenIdConnectSecurityScheme(open_id_connect_url="https://auth/.well-known/oidc"),
    "mtls": m.MutualTlsSecurityScheme(description="Client certificates"),
}
WIRE_SCHEMES = {
    "key": {"type": "apiKey", "in": "header", "name": "X-Api-Key", "description": "A key"},
    "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
    "oauth": {
        "type": "oauth2",
        "flows": {
            "authorizationCode": {
                "authorizationUrl": "https://auth/authorize",
                "tokenUrl": "https://auth/token",
                "refreshUrl": "https://auth/refresh",
                "scopes": {"read": "Read", "write": "Write"},
            },
            "clientCredentials": {"tokenUrl": "https://auth/token", "scopes": {}},
            "implicit": {"authorizationUrl": "https://auth/authorize", "scopes": {"a": "b"}},
            "password": {"tokenUrl": "https://auth/token", "scopes": {}},
        },
        "oauth2MetadataUrl": "https://auth/.well-known/oauth-authorization-server",
    },
    "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://auth/.well-known/oidc"},
    "mtls": {"type": "mutualTLS", "description": "Client certificates"},
}
INTERFACES = (
    m.AgentInterface(url="https://a/v1", protocol_binding="JSONRPC", protocol_version="1.0"),
    m.AgentInterface(url="https://a/rpc", protocol_binding="JSONRPC", protocol_version="0.3"),
    m.AgentInterface(
        url="https://a/rest", protocol_binding="HTTP+JSON", protocol_version="0.3", tenant="t"
    ),
)
CARD = m.AgentCard(
    name="Planner",
    description="Plans routes.",
    version="1.2.0",
    supported_interfaces=INTERFACES,
    capabilities=m.AgentCapabilities(streaming=True, extended_agent_card=True),
    default_input_modes=("text/plain",),
    default_output_modes=("text/plain",),
    skills=(
        m.AgentSkill(
            id="route",
            name="Route",
            description="",
            tags=(),
            security_requirements=(m.SecurityRequirement(schemes={"oauth": ("read",)}),),
        ),
    ),
    security_schemes=SCHEMES,
    security_requirements=(
        m.SecurityRequirement(schemes={"oauth": ("read", "write")}),
        m.SecurityRequirement(schemes={"key": (), "mtls": ()}),
    ),
)


def test_card_with_every_security_scheme_and_several_flows() -> None:
    encoded = CODEC.encode_card(CARD)
    assert_valid("AgentCard", encoded)
    assert encoded["securitySchemes"] == WIRE_SCHEMES
    assert encoded["security"] == [{"oauth": ["read", "write"]}, {"key": [], "mtls": []}]
    assert encoded["skills"][0]["security"] == [{"oauth": ["read"]}]
    decoded = CODEC.decode_card(encoded)
    # deviceCode and pkceRequired are 1.0 only; 1.0 interfaces and tenants do not show.
    oauth = SCHEMES["oauth"]
    assert isinstance(oauth, m.OAuth2SecurityScheme)
    code = oauth.flows.authorization_code
    assert code is not None
    flows_03 = m.OAuthFlows(
        authorization_code=m.AuthorizationCodeOAuthFlow(
            authorization_url=code.authorization_url,
            token_url=code.token_url,
            refresh_url=code.refresh_url,
            scopes=code.scopes,
        ),
        client_credentials=FLOWS.client_credentials,
        implicit=FLOWS.implicit,
        password=FLOWS.password,
    )
    assert decoded.security_schemes["oauth"] == m.OAuth2SecurityScheme(
        flows=flows_03, oauth2_metadata_url=oauth.oauth2_metadata_url
    )
    assert {k: v for k, v in decoded.security_schemes.items() if k != "oauth"} == {
        k: v for k, v in SCHEMES.items() if k != "oauth"
    }
    assert decoded.security_requirements == CARD.security_requirements
    assert decoded.skills == CARD.skills


def test_card_interfaces() -> None:
    encoded = CODEC.encode_card(CARD)
    assert encoded["protocolVersion"] == "0.3.0"
    assert encoded["url"] == "https://a/rpc"
    assert encoded["preferredTransport"] == "JSONRPC"
    assert encoded["additionalInterfaces"] == [
        {"url": "https://a/rpc", "transport": "JSONRPC"},
        {"url": "https://a/rest", "transport": "HTTP+JSON"},
    ]
    assert encoded["supportsAuthenticatedExtendedCard"] is True
    assert "extendedAgentCard" not in encoded["capabilities"]
    decoded = CODEC.decode_card(encoded)
    assert decoded.supported_interfaces == (
        m.AgentInterface(url="https://a/rpc", protocol_binding="JSONRPC", protocol_version="0.3"),
        m.AgentInterface(
            url="https://a/rest", protocol_binding="HTTP+JSON", protocol_version="0.3"
        ),
    )
    assert decoded.capabilities == CARD.capabilities


def test_card_defaults_and_version_normalisation() -> None:
    wire = {
        "protocolVersion": "0.3.7",
        "name": "n",
        "description": "",
        "url": "https://a",
        "version": "1",
        "capabilities": {},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": [],
        "additionalInterfaces": [
            {"url": "https://a", "transport": "JSONRPC"},
            {"url": "grpc.a:443", "transport": "GRPC"},
        ],
    }
    card = CODEC.decode_card(wire)
    assert card.supported_interfaces == (
        m.AgentInterface(url="https://a", protocol_binding="JSONRPC", protocol_version="0.3"),
        m.AgentInterface(url="grpc.a:443", protocol_binding="GRPC", protocol_version="0.3"),
    )
    assert card.capabilities == m.AgentCapabilities()
    only_1_0 = m.AgentCard(
        name="n",
        description="",
        version="1",
        supported_interfaces=(INTERFACES[0],),
        capabilities=m.AgentCapabilities(),
        default_input_modes=(),
        default_output_modes=(),
        skills=(),
    )
    assert CODEC.encode_card(only_1_0)["url"] == "https://a/v1"  # no 0.x interface: use all


@pytest.mark.parametrize(
    "missing", ["protocolVersion", "name", "description", "url", "capabilities", "skills"]
)
def test_card_required_fields_are_named(missing: str) -> None:
    wire = CODEC.encode_card(CARD)
    del wire[missing]
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode_card(wire)
    assert field_of(raised.value) == missing


def test_card_errors_inside_schemes_are_named() -> None:
    wire = CODEC.encode_card(CARD)
    del wire["securitySchemes"]["oauth"]["flows"]["implicit"]["scopes"]
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode_card(wire)
    assert field_of(raised.value) == "securitySchemes.oauth.flows.implicit.scopes"
    wire["securitySchemes"]["oauth"] = {"type": "oauth3"}
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode_card(wire)
    assert field_of(raised.value) == "securitySchemes.oauth.type"


# --- bad input -----------------------------------------------------------------------------


def _standalone(kind: type[m.Model]) -> Callable[[JSON], object]:
    def decode(document: JSON) -> object:
        return CODEC.decode(kind, document)

    return decode


def _operation(operation: Operation) -> list[Callable[[JSON], object]]:
    def request(document: JSON) -> object:
        return CODEC.decode_request(operation, document)

    def response(document: JSON) -> object:
        return CODEC.decode_response(operation, document)

    return [request, response]


DECODERS: list[Callable[[JSON], object]] = [
    CODEC.decode_event,
    CODEC.decode_card,
    *(_standalone(kind) for kind in MODELS),
    *(decoder for operation in Operation for decoder in _operation(operation)),
]
KEYS = st.sampled_from(
    [
        *("kind", "id", "taskId", "contextId", "messageId", "role", "parts", "text", "file"),
        *("data", "bytes", "uri", "status", "state", "timestamp", "message", "artifact"),
        *("artifacts", "history", "metadata", "url", "schemes", "authentication", "type"),
        *("pushNotificationConfig", "configuration", "flows", "securitySchemes", "skills"),
    ]
)
SCALARS = (
    st.sampled_from(
        [
            *("task", "message", "text", "file", "data", "status-update", "artifact-update"),
            *("user", "working", "canceled", "2025-10-28T10:30:00Z", "YQ==", "", "oauth2"),
            *("0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-05:00", "apiKey"),
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


@pytest.mark.parametrize("kind", [m.Task, m.Message, m.AgentCard, m.SendMessageRequest])
@settings(max_examples=60)
@given(data=st.data())
def test_mutated_documents_raise_only_typed_errors(
    kind: type[m.Model], data: st.DataObject
) -> None:
    document = mutated(CODEC.encode(data.draw(MODELS[kind])), data)
    for decode in DECODERS:
        with contextlib.suppress(A2AError):
            decode(document)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "message"),
        ({"message": None}, "message"),
        ({"message": {"kind": "message", "messageId": "m", "role": "user"}}, "message.parts"),
        (
            {"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{}]}},
            "message.parts[0].kind",
        ),
        (
            {
                "message": {"kind": "message", "messageId": "m", "role": "user", "parts": []},
                "metadata": 1,
            },
            "message.parts",
        ),
        (
            {
                "message": {
                    "kind": "message",
                    "messageId": "m",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "a"}],
                },
                "metadata": 1,
            },
            "metadata",
        ),
    ],
)
def test_a_send_names_the_field_it_refuses(params: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode_request(Operation.SEND_MESSAGE, params)
    assert field_of(raised.value) == field
