"""The cross-version corpus: hand-written 0.3 and 1.0 payloads, and what is lost between them.

Every case in `tests/corpus/*.json` holds one payload in both wire forms: `v0_3` (the 0.3
JSON-RPC schema, REFERENCE §2.2, §3.4) and `v1_0` (ProtoJSON of `lf.a2a.v1`, REFERENCE §2.1,
§3.3). The corpus is checked three ways:

* each 0.3 payload is valid against `spec/a2a-v0.3.schema.json`, each 1.0 payload parses
  strictly (unknown fields refused) as the matching `lf.a2a.v1` message;
* 0.3 → model → 1.0 → model → 0.3 gives back the 0.3 payload exactly, through the 1.0
  payload exactly (and the other way round): the conversion checklist of REFERENCE §12;
* the corpus covers every part kind, task state, event, operation and security scheme.

What one version cannot express has its own explicit test below, payload in, payload out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from a2a.types import a2a_pb2
from google.protobuf import empty_pb2, json_format
from jsonschema import Draft7Validator

from parley.model import (
    AgentCard,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Model,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import A2AError
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation
from parley.wire.codec_seam import Codec
from parley.wire.v0_3.jsonrpc_codec import CODEC as V03
from parley.wire.v1_0.protojson_codec import CODEC as V10

JSON = Any
"""A parsed JSON value."""

ROOT = Path(__file__).parents[2]
CORPUS = ROOT / "tests" / "corpus"
TS = "2025-10-28T10:30:00.000Z"

MODEL_FORMS: dict[str, type[Model]] = {
    "Message": Message,
    "Task": Task,
    "TaskPushNotificationConfig": TaskPushNotificationConfig,
}
"""Corpus forms read with `Codec.decode`; the others are request, response, event, card."""


@dataclass(frozen=True, slots=True)
class Case:
    """One corpus entry: the same value in both wire forms."""

    file: str
    name: str
    form: str
    operation: Operation | None
    v0_3: JSON
    v1_0: JSON

    @property
    def id(self) -> str:
        return f"{self.file}:{self.name}"


def _load() -> tuple[Case, ...]:
    cases = []
    for path in sorted(CORPUS.glob("*.json")):
        for raw in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            operation = raw.get("operation")
            cases.append(
                Case(
                    file=path.stem,
                    name=raw["name"],
                    form=raw["form"],
                    operation=Operation(operation) if operation else None,
                    v0_3=raw["v0_3"],
                    v1_0=raw["v1_0"],
                )
            )
    return tuple(cases)


CASES = _load()


def _cases(*forms: str) -> list[Any]:
    return [pytest.param(c, id=c.id) for c in CASES if not forms or c.form in forms]


# --- codec plumbing -------------------------------------------------------------------


def _operation(case: Case) -> Operation:
    assert case.operation is not None, f"{case.id}: a {case.form} case needs an operation"
    return case.operation


def decode(codec: Codec[JSON], case: Case, payload: JSON) -> object:
    """Read a corpus payload with the codec entry point its form calls for."""
    if case.form == "request":
        return codec.decode_request(_operation(case), payload)
    if case.form == "response":
        return codec.decode_response(_operation(case), payload)
    if case.form == "event":
        return codec.decode_event(payload)
    if case.form == "card":
        return codec.decode_card(payload)
    return codec.decode(MODEL_FORMS[case.form], payload)


def encode(codec: Codec[JSON], case: Case, value: object) -> JSON:
    """Write a model value with the codec entry point the case's form calls for."""
    if case.form == "request":
        assert isinstance(value, Model)
        return codec.encode_request(_operation(case), value)
    if case.form == "response":
        return codec.encode_response(_operation(case), value)
    if case.form == "event":
        assert isinstance(value, Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent)
        return codec.encode_event(value)
    if case.form == "card":
        assert isinstance(value, AgentCard)
        return codec.encode_card(value)
    assert isinstance(value, MODEL_FORMS[case.form])
    assert isinstance(value, Model)
    return codec.encode(value)


def canonical(value: JSON) -> str:
    """JSON text that tells `true` from `1` and `1` from `1.0` (Python's == does not)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def assert_json(actual: JSON, expected: JSON) -> None:
    assert actual == expected
    assert canonical(actual) == canonical(expected)


# --- the corpus is valid in both versions ---------------------------------------------

SCHEMA_03: dict[str, JSON] = json.loads(
    (ROOT / "spec" / "a2a-v0.3.schema.json").read_text(encoding="utf-8")
)

SCHEMA_03_NAMES: dict[Operation, tuple[str, str | None]] = {
    Operation.SEND_MESSAGE: ("SendMessageRequest", "SendMessageSuccessResponse"),
    Operation.SEND_STREAMING_MESSAGE: ("SendStreamingMessageRequest", None),
    Operation.GET_TASK: ("GetTaskRequest", "GetTaskSuccessResponse"),
    Operation.CANCEL_TASK: ("CancelTaskRequest", "CancelTaskSuccessResponse"),
    Operation.SUBSCRIBE_TO_TASK: ("TaskResubscriptionRequest", None),
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        "SetTaskPushNotificationConfigRequest",
        "SetTaskPushNotificationConfigSuccessResponse",
    ),
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        "GetTaskPushNotificationConfigRequest",
        "GetTaskPushNotificationConfigSuccessResponse",
    ),
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        "ListTaskPushNotificationConfigRequest",
        "ListTaskPushNotificationConfigSuccessResponse",
    ),
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: (
        "DeleteTaskPushNotificationConfigRequest",
        "DeleteTaskPushNotificationConfigSuccessResponse",
    ),
    Operation.GET_EXTENDED_AGENT_CARD: (
        "GetAuthenticatedExtendedCardRequest",
        "GetAuthenticatedExtendedCardSuccessResponse",
    ),
}
"""The 0.3 schema definition of each operation's JSON-RPC request and success response."""


