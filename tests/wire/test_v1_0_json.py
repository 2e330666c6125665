"""The A2A 1.0 JSON codec: round trips of every model type, strict agreement with the
official `lf.a2a.v1` protobuf definitions (a2a-sdk's json_format), hand-written wire
examples from the reference, and bad input raising only Parley's typed errors.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from a2a.types import a2a_pb2
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from parley import model as m
from parley.protocol.errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
)
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation
from parley.wire.codec_seam import Codec
from parley.wire.json_bytes import JSON
from parley.wire.json_codec import JsonCodec
from parley.wire.limits import Limits, applied
from parley.wire.v1_0 import CODEC
from tests.strategies import Flavor, all_models, json_values
from tests.wire.json_equality import same

MODELS = all_models(Flavor.V1_0)
TYPED: Codec[JSON] = CODEC  # JsonCodec satisfies the Codec protocol (checked by mypy)
ROUND_TRIP = settings(max_examples=75)

# ---------------------------------------------------------------- official definitions

PART_KINDS = (m.TextPart, m.RawPart, m.UrlPart, m.DataPart)
EVENT_KINDS = (m.Task, m.Message, m.TaskStatusUpdateEvent, m.TaskArtifactUpdateEvent)

REQUIRED_DEFAULTS: dict[str, frozenset[str]] = {
    # REQUIRED fields that may hold their default value: the spec emits them, ProtoJSON
    # (MessageToDict) drops them (REFERENCE 2.1).
    "lf.a2a.v1.AgentCard": frozenset(
        {"description", "defaultInputModes", "defaultOutputModes", "skills"}
    ),
    "lf.a2a.v1.AgentSkill": frozenset({"description", "tags"}),
    "lf.a2a.v1.ListTasksResponse": frozenset({"tasks", "nextPageToken", "pageSize", "totalSize"}),
    "lf.a2a.v1.AuthorizationCodeOAuthFlow": frozenset({"scopes"}),
    "lf.a2a.v1.ClientCredentialsOAuthFlow": frozenset({"scopes"}),
    "lf.a2a.v1.DeviceCodeOAuthFlow": frozenset({"scopes"}),
    # Not REQUIRED, but always emitted by Parley: Task.contextId (REFERENCE 4.4) and the
    # configs list of ListTaskPushNotificationConfigsResponse.
    "lf.a2a.v1.Task": frozenset({"contextId"}),
    "lf.a2a.v1.ListTaskPushNotificationConfigsResponse": frozenset({"configs"}),
}


def is_default(value: JSON) -> bool:
    return value in ("", [], {}) or (type(value) is int and value == 0)


def normalized(descriptor: Any, value: JSON) -> JSON:
    """`value` (a message's JSON) without REQUIRED-but-default fields, timestamps parsed."""
    drop = REQUIRED_DEFAULTS.get(descriptor.full_name, frozenset())
    fields = {f.json_name: f for f in descriptor.fields}
    return {
        key: normalized_field(fields[key], item)
        for key, item in value.items()
        if not (key in drop and is_default(item))
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


def assert_official(message_name: str, ours: JSON) -> None:
    """Our JSON parses strictly into the official message and prints back the same."""
    message = getattr(a2a_pb2, message_name)()
    json_format.Parse(orjson.dumps(ours).decode(), message, ignore_unknown_fields=False)
    theirs = json_format.MessageToDict(message)
    descriptor = message.DESCRIPTOR
    expected = normalized(descriptor, ours)
    assert same(normalized(descriptor, theirs), expected), (theirs, expected)


def official_name(kind: type[m.Model]) -> str:
    return "Part" if kind in PART_KINDS else kind.__name__


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("kind", list(MODELS), ids=lambda kind: kind.__name__)
@ROUND_TRIP
@given(data=st.data())
def test_every_model_round_trips_and_matches_the_official_proto(
    kind: type[m.Model], data: st.DataObject
) -> None:
    value = data.draw(MODELS[kind])
    encoded = CODEC.encode(value)
    assert CODEC.decode(kind, encoded) == value
    assert CODEC.decode(kind, orjson.loads(orjson.dumps(encoded))) == value
    assert hasattr(a2a_pb2, official_name(kind))
    assert_official(official_name(kind), encoded)
    if isinstance(value, EVENT_KINDS):
        assert_official("StreamResponse", CODEC.encode_event(value))
        assert CODEC.decode_event(CODEC.encode_event(value)) == value


@pytest.mark.parametrize(
    "operation", [op for op in Operation if not OPERATIONS[op].streaming], ids=str
)
@ROUND_TRIP
@given(data=st.data())
def test_every_response_round_trips_and_matches_the_official_proto(
    operation: Operation, data: st.DataObject
) -> None:
    strategy, name = RESPONSES[operation]
    result = data.draw(strategy)
    encoded = CODEC.encode_response(operation, result)
    assert CODEC.decode_response(operation, orjson.loads(orjson.dumps(encoded))) == result
    if name is not None:
        assert_official(name, encoded)


RESPONSES: dict[Operation, tuple[st.SearchStrategy[Any], str | None]] = {
    Operation.SEND_MESSAGE: (MODELS[m.Task] | MODELS[m.Message], "SendMessageResponse"),
    Operation.GET_TASK: (MODELS[m.Task], "Task"),
    Operation.LIST_TASKS: (MODELS[m.ListTasksResponse], "ListTasksResponse"),
    Operation.CANCEL_TASK: (MODELS[m.Task], "Task"),
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        MODELS[m.TaskPushNotificationConfig],
        "TaskPushNotificationConfig",
    ),
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        MODELS[m.TaskPushNotificationConfig],
        "TaskPushNotificationConfig",
    ),
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        MODELS[m.ListTaskPushNotificationConfigsResponse],
        "ListTaskPushNotificationConfigsResponse",
    ),
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: (st.none(), None),
    Operation.GET_EXTENDED_AGENT_CARD: (MODELS[m.AgentCard], "AgentCard"),
}