def _schema_errors(definition: str, instance: JSON) -> list[str]:
    schema = {"$ref": f"#/definitions/{definition}", "definitions": SCHEMA_03["definitions"]}
    validator = Draft7Validator(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


def _v03_schema_instance(case: Case) -> tuple[str, JSON]:
    """The schema definition a 0.3 corpus payload must satisfy, and the instance to check."""
    if case.form in MODEL_FORMS:
        return case.form, case.v0_3
    if case.form == "card":
        return "AgentCard", case.v0_3
    if case.form == "event":
        return "SendStreamingMessageSuccessResponse", {
            "jsonrpc": "2.0",
            "id": 1,
            "result": case.v0_3,
        }
    operation = _operation(case)
    request_name, response_name = SCHEMA_03_NAMES[operation]
    if case.form == "request":
        envelope = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": OPERATIONS[operation].bindings[Version.V0_3].jsonrpc_method,
        }
        if case.v0_3 is not None:
            envelope["params"] = case.v0_3
        return request_name, envelope
    assert response_name is not None
    return response_name, {"jsonrpc": "2.0", "id": 1, "result": case.v0_3}


@pytest.mark.parametrize("case", _cases())
def test_v03_payload_is_valid_against_the_03_schema(case: Case) -> None:
    """Every hand-written 0.3 payload is valid 0.3 JSON-RPC (REFERENCE §2.2, §3.4)."""
    definition, instance = _v03_schema_instance(case)
    assert _schema_errors(definition, instance) == []


V10_REQUESTS: dict[Operation, str] = {
    Operation.SEND_MESSAGE: "SendMessageRequest",
    Operation.SEND_STREAMING_MESSAGE: "SendMessageRequest",
    Operation.GET_TASK: "GetTaskRequest",
    Operation.CANCEL_TASK: "CancelTaskRequest",
    Operation.SUBSCRIBE_TO_TASK: "SubscribeToTaskRequest",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "TaskPushNotificationConfig",
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: "GetTaskPushNotificationConfigRequest",
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: "ListTaskPushNotificationConfigsRequest",
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: "DeleteTaskPushNotificationConfigRequest",
    Operation.GET_EXTENDED_AGENT_CARD: "GetExtendedAgentCardRequest",
}
V10_RESPONSES: dict[Operation, str] = {
    Operation.SEND_MESSAGE: "SendMessageResponse",
    Operation.GET_TASK: "Task",
    Operation.CANCEL_TASK: "Task",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "TaskPushNotificationConfig",
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: "TaskPushNotificationConfig",
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: "ListTaskPushNotificationConfigsResponse",
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: "Empty",
    Operation.GET_EXTENDED_AGENT_CARD: "AgentCard",
}
"""The `lf.a2a.v1` message of each operation's request and response (REFERENCE §3.3)."""


def _v10_message_name(case: Case) -> str:
    if case.form in MODEL_FORMS:
        return case.form
    if case.form == "card":
        return "AgentCard"
    if case.form == "event":
        return "StreamResponse"
    table = V10_REQUESTS if case.form == "request" else V10_RESPONSES
    return table[_operation(case)]


@pytest.mark.parametrize("case", _cases())
def test_v10_payload_is_strict_protojson(case: Case) -> None:
    """Every hand-written 1.0 payload parses as its `lf.a2a.v1` message, unknown fields
    refused (REFERENCE §2.1): the corpus speaks the proto, not a guess of it."""
    name = _v10_message_name(case)
    message = empty_pb2.Empty() if name == "Empty" else getattr(a2a_pb2, name)()
    json_format.ParseDict(case.v1_0, message, ignore_unknown_fields=False)


# --- the round trips ------------------------------------------------------------------


@pytest.mark.parametrize("case", _cases())
def test_03_to_10_and_back(case: Case) -> None:
    """0.3 → model → 1.0 → model → 0.3 is the identity, and the 1.0 leg is the hand-written
    1.0 payload (REFERENCE §12)."""
    model = decode(V03, case, case.v0_3)
    as_10 = encode(V10, case, model)
    assert_json(as_10, case.v1_0)
    model_again = decode(V10, case, as_10)
    assert model_again == model
    assert_json(encode(V03, case, model_again), case.v0_3)