@pytest.mark.parametrize("operation", list(Operation), ids=str)
@settings(max_examples=25)
@given(data=st.data())
def test_every_request_round_trips_through_its_operation(
    operation: Operation, data: st.DataObject
) -> None:
    request = data.draw(MODELS[OPERATIONS[operation].request])
    encoded = CODEC.encode_request(operation, request)
    assert encoded == CODEC.encode(request)
    assert CODEC.decode_request(operation, encoded) == request


def test_the_codec_is_the_1_0_json_codec() -> None:
    assert isinstance(CODEC, JsonCodec)
    assert TYPED.version is Version.V1_0


# ---------------------------------------------------------------- the reference example


def test_reference_jsonrpc_example() -> None:
    """REFERENCE 3.3: SendMessage params and the wrapped Task result."""
    params = {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 5},
    }
    request = CODEC.decode_request(Operation.SEND_MESSAGE, params)
    assert request == m.SendMessageRequest(
        message=m.Message(message_id="m-1", role=m.Role.USER, parts=(m.TextPart(text="hi"),)),
        configuration=m.SendMessageConfiguration(
            accepted_output_modes=("text/plain",), history_length=5
        ),
    )
    assert CODEC.encode_request(Operation.SEND_MESSAGE, request) == params
    result = {
        "task": {
            "id": "t-1",
            "contextId": "c-1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-10-28T10:30:00.000Z"},
            "artifacts": [{"artifactId": "a-1", "parts": [{"text": "hello"}]}],
        }
    }
    task = CODEC.decode_response(Operation.SEND_MESSAGE, result)
    assert task == m.Task(
        id="t-1",
        context_id="c-1",
        status=m.TaskStatus(
            state=m.TaskState.COMPLETED, timestamp=datetime(2025, 10, 28, 10, 30, tzinfo=UTC)
        ),
        artifacts=(m.Artifact(artifact_id="a-1", parts=(m.TextPart(text="hello"),)),),
    )
    assert CODEC.encode_response(Operation.SEND_MESSAGE, task) == result
    assert_official("SendMessageRequest", params)
    assert_official("SendMessageResponse", result)


# ---------------------------------------------------------------- agent card security