@pytest.mark.parametrize("case", _cases())
def test_10_to_03_and_back(case: Case) -> None:
    """1.0 → model → 0.3 → model → 1.0 is the identity for everything 0.3 can express, and
    the 0.3 leg is the hand-written 0.3 payload (REFERENCE §12)."""
    model = decode(V10, case, case.v1_0)
    as_03 = encode(V03, case, model)
    assert_json(as_03, case.v0_3)
    model_again = decode(V03, case, as_03)
    assert model_again == model
    assert_json(encode(V10, case, model_again), case.v1_0)


@pytest.mark.parametrize("case", _cases())
def test_both_forms_read_as_one_model(case: Case) -> None:
    """The two wire forms of a case are one model value: one internal model, two wire
    versions (REFERENCE §12)."""
    assert decode(V03, case, case.v0_3) == decode(V10, case, case.v1_0)


# --- the corpus covers what the acceptance criterion names ----------------------------


def _walk(value: JSON) -> Iterator[dict[str, JSON]]:
    """Every JSON object inside a value, depth first."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def _objects_03(*forms: str) -> list[dict[str, JSON]]:
    return [obj for c in CASES if not forms or c.form in forms for obj in _walk(c.v0_3)]


def test_corpus_covers_every_part_kind_and_message_field() -> None:
    """REFERENCE §4.2, §4.3: text, file bytes, file uri, data; both roles; every optional
    message field."""
    objects = _objects_03()
    kinds = {o["kind"] for o in objects if "kind" in o}
    assert {"text", "file", "data", "message", "task", "status-update", "artifact-update"} <= kinds
    files = [o["file"] for o in objects if o.get("kind") == "file"]
    assert any("bytes" in f for f in files)
    assert any("uri" in f for f in files)
    assert any("name" in f and "mimeType" in f for f in files)
    messages = [o for o in objects if o.get("kind") == "message"]
    assert {m["role"] for m in messages} == {"user", "agent"}
    for key in ("referenceTaskIds", "extensions", "metadata", "contextId", "taskId"):
        assert any(key in m for m in messages), key


EVERY_STATE = {
    "submitted",
    "working",
    "completed",
    "failed",
    "canceled",
    "input-required",
    "rejected",
    "auth-required",
}


def test_corpus_covers_every_state_and_event() -> None:
    """REFERENCE §4.1, §4.5: every task state as a task and as a status update; artifact
    updates with every combination of append and lastChunk."""
    tasks = [c.v0_3 for c in CASES if c.form == "Task"]
    assert {t["status"]["state"] for t in tasks} == EVERY_STATE
    assert any("history" in t and "artifacts" in t and "metadata" in t for t in tasks)
    events = [c.v0_3 for c in CASES if c.form == "event"]
    updates = [e for e in events if e["kind"] == "status-update"]
    assert {e["status"]["state"] for e in updates} == EVERY_STATE
    chunks = {
        (e.get("append", False), e.get("lastChunk", False))
        for e in events
        if e["kind"] == "artifact-update"
    }
    assert chunks == {(False, False), (True, False), (True, True), (False, True)}
    assert {e["kind"] for e in events} == {"task", "message", "status-update", "artifact-update"}


def test_corpus_covers_every_03_operation() -> None:
    """REFERENCE §3.4: the request of every operation 0.3 has, the response of every unary
    one (streams answer with events, covered above)."""
    with_03 = {op for op, spec in OPERATIONS.items() if Version.V0_3 in spec.bindings}
    unary = {op for op in with_03 if not OPERATIONS[op].streaming}
    assert {c.operation for c in CASES if c.form == "request"} == with_03
    assert {c.operation for c in CASES if c.form == "response"} == unary
    send = [c.v0_3 for c in CASES if c.operation is Operation.SEND_MESSAGE and c.form == "request"]
    configs = [s["configuration"] for s in send if "configuration" in s]
    assert {"acceptedOutputModes", "historyLength", "pushNotificationConfig", "blocking"} <= {
        key for config in configs for key in config
    }
    assert {config.get("blocking") for config in configs} >= {True, False}


def test_corpus_covers_every_security_scheme_and_card_feature() -> None:
    """REFERENCE §5.2-§5.7: every 0.3 scheme type, apiKey location and OAuth flow; security
    on the card and on skills; extensions, provider, signatures; several interfaces."""
    extended = Operation.GET_EXTENDED_AGENT_CARD
    cards = [
        c.v0_3
        for c in CASES
        if c.form == "card" or (c.form == "response" and c.operation is extended)
    ]
    schemes = [s for card in cards for s in card.get("securitySchemes", {}).values()]
    assert {s["type"] for s in schemes} == {
        "apiKey",
        "http",
        "oauth2",
        "openIdConnect",
        "mutualTLS",
    }
    assert {s["in"] for s in schemes if s["type"] == "apiKey"} == {"header", "query", "cookie"}
    assert {s["scheme"].lower() for s in schemes if s["type"] == "http"} >= {"bearer"}
    flows = {flow for s in schemes if s["type"] == "oauth2" for flow in s["flows"]}
    assert flows == {"authorizationCode", "clientCredentials", "implicit", "password"}
    assert any(card.get("security") for card in cards)
    assert any(skill.get("security") for card in cards for skill in card["skills"])
    assert any(card["capabilities"].get("extensions") for card in cards)
    assert any("provider" in card and "signatures" in card for card in cards)
    assert any(len(card.get("additionalInterfaces", ())) > 2 for card in cards)
    pushes = _objects_03("TaskPushNotificationConfig", "request", "response")
    assert any("authentication" in o and "credentials" in o["authentication"] for o in pushes)


# --- what 0.3 cannot express: defined, exactly ----------------------------------------


def _message_03(*parts: JSON) -> JSON:
    return {"kind": "message", "messageId": "m-1", "role": "user", "parts": list(parts)}


def _message_10(*parts: JSON) -> JSON:
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": list(parts)}


def _via_03(kind: type[Model], payload_10: JSON) -> tuple[JSON, JSON]:
    """1.0 payload → model → 0.3 payload → model → 1.0 payload: both outputs."""
    as_03 = V03.encode(V10.decode(kind, payload_10))
    return as_03, V10.encode(V03.decode(kind, as_03))


def test_text_part_media_type_and_filename_are_dropped() -> None:
    """A 0.3 TextPart has no mediaType or filename: they are dropped going to 0.3; the text
    and metadata stay (REFERENCE §4.2)."""
    part = {"text": "# Title", "mediaType": "text/markdown", "filename": "notes.md"}
    as_03, back = _via_03(Message, _message_10(part | {"metadata": {"k": "v"}}))
    assert_json(as_03, _message_03({"kind": "text", "text": "# Title", "metadata": {"k": "v"}}))
    assert_json(back, _message_10({"text": "# Title", "metadata": {"k": "v"}}))


def test_data_part_media_type_and_filename_are_dropped() -> None:
    """A 0.3 DataPart has no mediaType or filename either (REFERENCE §4.2)."""
    part = {"data": {"a": 1}, "mediaType": "application/json", "filename": "a.json"}
    as_03, back = _via_03(Message, _message_10(part))
    assert_json(as_03, _message_03({"kind": "data", "data": {"a": 1}}))
    assert_json(back, _message_10({"data": {"a": 1}}))


@pytest.mark.parametrize(
    "value",
    ["plain string", "", 42, 0, 1.5, True, False, None, [1, "two", None, {"three": 3}], []],
    ids=repr,
)
def test_data_part_that_is_not_an_object_is_wrapped(value: JSON) -> None:
    """A 1.0 data part may hold any JSON value, a 0.3 DataPart only an object: a non-object
    becomes `{"value": <value>}` in 0.3, and stays wrapped when read back (REFERENCE §2.2,
    §4.2)."""
    as_03, back = _via_03(Message, _message_10({"data": value, "metadata": {"k": 1}}))
    wrapped = {"kind": "data", "data": {"value": value}, "metadata": {"k": 1}}
    assert_json(as_03, _message_03(wrapped))
    assert_json(back, _message_10({"data": {"value": value}, "metadata": {"k": 1}}))


def _status_update_03(state: str, final: bool) -> JSON:
    return {
        "kind": "status-update",
        "taskId": "task-1",
        "contextId": "ctx-1",
        "status": {"state": state, "timestamp": TS},
        "final": final,
    }


@pytest.mark.parametrize(
    ("state", "final"),
    [
        ("submitted", False),
        ("working", False),
        ("completed", True),
        ("failed", True),
        ("canceled", True),
        ("rejected", True),
        ("input-required", True),
        ("auth-required", True),
    ],
)
def test_final_is_derived_from_the_state(state: str, final: bool) -> None:
    """1.0 has no `final`: the 0.3 encoder derives it (true iff the state is terminal or
    interrupted) and the 0.3 decoder ignores what it is sent (REFERENCE §4.5, §12.5)."""
    for sent in (True, False):
        event = V03.decode_event(_status_update_03(state, sent))
        assert_json(V03.encode_event(event), _status_update_03(state, final))
        v10 = V10.encode_event(event)
        assert "final" not in v10["statusUpdate"]
        assert_json(V03.encode_event(V10.decode_event(v10)), _status_update_03(state, final))


def test_03_blocking_absent_means_blocking() -> None:
    """0.3 `blocking` absent blocks (a2a-python 0.3 JSON-RPC, REFERENCE §8.3): it reads as
    `returnImmediately` false, which 1.0 leaves out and 0.3 writes as `blocking: true`
    (REFERENCE §12.6)."""
    op = Operation.SEND_MESSAGE
    send_03 = {
        "message": _message_03({"kind": "text", "text": "hi"}),
        "configuration": {"acceptedOutputModes": ["text/plain"]},
    }
    as_10 = V10.encode_request(op, V03.decode_request(op, send_03))
    assert_json(
        as_10,
        {
            "message": _message_10({"text": "hi"}),
            "configuration": {"acceptedOutputModes": ["text/plain"]},
        },
    )
    assert_json(
        V03.encode_request(op, V10.decode_request(op, as_10)),
        send_03 | {"configuration": {"acceptedOutputModes": ["text/plain"], "blocking": True}},
    )


def test_unknown_state_is_unspecified() -> None:
    """0.3 `unknown` ⇄ 1.0 `TASK_STATE_UNSPECIFIED` (REFERENCE §4.1, §12.1). A server never
    produces it; a client may still read it from a 0.3 peer."""
    task_03 = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "unknown"}}
    task_10 = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_UNSPECIFIED"}}
    assert_json(V10.encode(V03.decode(Task, task_03)), task_10)
    assert_json(V03.encode(V10.decode(Task, task_10)), task_03)


def test_extra_authentication_schemes_are_dropped() -> None:
    """0.3 lists authentication schemes, 1.0 has one: `schemes[0]` is kept (REFERENCE §4.6,
    §12.6), in a push config and in a send configuration."""
    config_03 = {
        "url": "https://client.example.com/hook",
        "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "c"},
    }
    kept_03 = config_03 | {"authentication": {"schemes": ["Bearer"], "credentials": "c"}}
    flat_10 = {
        "url": "https://client.example.com/hook",
        "authentication": {"scheme": "Bearer", "credentials": "c"},
    }
    op = Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG
    request = V03.decode_request(op, {"taskId": "t-1", "pushNotificationConfig": config_03})
    as_10 = V10.encode_request(op, request)
    assert_json(as_10, {"taskId": "t-1"} | flat_10)
    assert_json(
        V03.encode_request(op, V10.decode_request(op, as_10)),
        {"taskId": "t-1", "pushNotificationConfig": kept_03},
    )

    op = Operation.SEND_MESSAGE
    send_03 = {
        "message": _message_03({"kind": "text", "text": "hi"}),
        "configuration": {"pushNotificationConfig": config_03, "blocking": True},
    }
    as_10 = V10.encode_request(op, V03.decode_request(op, send_03))
    assert_json(
        as_10,
        {
            "message": _message_10({"text": "hi"}),
            "configuration": {"taskPushNotificationConfig": flat_10},
        },
    )
    assert_json(
        V03.encode_request(op, V10.decode_request(op, as_10)),
        send_03 | {"configuration": {"pushNotificationConfig": kept_03, "blocking": True}},
    )


def test_inline_push_config_task_id_and_tenant_are_dropped() -> None:
    """The push config inside a 1.0 send configuration is a TaskPushNotificationConfig
    (taskId and tenant SHOULD be empty); 0.3's PushNotificationConfig has neither
    (REFERENCE §3.3, §4.6)."""
    op = Operation.SEND_MESSAGE
    send_10 = {
        "message": _message_10({"text": "hi"}),
        "configuration": {
            "taskPushNotificationConfig": {
                "tenant": "acme",
                "taskId": "t-1",
                "id": "cfg-1",
                "url": "https://client.example.com/hook",
            }
        },
    }
    as_03 = V03.encode_request(op, V10.decode_request(op, send_10))
    assert_json(
        as_03,
        {
            "message": _message_03({"kind": "text", "text": "hi"}),
            "configuration": {
                "pushNotificationConfig": {"id": "cfg-1", "url": "https://client.example.com/hook"},
                "blocking": True,
            },
        },
    )
    assert_json(
        V10.encode_request(op, V03.decode_request(op, as_03)),
        {
            "message": _message_10({"text": "hi"}),
            "configuration": {
                "taskPushNotificationConfig": {
                    "id": "cfg-1",
                    "url": "https://client.example.com/hook",
                }
            },
        },
    )


def test_push_get_legacy_form_means_the_config_named_after_the_task() -> None:
    """0.3 may ask tasks/pushNotificationConfig/get with the task id only: that is the
    config whose id is the task id (REFERENCE §3.4, §9.1, §12.7)."""
    op = Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG
    as_10 = V10.encode_request(op, V03.decode_request(op, {"id": "task-1"}))
    assert_json(as_10, {"taskId": "task-1", "id": "task-1"})
    assert_json(
        V03.encode_request(op, V10.decode_request(op, as_10)),
        {"id": "task-1", "pushNotificationConfigId": "task-1"},
    )


def test_push_list_paging_is_dropped() -> None:
    """0.3 lists push configs in one bare array: 1.0's pageSize, pageToken and
    nextPageToken have no 0.3 form (REFERENCE §3.3, §3.4, §12.7)."""
    op = Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS
    request_10 = {"taskId": "task-1", "pageSize": 10, "pageToken": "page-2"}
    as_03 = V03.encode_request(op, V10.decode_request(op, request_10))
    assert_json(as_03, {"id": "task-1"})
    assert_json(V10.encode_request(op, V03.decode_request(op, as_03)), {"taskId": "task-1"})

    config_10 = {"taskId": "task-1", "id": "cfg-1", "url": "https://client.example.com/hook"}
    config_03 = {
        "taskId": "task-1",
        "pushNotificationConfig": {"id": "cfg-1", "url": "https://client.example.com/hook"},
    }
    response = V10.decode_response(op, {"configs": [config_10], "nextPageToken": "page-3"})
    assert response == ListTaskPushNotificationConfigsResponse(
        configs=(V10.decode(TaskPushNotificationConfig, config_10),), next_page_token="page-3"
    )
    as_03 = V03.encode_response(op, response)
    assert_json(as_03, [config_03])
    assert_json(V10.encode_response(op, V03.decode_response(op, as_03)), {"configs": [config_10]})


TENANT_CASES: list[tuple[Operation, JSON, JSON]] = [
    (
        Operation.SEND_MESSAGE,
        {"tenant": "acme", "message": _message_10({"text": "hi"})},
        {"message": _message_03({"kind": "text", "text": "hi"})},
    ),
    (
        Operation.SEND_STREAMING_MESSAGE,
        {"tenant": "acme", "message": _message_10({"text": "hi"})},
        {"message": _message_03({"kind": "text", "text": "hi"})},
    ),
    (Operation.GET_TASK, {"tenant": "acme", "id": "t-1"}, {"id": "t-1"}),
    (Operation.CANCEL_TASK, {"tenant": "acme", "id": "t-1"}, {"id": "t-1"}),
    (Operation.SUBSCRIBE_TO_TASK, {"tenant": "acme", "id": "t-1"}, {"id": "t-1"}),
    (
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        {"tenant": "acme", "taskId": "t-1", "id": "c-1", "url": "https://h.example.com/"},
        {"taskId": "t-1", "pushNotificationConfig": {"id": "c-1", "url": "https://h.example.com/"}},
    ),
    (
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        {"tenant": "acme", "taskId": "t-1", "id": "c-1"},
        {"id": "t-1", "pushNotificationConfigId": "c-1"},
    ),
    (
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        {"tenant": "acme", "taskId": "t-1"},
        {"id": "t-1"},
    ),
    (
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        {"tenant": "acme", "taskId": "t-1", "id": "c-1"},
        {"id": "t-1", "pushNotificationConfigId": "c-1"},
    ),
    (Operation.GET_EXTENDED_AGENT_CARD, {"tenant": "acme"}, None),
]


@pytest.mark.parametrize(
    ("operation", "request_10", "request_03"), TENANT_CASES, ids=[c[0].value for c in TENANT_CASES]
)
def test_tenant_is_dropped(operation: Operation, request_10: JSON, request_03: JSON) -> None:
    """0.3 has no multi-tenancy: a request's `tenant` is dropped (REFERENCE §10, §12.14)."""
    as_03 = V03.encode_request(operation, V10.decode_request(operation, request_10))
    assert_json(as_03, request_03)
    without = {k: v for k, v in request_10.items() if k != "tenant"}
    assert_json(V10.encode_request(operation, V03.decode_request(operation, as_03)), without)