SCOPES = {"read": "Read access"}
FLOWS = {
    "authorizationCode": m.OAuthFlows(
        authorization_code=m.AuthorizationCodeOAuthFlow(
            authorization_url="https://auth/a",
            token_url="https://auth/t",
            scopes=SCOPES,
            refresh_url="https://auth/r",
            pkce_required=True,
        )
    ),
    "clientCredentials": m.OAuthFlows(
        client_credentials=m.ClientCredentialsOAuthFlow(token_url="https://auth/t", scopes={})
    ),
    "deviceCode": m.OAuthFlows(
        device_code=m.DeviceCodeOAuthFlow(
            device_authorization_url="https://auth/d", token_url="https://auth/t", scopes=SCOPES
        )
    ),
    "implicit": m.OAuthFlows(implicit=m.ImplicitOAuthFlow(authorization_url="https://auth/a")),
    "password": m.OAuthFlows(
        password=m.PasswordOAuthFlow(token_url="https://auth/t", scopes=SCOPES)
    ),
}
SCHEMES: dict[str, m.SecurityScheme] = {
    "key": m.APIKeySecurityScheme(name="X-Api-Key", location="header", description="k"),
    "bearer": m.HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT"),
    "oidc": m.OpenIdConnectSecurityScheme(open_id_connect_url="https://o/.well-known"),
    "mtls": m.MutualTlsSecurityScheme(),
    **{
        f"oauth-{name}": m.OAuth2SecurityScheme(
            flows=flows, oauth2_metadata_url="https://auth/meta"
        )
        for name, flows in FLOWS.items()
    },
}
SECURE_CARD = m.AgentCard(
    name="Secure",
    description="",
    version="1.0.0",
    supported_interfaces=(
        m.AgentInterface(
            url="https://a/rest", protocol_binding="HTTP+JSON", protocol_version="1.0", tenant="t"
        ),
    ),
    capabilities=m.AgentCapabilities(streaming=False),
    default_input_modes=(),
    default_output_modes=("text/plain",),
    skills=(),
    security_schemes=SCHEMES,
    security_requirements=(
        m.SecurityRequirement(schemes={"oauth-authorizationCode": ("read",)}),
        m.SecurityRequirement(schemes={"key": (), "mtls": ()}),
    ),
)


def test_card_with_every_security_scheme_and_flow() -> None:
    encoded = CODEC.encode_card(SECURE_CARD)
    schemes = encoded["securitySchemes"]
    assert schemes["key"] == {
        "apiKeySecurityScheme": {"location": "header", "name": "X-Api-Key", "description": "k"}
    }
    assert schemes["bearer"] == {
        "httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}
    }
    assert schemes["oidc"] == {
        "openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o/.well-known"}
    }
    assert schemes["mtls"] == {"mtlsSecurityScheme": {}}
    assert schemes["oauth-authorizationCode"] == {
        "oauth2SecurityScheme": {
            "flows": {
                "authorizationCode": {
                    "authorizationUrl": "https://auth/a",
                    "tokenUrl": "https://auth/t",
                    "refreshUrl": "https://auth/r",
                    "scopes": SCOPES,
                    "pkceRequired": True,
                }
            },
            "oauth2MetadataUrl": "https://auth/meta",
        }
    }
    flows = {name: schemes[f"oauth-{name}"]["oauth2SecurityScheme"]["flows"] for name in FLOWS}
    assert flows["clientCredentials"] == {
        "clientCredentials": {"tokenUrl": "https://auth/t", "scopes": {}}
    }
    assert flows["deviceCode"] == {
        "deviceCode": {
            "deviceAuthorizationUrl": "https://auth/d",
            "tokenUrl": "https://auth/t",
            "scopes": SCOPES,
        }
    }
    assert flows["implicit"] == {"implicit": {"authorizationUrl": "https://auth/a"}}
    assert flows["password"] == {"password": {"tokenUrl": "https://auth/t", "scopes": SCOPES}}
    assert encoded["securityRequirements"] == [
        {"schemes": {"oauth-authorizationCode": {"list": ["read"]}}},
        {"schemes": {"key": {}, "mtls": {}}},
    ]
    # REQUIRED fields are present even when empty; optional flags set to false stay.
    assert encoded["description"] == ""
    assert encoded["skills"] == []
    assert encoded["defaultInputModes"] == []
    assert encoded["capabilities"] == {"streaming": False}
    assert CODEC.decode_card(encoded) == SECURE_CARD
    assert_official("AgentCard", encoded)


def test_several_flows_encode_only_the_first_in_1_0_order() -> None:
    code = FLOWS["authorizationCode"].authorization_code
    client = FLOWS["clientCredentials"].client_credentials
    device = FLOWS["deviceCode"].device_code
    implicit = FLOWS["implicit"].implicit
    password = FLOWS["password"].password
    every = m.OAuthFlows(
        authorization_code=code,
        client_credentials=client,
        device_code=device,
        implicit=implicit,
        password=password,
    )
    assert list(CODEC.encode(every)) == ["authorizationCode"]
    without_code = m.OAuthFlows(client_credentials=client, implicit=implicit, password=password)
    assert list(CODEC.encode(without_code)) == ["clientCredentials"]
    assert list(CODEC.encode(m.OAuthFlows(implicit=implicit, password=password))) == ["implicit"]
    assert list(CODEC.encode(m.OAuthFlows(device_code=device, password=password))) == ["deviceCode"]


def test_security_oneofs_need_exactly_one_member() -> None:
    two: dict[str, Any] = {"implicit": {}, "password": {}}
    with pytest.raises(InvalidParamsError, match="only one of"):
        CODEC.decode(m.OAuthFlows, two)
    with pytest.raises(InvalidParamsError, match="one of"):
        CODEC.decode(m.OAuthFlows, {})
    card = CODEC.encode_card(SECURE_CARD)
    card["securitySchemes"]["key"]["mtlsSecurityScheme"] = {}
    with pytest.raises(InvalidParamsError, match=r"securitySchemes\.key"):
        CODEC.decode_card(card)


def test_capabilities_keep_explicit_false_and_omit_unset() -> None:
    assert CODEC.encode(m.AgentCapabilities()) == {}
    explicit = m.AgentCapabilities(
        streaming=False, push_notifications=False, extended_agent_card=False
    )
    encoded = CODEC.encode(explicit)
    assert encoded == {"streaming": False, "pushNotifications": False, "extendedAgentCard": False}
    assert CODEC.decode(m.AgentCapabilities, encoded) == explicit
    assert CODEC.decode(m.AgentCapabilities, {"streaming": None}) == m.AgentCapabilities()


# ---------------------------------------------------------------- enums


def test_enum_spellings() -> None:
    names = {
        m.TaskState.UNSPECIFIED: "TASK_STATE_UNSPECIFIED",
        m.TaskState.SUBMITTED: "TASK_STATE_SUBMITTED",
        m.TaskState.WORKING: "TASK_STATE_WORKING",
        m.TaskState.COMPLETED: "TASK_STATE_COMPLETED",
        m.TaskState.FAILED: "TASK_STATE_FAILED",
        m.TaskState.CANCELED: "TASK_STATE_CANCELED",
        m.TaskState.INPUT_REQUIRED: "TASK_STATE_INPUT_REQUIRED",
        m.TaskState.REJECTED: "TASK_STATE_REJECTED",
        m.TaskState.AUTH_REQUIRED: "TASK_STATE_AUTH_REQUIRED",
    }
    for state, name in names.items():
        status = m.TaskStatus(state=state)
        assert CODEC.encode(status) == {"state": name}
        assert CODEC.decode(m.TaskStatus, {"state": name}) == status
        assert CODEC.decode(m.TaskStatus, {"state": int(state)}) == status
    message = m.Message(message_id="m", role=m.Role.AGENT, parts=(m.TextPart(text=""),))
    assert CODEC.encode(message)["role"] == "ROLE_AGENT"
    user = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": ""}]}
    assert CODEC.decode(m.Message, user).role is m.Role.USER
    assert CODEC.decode(m.Message, {**user, "role": 2}).role is m.Role.AGENT


@pytest.mark.parametrize(
    ("kind", "document", "field"),
    [
        (m.TaskStatus, {"state": "TASK_STATE_CANCELLED"}, "state"),
        (m.TaskStatus, {"state": "completed"}, "state"),
        (m.TaskStatus, {"state": 9}, "state"),
        (m.TaskStatus, {"state": True}, "state"),
        (m.TaskStatus, {}, "state"),
        (
            m.Message,
            {"messageId": "m", "role": "ROLE_UNSPECIFIED", "parts": [{"text": ""}]},
            "role",
        ),
        (m.Message, {"messageId": "m", "role": 0, "parts": [{"text": ""}]}, "role"),
        (m.Message, {"messageId": "m", "role": "user", "parts": [{"text": ""}]}, "role"),
    ],
)
def test_unknown_enum_values_are_rejected(
    kind: type[m.Model], document: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode(kind, document)
    assert raised.value.field_violations[0].field == field


# ---------------------------------------------------------------- input leniency


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        ({}, ("", "")),
        ({"contextId": None, "context_id": "c", "task_id": "t"}, ("c", "t")),
        ({"contextId": "", "context_id": "c", "taskId": "", "task_id": None}, ("", "")),
        ({"contextId": "c", "context_id": "d", "taskId": "t", "task_id": "u"}, ("c", "t")),
    ],
)
def test_a_message_reads_its_ids_by_either_name_the_json_one_first(
    ids: dict[str, Any], expected: tuple[str, str]
) -> None:
    """A set JSON name wins, even empty; an absent or null one gives the proto name's."""
    value = {"messageId": "m", "role": 1, "parts": [{"text": "hi"}], **ids}
    message = CODEC.decode(m.Message, value)
    assert (message.context_id, message.task_id, message.role) == (*expected, m.Role.USER)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{}]}}, "message.parts[0]"),
        ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}, "message.parts"),
        ({"message": {"messageId": "m", "role": "user", "parts": [{"text": "a"}]}}, "message.role"),
        ({"message": {"messageId": "m", "role": 1, "parts": [], "taskId": 3}}, "message.taskId"),
        (
            {"message": {"messageId": "m", "role": 1, "parts": [{"text": 1}]}},
            "message.parts[0].text",
        ),
        ({"message": []}, "message"),
        ({"message": None}, "message"),
        (
            {"message": {"messageId": "m", "role": 1, "parts": [{"text": "a"}]}, "tenant": 1},
            "tenant",
        ),
    ],
)
def test_a_send_names_the_field_it_refuses(params: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidParamsError) as raised:
        CODEC.decode_request(Operation.SEND_MESSAGE, params)
    assert raised.value.field_violations[0].field == field