def test_list_tasks_has_no_03_form() -> None:
    """ListTasks is 1.0 only (REFERENCE §8.5, §12.14): the 0.3 codec refuses to write its
    request or response with a protocol error instead of inventing a method."""
    with pytest.raises(A2AError):
        V03.encode_request(Operation.LIST_TASKS, ListTasksRequest(context_id="ctx-1"))
    with pytest.raises(A2AError):
        V03.decode_request(Operation.LIST_TASKS, {"contextId": "ctx-1"})
    response = ListTasksResponse(tasks=(), next_page_token="", page_size=50, total_size=0)
    with pytest.raises(A2AError):
        V03.encode_response(Operation.LIST_TASKS, response)


METADATA_CASES: list[tuple[Operation, JSON, JSON]] = [
    (Operation.GET_TASK, {"id": "t-1", "historyLength": 3}, {"id": "t-1", "historyLength": 3}),
    (Operation.SUBSCRIBE_TO_TASK, {"id": "t-1"}, {"id": "t-1"}),
    (
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        {"id": "t-1", "pushNotificationConfigId": "c-1"},
        {"taskId": "t-1", "id": "c-1"},
    ),
    (Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, {"id": "t-1"}, {"taskId": "t-1"}),
    (
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        {"id": "t-1", "pushNotificationConfigId": "c-1"},
        {"taskId": "t-1", "id": "c-1"},
    ),
]