def test_a_lone_part_is_still_held_to_the_parts_limit() -> None:
    params = {"message": {"messageId": "m", "role": 1, "parts": [{"text": "a"}]}}
    with applied(Limits(max_parts=0)), pytest.raises(InvalidParamsError, match="more than 0"):
        CODEC.decode_request(Operation.SEND_MESSAGE, params)


def test_snake_case_input_is_accepted() -> None:
    params = {
        "tenant": "acme",
        "message": {
            "message_id": "m-1",
            "role": "ROLE_USER",
            "context_id": "c-1",
            "task_id": "t-1",
            "reference_task_ids": ["t-0"],
            "parts": [{"raw": "YQ", "media_type": "text/plain", "filename": "a.txt"}],
        },
        "configuration": {
            "accepted_output_modes": ["text/plain"],
            "history_length": 0,
            "return_immediately": True,
            "task_push_notification_config": {
                "url": "https://h/x",
                "authentication": {"scheme": "Bearer"},
            },
        },
    }
    request = CODEC.decode_request(Operation.SEND_MESSAGE, params)
    assert request == m.SendMessageRequest(
        tenant="acme",
        message=m.Message(
            message_id="m-1",
            role=m.Role.USER,
            context_id="c-1",
            task_id="t-1",
            reference_task_ids=("t-0",),
            parts=(m.RawPart(raw=b"a", media_type="text/plain", filename="a.txt"),),
        ),
        configuration=m.SendMessageConfiguration(
            accepted_output_modes=("text/plain",),
            history_length=0,
            return_immediately=True,
            push_notification_config=m.TaskPushNotificationConfig(
                url="https://h/x", authentication=m.AuthenticationInfo(scheme="Bearer")
            ),
        ),
    )
    event = {"status_update": {"task_id": "t", "context_id": "c", "status": {"state": 2}}}
    assert CODEC.decode_event(event) == m.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING)
    )


def test_unknown_fields_are_ignored_and_null_is_absent() -> None:
    document = {
        "messageId": "m",
        "role": "ROLE_USER",
        "parts": [{"text": "a", "kind": "text", "mediaType": None}],
        "kind": "message",
        "contextId": None,
        "metadata": None,
        "somethingNew": {"x": [1, 2]},
    }
    assert CODEC.decode(m.Message, document) == m.Message(
        message_id="m", role=m.Role.USER, parts=(m.TextPart(text="a"),)
    )


def test_rest_query_strings_are_accepted_for_list_tasks() -> None:
    query = {
        "pageSize": "5",
        "historyLength": "0",
        "includeArtifacts": "true",
        "status": "TASK_STATE_WORKING",
        "statusTimestampAfter": "2025-10-28T10:30:00Z",
    }
    assert CODEC.decode_request(Operation.LIST_TASKS, query) == m.ListTasksRequest(
        page_size=5,
        history_length=0,
        include_artifacts=True,
        status=m.TaskState.WORKING,
        status_timestamp_after=datetime(2025, 10, 28, 10, 30, tzinfo=UTC),
    )
    assert CODEC.decode_request(
        Operation.LIST_TASKS, {"includeArtifacts": "false", "status": "3"}
    ) == m.ListTasksRequest(include_artifacts=False, status=m.TaskState.COMPLETED)
    with pytest.raises(InvalidParamsError, match="includeArtifacts"):
        CODEC.decode_request(Operation.LIST_TASKS, {"includeArtifacts": "maybe"})


# ---------------------------------------------------------------- parts and required fields


def test_part_oneof() -> None:
    assert CODEC.decode(m.DataPart, {"data": None}) == m.DataPart(data=None)
    assert CODEC.encode(m.DataPart(data=None)) == {"data": None}
    assert CODEC.decode(m.DataPart, {"data": [1, "x"]}) == m.DataPart(data=[1, "x"])
    assert CODEC.encode(m.RawPart(raw=b"a")) == {"raw": "YQ=="}
    for document in ({"text": "a", "raw": "YQ=="}, {}, {"text": "a", "data": None}):
        with pytest.raises(InvalidParamsError, match="exactly one of"):
            CODEC.decode(m.TextPart, document)
    with pytest.raises(InvalidParamsError, match="expected a text part"):
        CODEC.decode(m.TextPart, {"raw": "YQ=="})


def test_missing_required_fields_are_named() -> None:
    cases: list[tuple[Callable[[], object], str]] = [
        (
            lambda: CODEC.decode_request(
                Operation.SEND_MESSAGE, {"message": {"role": "ROLE_USER", "parts": [{"text": ""}]}}
            ),
            "message.messageId",
        ),
        (
            lambda: CODEC.decode_request(
                Operation.SEND_MESSAGE, {"message": {"messageId": "m", "role": 1, "parts": []}}
            ),
            "message.parts",
        ),
        (
            lambda: CODEC.decode_request(
                Operation.SEND_MESSAGE,
                {"message": {"messageId": "m", "role": 1, "parts": [{"text": ""}, {"raw": 5}]}},
            ),
            "message.parts[1].raw",
        ),
        (lambda: CODEC.decode_request(Operation.SEND_MESSAGE, {}), "message"),
        (lambda: CODEC.decode_request(Operation.GET_TASK, {"id": ""}), "id"),
        (
            lambda: CODEC.decode_request(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, {"id": "c"}),
            "taskId",
        ),
        (lambda: CODEC.decode(m.Task, {"id": "t"}), "status"),
        (lambda: CODEC.decode(m.Task, {"id": "t", "status": {}}), "status.state"),
        (
            lambda: CODEC.decode_event(
                {"artifactUpdate": {"taskId": "t", "contextId": "c", "artifact": {"parts": []}}}
            ),
            "artifactUpdate.artifact.artifactId",
        ),
        (lambda: CODEC.decode_event({"statusUpdate": {"taskId": "t"}}), "statusUpdate.contextId"),
        (lambda: CODEC.decode(m.TaskPushNotificationConfig, {"taskId": "t"}), "url"),
        (
            lambda: CODEC.decode(
                m.TaskPushNotificationConfig, {"url": "https://h", "authentication": {}}
            ),
            "authentication.scheme",
        ),
        (
            lambda: CODEC.decode_card(
                {**CODEC.encode_card(SECURE_CARD), "supportedInterfaces": []}
            ),
            "supportedInterfaces",
        ),
        (
            lambda: CODEC.decode_card(
                {**CODEC.encode_card(SECURE_CARD), "skills": [{"id": "s", "tags": []}]}
            ),
            "skills[0].name",
        ),
        (
            lambda: CODEC.decode(m.AgentInterface, {"url": "https://h", "protocolBinding": "GRPC"}),
            "protocolVersion",
        ),
    ]
    for decode, field in cases:
        with pytest.raises(InvalidParamsError) as raised:
            decode()
        assert raised.value.field_violations[0].field == field
        assert raised.value.message.startswith(field + ":")


def test_required_fields_that_may_be_empty_are_read_when_absent() -> None:
    """ProtoJSON peers (a2a-python's MessageToDict) drop empty REQUIRED values."""
    skill = CODEC.decode(m.AgentSkill, {"id": "s", "name": "S"})
    assert skill == m.AgentSkill(id="s", name="S", description="", tags=())
    card = CODEC.encode_card(SECURE_CARD)
    for key in ("description", "defaultInputModes", "skills"):
        del card[key]
    assert CODEC.decode_card(card) == SECURE_CARD


# ---------------------------------------------------------------- presence rules