@pytest.mark.parametrize(
    ("operation", "request_03", "request_10"),
    METADATA_CASES,
    ids=[c[0].value for c in METADATA_CASES],
)
def test_request_metadata_1_0_cannot_carry_is_dropped(
    operation: Operation, request_03: JSON, request_10: JSON
) -> None:
    """0.3 TaskQueryParams, TaskIdParams and the push-config params take `metadata`; the 1.0
    GetTask, SubscribeToTask and push-config get/list/delete requests have no such field
    (REFERENCE §3.3, §3.4; CancelTask keeps it in both, see the corpus)."""
    metadata = {"https://example.com/ext/trace/v1": {"traceId": "abc"}}
    as_10 = V10.encode_request(
        operation, V03.decode_request(operation, request_03 | {"metadata": metadata})
    )
    assert_json(as_10, request_10)
    assert_json(V03.encode_request(operation, V10.decode_request(operation, as_10)), request_03)


@pytest.mark.parametrize(
    ("sent", "written"),
    [
        ("2025-04-02T16:59:25.331844", "2025-04-02T16:59:25.331844Z"),
        ("2025-10-28T10:30:00", "2025-10-28T10:30:00.000Z"),
        ("2025-10-28T10:30:00.5", "2025-10-28T10:30:00.500Z"),
        ("2025-10-28T12:30:00.000+02:00", "2025-10-28T10:30:00.000Z"),
        ("2025-10-28T10:30:00Z", "2025-10-28T10:30:00.000Z"),
    ],
)
def test_03_timestamps_become_utc_z(sent: str, written: str) -> None:
    """0.3 timestamps are ISO 8601, often zone-less (= UTC); both codecs write UTC with `Z`
    and milliseconds, microseconds when the value has them (REFERENCE §2.1, §2.2, §12.10)."""

    def task_03(timestamp: str) -> JSON:
        status = {"state": "working", "timestamp": timestamp}
        return {"kind": "task", "id": "t-1", "contextId": "c-1", "status": status}

    task = V03.decode(Task, task_03(sent))
    assert_json(V03.encode(task), task_03(written))
    as_10 = V10.encode(task)
    assert_json(as_10["status"], {"state": "TASK_STATE_WORKING", "timestamp": written})
    assert V10.decode(Task, as_10) == task