def test_list_tasks_response_on_the_last_page() -> None:
    last = m.ListTasksResponse(tasks=(), next_page_token="", page_size=0, total_size=0)
    encoded = CODEC.encode_response(Operation.LIST_TASKS, last)
    assert encoded == {"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}
    assert CODEC.decode_response(Operation.LIST_TASKS, encoded) == last


def test_optional_request_fields_are_emitted_iff_set() -> None:
    assert CODEC.encode(m.ListTasksRequest()) == {}
    zeros = m.ListTasksRequest(page_size=0, history_length=0, include_artifacts=False)
    assert CODEC.encode(zeros) == {"pageSize": 0, "historyLength": 0, "includeArtifacts": False}
    assert CODEC.encode(m.GetTaskRequest(id="t", history_length=0)) == {
        "id": "t",
        "historyLength": 0,
    }


def test_1_0_requests_without_metadata_drop_it() -> None:
    meta = {"k": "v"}
    assert CODEC.encode(m.GetTaskRequest(id="t", metadata=meta)) == {"id": "t"}
    assert CODEC.encode(m.SubscribeToTaskRequest(id="t", metadata=meta, tenant="x")) == {
        "tenant": "x",
        "id": "t",
    }
    assert CODEC.encode(m.CancelTaskRequest(id="t", metadata=meta)) == {"id": "t", "metadata": meta}


def test_message_fields_are_emitted_iff_set() -> None:
    task = m.Task(
        id="t", context_id="", status=m.TaskStatus(state=m.TaskState.WORKING), metadata={}
    )
    assert CODEC.encode(task) == {
        "id": "t",
        "contextId": "",
        "status": {"state": "TASK_STATE_WORKING"},
        "metadata": {},
    }


def test_timestamps_are_utc_with_milliseconds() -> None:
    status = m.TaskStatus(
        state=m.TaskState.WORKING, timestamp=datetime(2025, 10, 28, 10, 30, 0, 5000, tzinfo=UTC)
    )
    assert CODEC.encode(status)["timestamp"] == "2025-10-28T10:30:00.005Z"
    moved = CODEC.decode(m.TaskStatus, {"state": 2, "timestamp": "2025-10-28T12:30:00.005+02:00"})
    assert moved == status
    with pytest.raises(InvalidParamsError, match="timestamp"):
        CODEC.decode(m.TaskStatus, {"state": 2, "timestamp": "0001-01-01T00:00:00+01:00"})


# ---------------------------------------------------------------- unary-only and empty


def test_empty_and_absent_payloads() -> None:
    delete = Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG
    assert CODEC.encode_response(delete, None) == {}
    assert CODEC.decode_response(delete, {}) is None
    assert CODEC.decode_response(delete, None) is None
    card = Operation.GET_EXTENDED_AGENT_CARD
    assert CODEC.decode_request(card, None) == m.GetExtendedAgentCardRequest()
    assert CODEC.decode_request(card, {"tenant": "t"}) == m.GetExtendedAgentCardRequest(tenant="t")
    assert CODEC.encode_request(card, m.GetExtendedAgentCardRequest()) == {}
    with pytest.raises(InvalidParamsError, match="expected a JSON object"):
        CODEC.decode_request(Operation.GET_TASK, None)


def test_streaming_operations_answer_with_events() -> None:
    task = m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING))
    for operation in (Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK):
        with pytest.raises(InternalError):
            CODEC.encode_response(operation, task)
        assert CODEC.decode_response(operation, CODEC.encode_event(task)) == task


def test_encoding_the_wrong_type_is_an_internal_error() -> None:
    with pytest.raises(InternalError):
        CODEC.encode_request(Operation.GET_TASK, m.CancelTaskRequest(id="t"))
    with pytest.raises(InternalError):
        CODEC.encode_response(Operation.GET_TASK, m.CancelTaskRequest(id="t"))


# ---------------------------------------------------------------- bad input

JSON_DOCUMENTS: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "x", "YQ==", "TASK_STATE_WORKING", "ROLE_USER", "2025-10-28T10:30:00Z"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "text",
                    "raw",
                    "data",
                    "parts",
                    "messageId",
                    "role",
                    "id",
                    "status",
                    "state",
                    "task",
                ]
            )
            | st.text(max_size=4),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)

DECODERS: list[Callable[[Any], object]] = [
    CODEC.decode_event,
    CODEC.decode_card,
    *[lambda doc, kind=kind: CODEC.decode(kind, doc) for kind in MODELS],
    *[lambda doc, op=op: CODEC.decode_request(op, doc) for op in Operation],
    *[lambda doc, op=op: CODEC.decode_response(op, doc) for op in Operation],
]


def feed(document: Any) -> None:
    for decode in DECODERS:
        with contextlib.suppress(A2AError):
            decode(document)


@settings(max_examples=500)
@given(document=JSON_DOCUMENTS)
def test_arbitrary_json_raises_only_typed_errors(document: Any) -> None:
    feed(document)