# --- cards ----------------------------------------------------------------------------


def _card_03(**members: JSON) -> JSON:
    card = {
        "protocolVersion": "0.3.0",
        "name": "Agent",
        "description": "An agent.",
        "version": "1.0.0",
        "url": "https://agent.example.com/a2a",
        "preferredTransport": "JSONRPC",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }
    return card | members


def _card_10(**members: JSON) -> JSON:
    card = {
        "name": "Agent",
        "description": "An agent.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {
                "url": "https://agent.example.com/a2a",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "0.3",
            }
        ],
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }
    return card | members


def _card_via_10(card_03: JSON) -> tuple[JSON, JSON]:
    as_10 = V10.encode_card(V03.decode_card(card_03))
    return as_10, V03.encode_card(V10.decode_card(as_10))


def _card_via_03(card_10: JSON) -> tuple[JSON, JSON]:
    as_03 = V03.encode_card(V10.decode_card(card_10))
    return as_03, V10.encode_card(V03.decode_card(as_03))


def test_state_transition_history_is_dropped() -> None:
    """0.3 `capabilities.stateTransitionHistory` was removed in 1.0 (REFERENCE §5.4, §12.9)."""
    as_10, back = _card_via_10(
        _card_03(capabilities={"streaming": True, "stateTransitionHistory": True})
    )
    assert_json(as_10, _card_10(capabilities={"streaming": True}))
    assert_json(back, _card_03(capabilities={"streaming": True}))


AUTH_CODE = {
    "authorizationUrl": "https://auth.example.com/authorize",
    "tokenUrl": "https://auth.example.com/token",
    "scopes": {"read": "Read"},
}
CLIENT_CREDENTIALS = {"tokenUrl": "https://auth.example.com/token", "scopes": {"read": "Read"}}
IMPLICIT = {"authorizationUrl": "https://auth.example.com/authorize", "scopes": {"read": "Read"}}
PASSWORD = {"tokenUrl": "https://auth.example.com/token", "scopes": {"read": "Read"}}
FLOWS_03 = {
    "authorizationCode": AUTH_CODE,
    "clientCredentials": CLIENT_CREDENTIALS,
    "implicit": IMPLICIT,
    "password": PASSWORD,
}


@pytest.mark.parametrize(
    ("offered", "kept"),
    [
        (("password", "implicit", "clientCredentials", "authorizationCode"), "authorizationCode"),
        (("password", "implicit", "clientCredentials"), "clientCredentials"),
        (("password", "implicit"), "implicit"),
        (("password", "authorizationCode"), "authorizationCode"),
    ],
    ids=lambda v: "+".join(v) if isinstance(v, tuple) else v,
)
def test_several_oauth_flows_keep_the_first_by_precedence(
    offered: tuple[str, ...], kept: str
) -> None:
    """A 0.3 OAuth scheme may offer several flows, a 1.0 one exactly one: 1.0 keeps the first
    in the order authorizationCode, clientCredentials, deviceCode, implicit, password,
    whatever the JSON order (REFERENCE §5.6, §12.9)."""
    flows = {name: FLOWS_03[name] for name in offered}
    scheme_03 = {"type": "oauth2", "flows": flows, "oauth2MetadataUrl": "https://a.example.com/m"}
    as_10, back = _card_via_10(_card_03(securitySchemes={"oauth": scheme_03}))
    one_flow = {"flows": {kept: FLOWS_03[kept]}, "oauth2MetadataUrl": "https://a.example.com/m"}
    assert_json(as_10, _card_10(securitySchemes={"oauth": {"oauth2SecurityScheme": one_flow}}))
    assert_json(back, _card_03(securitySchemes={"oauth": {"type": "oauth2"} | one_flow}))


def test_pkce_required_is_dropped() -> None:
    """`pkceRequired` is 1.0 only (REFERENCE §5.6, §12.14)."""
    flow = AUTH_CODE | {"pkceRequired": True}
    scheme_10 = {"oauth2SecurityScheme": {"flows": {"authorizationCode": flow}}}
    as_03, back = _card_via_03(_card_10(securitySchemes={"code": scheme_10}))
    scheme_03 = {"type": "oauth2", "flows": {"authorizationCode": AUTH_CODE}}
    assert_json(as_03, _card_03(securitySchemes={"code": scheme_03}))
    without = {"oauth2SecurityScheme": {"flows": {"authorizationCode": AUTH_CODE}}}
    assert_json(back, _card_10(securitySchemes={"code": without}))