@settings(max_examples=300)
@given(data=st.data())
def test_mutated_encodings_raise_only_typed_errors(data: st.DataObject) -> None:
    kinds: list[type[m.Model]] = [m.Task, m.Message, m.AgentCard, m.SendMessageRequest]
    kind = data.draw(st.sampled_from(kinds))
    document = CODEC.encode(data.draw(MODELS[kind]))
    target = document
    for _ in range(data.draw(st.integers(0, 3))):
        children = list(target.items()) if type(target) is dict else list(enumerate(target))
        containers = [(key, v) for key, v in children if type(v) in (dict, list) and v]
        if not containers:
            break
        _, target = data.draw(st.sampled_from(containers))
    if type(target) is dict and target:
        key = data.draw(st.sampled_from(sorted(target)))
        target[key] = data.draw(JSON_DOCUMENTS | json_values)
    elif type(target) is list and target:
        target[data.draw(st.integers(0, len(target) - 1))] = data.draw(JSON_DOCUMENTS)
    feed(document)


def test_the_official_check_is_strict() -> None:
    """The comparison above would catch a stray member, a wrong value or a dropped field."""
    with pytest.raises(json_format.ParseError):
        assert_official("Part", {"kind": "text", "text": "a"})
    with pytest.raises(json_format.ParseError):
        assert_official("Task", {"id": "t", "status": {"state": "TASK_STATE_CANCELLED"}})
    with pytest.raises(AssertionError):
        assert_official(
            "Message",
            {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": ""}], "extensions": []},
        )
    with pytest.raises(AssertionError):
        assert_official("TaskStatus", {"state": "TASK_STATE_WORKING", "message": None})
    with pytest.raises(AssertionError):  # a default value where ProtoJSON omits it
        assert_official("Artifact", {"artifactId": "a", "parts": [{"url": "u"}], "name": ""})
    assert not same(True, 1.0)
    assert same({"n": 1}, {"n": 1.0})


# ---------------------------------------------------------------- reference cards

SAMPLE_CARD: dict[str, Any] = {  # REFERENCE 5.8 (the signature value filled in)
    "name": "Route Planner",
    "description": "Plans routes.",
    "version": "1.2.0",
    "supportedInterfaces": [
        {
            "url": "https://agent.example.com/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        },
        {
            "url": "https://agent.example.com/rest",
            "protocolBinding": "HTTP+JSON",
            "tenant": "acme",
            "protocolVersion": "1.0",
        },
        {"url": "grpc.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    ],
    "provider": {"url": "https://example.com", "organization": "Example Inc."},
    "capabilities": {"streaming": True, "pushNotifications": True, "extendedAgentCard": True},
    "securitySchemes": {
        "oidc": {
            "openIdConnectSecurityScheme": {
                "openIdConnectUrl": "https://accounts.example.com/.well-known/openid-configuration"
            }
        }
    },
    "securityRequirements": [{"schemes": {"oidc": {"list": ["openid", "profile"]}}}],
    "defaultInputModes": ["text/plain", "application/json"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "route", "name": "Route", "description": "Plan a route", "tags": ["maps"]}],
    "signatures": [
        {
            "protected": "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJrZXktMSJ9",
            "signature": "c2ln",
        }
    ],
}


def test_reference_sample_card_round_trips() -> None:
    card = CODEC.decode_card(SAMPLE_CARD)
    assert card.supported_interfaces[1].tenant == "acme"
    assert card.security_requirements == (
        m.SecurityRequirement(schemes={"oidc": ("openid", "profile")}),
    )
    assert CODEC.encode_card(card) == SAMPLE_CARD
    assert_official("AgentCard", SAMPLE_CARD)


def test_hybrid_card_reads_as_its_1_0_projection() -> None:
    """REFERENCE 5.9: 0.3 legacy members next to the 1.0 ones are ignored."""
    hybrid = {
        **SAMPLE_CARD,
        "securitySchemes": {
            "bearer": {
                "httpAuthSecurityScheme": {"scheme": "Bearer"},
                "type": "http",
                "scheme": "Bearer",
            }
        },
        "securityRequirements": [{"schemes": {"bearer": {}}}],
        "protocolVersion": "0.3",
        "url": "https://agent.example.com/a2a",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": "https://agent.example.com/rest03", "transport": "HTTP"}],
        "supportsAuthenticatedExtendedCard": True,
        "security": [{"bearer": []}],
    }
    card = CODEC.decode_card(hybrid)
    assert card.security_schemes == {"bearer": m.HTTPAuthSecurityScheme(scheme="Bearer")}
    assert card.security_requirements == (m.SecurityRequirement(schemes={"bearer": ()}),)
    assert card.name == "Route Planner"