def test_device_code_flow_has_no_03_form() -> None:
    """The deviceCode flow is 1.0 only (REFERENCE §5.6, §12.14): the 0.3 scheme keeps its
    name, type and other members, with no flow (so security requirements naming it still
    resolve), and reads back as an OAuth scheme with no flow."""
    device = {
        "deviceAuthorizationUrl": "https://auth.example.com/device",
        "tokenUrl": "https://auth.example.com/token",
        "scopes": {"read": "Read"},
    }
    scheme_10 = {"oauth2SecurityScheme": {"description": "TVs", "flows": {"deviceCode": device}}}
    requirement_10 = [{"schemes": {"device": {"list": ["read"]}}}]
    as_03, back = _card_via_03(
        _card_10(securitySchemes={"device": scheme_10}, securityRequirements=requirement_10)
    )
    scheme_03 = {"type": "oauth2", "description": "TVs", "flows": {}}
    assert_json(
        as_03, _card_03(securitySchemes={"device": scheme_03}, security=[{"device": ["read"]}])
    )
    assert_json(
        back,
        _card_10(
            securitySchemes={
                "device": {"oauth2SecurityScheme": {"description": "TVs", "flows": {}}}
            },
            securityRequirements=requirement_10,
        ),
    )


def test_only_03_interfaces_reach_a_03_card() -> None:
    """A 0.3 card describes its 0.3 interfaces only: `url`/`preferredTransport` from the
    first one, every one in `additionalInterfaces`; 1.0 interfaces and `tenant` have no 0.3
    form (REFERENCE §5.2, §5.3, §5.9, §12.9)."""
    interfaces_10 = [
        {
            "url": "https://agent.example.com/v1",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
            "tenant": "acme",
        },
        {
            "url": "https://agent.example.com/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.3",
            "tenant": "acme",
        },
        {
            "url": "https://agent.example.com/rest",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0",
        },
        {
            "url": "https://agent.example.com/rest03",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "0.3",
        },
    ]
    as_03, back = _card_via_03(_card_10(supportedInterfaces=interfaces_10))
    assert_json(
        as_03,
        _card_03(
            additionalInterfaces=[
                {"url": "https://agent.example.com/a2a", "transport": "JSONRPC"},
                {"url": "https://agent.example.com/rest03", "transport": "HTTP+JSON"},
            ]
        ),
    )
    assert_json(
        back,
        _card_10(
            supportedInterfaces=[
                {
                    "url": "https://agent.example.com/a2a",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "0.3",
                },
                {
                    "url": "https://agent.example.com/rest03",
                    "protocolBinding": "HTTP+JSON",
                    "protocolVersion": "0.3",
                },
            ]
        ),
    )


def test_card_without_03_interface_offers_its_interfaces_to_03() -> None:
    """A card with no 0.3 interface still needs a 0.3 `url`: the 0.3 form then lists all of
    its interfaces (first = main), and reading that back labels them 0.3, since a 0.3 card
    cannot say otherwise (REFERENCE §5.2, §5.9; `parley.wire.v0_3.card.card_interfaces`)."""
    interfaces_10 = [
        {
            "url": "https://agent.example.com/v1",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        },
        {"url": "grpc.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    ]
    as_03, back = _card_via_03(_card_10(supportedInterfaces=interfaces_10))
    assert_json(
        as_03,
        _card_03(
            url="https://agent.example.com/v1",
            additionalInterfaces=[
                {"url": "https://agent.example.com/v1", "transport": "JSONRPC"},
                {"url": "grpc.example.com:443", "transport": "GRPC"},
            ],
        ),
    )
    relabelled = [i | {"protocolVersion": "0.3"} for i in interfaces_10]
    assert_json(back, _card_10(supportedInterfaces=relabelled))


def test_03_main_interface_is_listed_in_additional_interfaces() -> None:
    """A 0.3 card may leave its main interface out of `additionalInterfaces`; written back
    it is listed there too, first (REFERENCE §5.2, §5.9)."""
    card_03 = _card_03(
        additionalInterfaces=[{"url": "https://agent.example.com/rest", "transport": "HTTP+JSON"}]
    )
    as_10, back = _card_via_10(card_03)
    main = {
        "url": "https://agent.example.com/a2a",
        "protocolBinding": "JSONRPC",
        "protocolVersion": "0.3",
    }
    rest = {
        "url": "https://agent.example.com/rest",
        "protocolBinding": "HTTP+JSON",
        "protocolVersion": "0.3",
    }
    assert_json(as_10, _card_10(supportedInterfaces=[main, rest]))
    assert_json(
        back,
        _card_03(
            additionalInterfaces=[
                {"url": "https://agent.example.com/a2a", "transport": "JSONRPC"},
                {"url": "https://agent.example.com/rest", "transport": "HTTP+JSON"},
            ]
        ),
    )


def test_03_preferred_transport_defaults_to_jsonrpc() -> None:
    """`preferredTransport` absent in a 0.3 card means JSONRPC, and is always written
    (REFERENCE §5.2)."""
    card_03 = _card_03()
    del card_03["preferredTransport"]
    as_10, back = _card_via_10(card_03)
    assert_json(as_10, _card_10())
    assert_json(back, _card_03())
