"""The protobuf codecs of the gRPC binding (1.0 `lf.a2a.v1`, 0.3 `a2a.v1`): round trips of
every model type, request, response and event each version can express, through bytes;
the direct routes agreeing with the reference route (the JSON codec through ProtoJSON);
Parley's bytes read by the official SDK's messages; and bad input raising only typed errors.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as sdk_v03
from a2a.types import a2a_pb2 as sdk_v10
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from parley import model as m
from parley.protocol.errors import (
    A2AError,
    FieldViolation,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
)
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation
from parley.wire import codec_table
from parley.wire.codec_seam import Codec
from parley.wire.protobuf import (
    UnusualShapeError,
    fill_value,
    from_json,
    parse,
    timestamp_datetime,
    to_json,
    value_json,
)
from parley.wire.v0_3 import protobuf_card
from parley.wire.v0_3 import protobuf_codec as v03
from parley.wire.v0_3._pb import a2a_pb2 as pb03
from parley.wire.v1_0 import protobuf_bytes
from parley.wire.v1_0 import protobuf_codec as v10
from parley.wire.v1_0._pb import a2a_pb2 as pb10
from parley.wire.v1_1 import protobuf_codec as v11
from tests.strategies import Flavor, all_models, cards
from tests.wire.test_v0_3_rest import MODELS as REST_V03_MODELS

TYPED_V10: Codec[Any] = v10.CODEC  # the protobuf codecs satisfy the Codec protocol (mypy)
TYPED_V03: Codec[Any] = v03.CODEC
CODECS = {Version.V1_0: v10.CODEC, Version.V0_3: v03.CODEC}
SDK = {Version.V1_0: sdk_v10, Version.V0_3: sdk_v03}
VERSIONS = list(CODECS)


def _card_v03(card: m.AgentCard) -> m.AgentCard:
    """What the 0.3 proto card cannot hold: an icon, the state-transition-history flag,
    and a false capability or extension flag apart from an absent one."""
    capabilities = card.capabilities
    capabilities = replace(
        capabilities,
        streaming=capabilities.streaming or None,
        push_notifications=capabilities.push_notifications or None,
        extended_agent_card=capabilities.extended_agent_card or None,
        state_transition_history=None,
    )
    schemes = {name: _one_flow(scheme) for name, scheme in card.security_schemes.items()}
    return replace(card, icon_url=None, capabilities=capabilities, security_schemes=schemes)


def _one_flow(scheme: m.SecurityScheme) -> m.SecurityScheme:
    """The 0.3 proto's OAuthFlows is a oneof: the first flow stays."""
    if not isinstance(scheme, m.OAuth2SecurityScheme):
        return scheme
    names = ("authorization_code", "client_credentials", "implicit", "password")
    first = next((n for n in names if getattr(scheme.flows, n) is not None), None)
    kept = {} if first is None else {first: getattr(scheme.flows, first)}
    return replace(scheme, flows=m.OAuthFlows(**kept))


def _models(version: Version) -> dict[type[m.Model], st.SearchStrategy[Any]]:
    """Every model type the version's codec expresses, as it comes back."""
    codec = CODECS[version]
    if version is Version.V1_0:
        models = all_models(Flavor.V1_0)
        models[m.GetTaskRequest] = models[m.GetTaskRequest].map(
            lambda r: replace(r, metadata=None)  # the 1.0 proto has no metadata there
        )
    else:
        models = dict(REST_V03_MODELS)
        models[m.AgentCard] = cards(Flavor.V0_3).map(_card_v03)
    expressible = set(codec.schema.standalone)
    expressible |= {OPERATIONS[operation].request for operation in codec.schema.requests}
    return {kind: strategy for kind, strategy in models.items() if kind in expressible}


MODELS = {version: _models(version) for version in VERSIONS}
CASES = [(version, kind) for version in VERSIONS for kind in MODELS[version]]


def _case_id(case: Any) -> str:
    if isinstance(case, Version | Operation):
        return str(case.value)
    return getattr(case, "__name__", str(case))


# ---------------------------------------------------------------- round trips


def test_the_codecs_are_registered() -> None:
    assert dict(codec_table.GRPC) == {**CODECS, Version.V1_1: v11.CODEC}  # the draft's: test_v1_1
    assert list(codec_table.GRPC) == [Version.V1_0, Version.V1_1, Version.V0_3]
    assert len(codec_table.GRPC) == 3
    for version, codec in CODECS.items():
        assert codec.version is version


@pytest.mark.parametrize(("version", "kind"), CASES, ids=_case_id)
@settings(max_examples=40)
@given(data=st.data())
def test_every_model_round_trips_through_bytes(
    version: Version, kind: type[m.Model], data: st.DataObject
) -> None:
    codec = CODECS[version]
    value = data.draw(MODELS[version][kind])
    message = codec.encode(value)
    again = type(message).FromString(message.SerializeToString())
    assert codec.decode(kind, again) == value
    # The official SDK's message of the same name reads the same bytes.
    official = getattr(SDK[version], message.DESCRIPTOR.name).FromString(
        message.SerializeToString()
    )
    assert json_format.MessageToDict(official) == json_format.MessageToDict(message)


@pytest.mark.parametrize(
    ("version", "kind"),
    [(v, k) for v, k in CASES if k in CODECS[v].schema.fillers],
    ids=_case_id,
)
@settings(max_examples=40)
@given(data=st.data())
def test_the_direct_route_writes_what_the_reference_route_writes(
    version: Version, kind: type[m.Model], data: st.DataObject
) -> None:
    codec = CODECS[version]
    value = data.draw(MODELS[version][kind])
    reference = from_json(codec.schema.json.encode(value), codec.schema.standalone[kind])
    assert codec.encode(value) == reference


@settings(max_examples=300)
@given(event=MODELS[Version.V1_0][m.TaskArtifactUpdateEvent])
def test_event_bytes_are_the_runtimes_bytes(event: m.TaskArtifactUpdateEvent) -> None:
    """The directly written StreamResponse is byte for byte what protobuf serializes;
    events it does not cover (metadata, data parts) take the message route."""
    codec = CODECS[Version.V1_0]
    expected = codec.encode_event(event).SerializeToString()
    assert codec.event_bytes(event) == expected
    covered = protobuf_bytes.artifact_update(event)
    assert covered in (None, expected)
    artifact = event.artifact
    simple = (
        event.metadata is None
        and artifact.metadata is None
        and all(type(p) is not m.DataPart and p.metadata is None for p in artifact.parts)
    )
    assert (covered is not None) == simple


@pytest.mark.parametrize(
    "event",
    [
        m.TaskArtifactUpdateEvent(  # a length over 127: a two-byte varint
            task_id="t" * 200,
            context_id="c",
            artifact=m.Artifact(artifact_id="a", parts=(m.TextPart(text=""),)),
            append=True,
            last_chunk=True,
        ),
        m.TaskArtifactUpdateEvent(  # empty ids left out; a three-byte varint
            task_id="",
            context_id="",
            artifact=m.Artifact(artifact_id="", parts=(m.TextPart(text="é" * 70000),)),
        ),
        m.TaskArtifactUpdateEvent(
            task_id="t",
            context_id="c",
            artifact=m.Artifact(artifact_id="a", parts=(m.TextPart(text="hello"),)),
            append=True,
        ),
    ],
    ids=["long-id", "empty-ids-long-text", "chunk"],
)
def test_event_bytes_edges(event: m.TaskArtifactUpdateEvent) -> None:
    expected = CODECS[Version.V1_0].encode_event(event).SerializeToString()
    assert protobuf_bytes.artifact_update(event) == expected


def test_event_bytes_of_other_events_take_the_message_route() -> None:
    codec = CODECS[Version.V1_0]
    status = m.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING)
    )
    assert codec.event_bytes(status) == codec.encode_event(status).SerializeToString()
    data = m.TaskArtifactUpdateEvent(
        task_id="t",
        context_id="c",
        artifact=m.Artifact(artifact_id="a", parts=(m.DataPart(data={"k": [1, None]}),)),
    )
    assert protobuf_bytes.artifact_update(data) is None
    for part in (
        m.TextPart(text="x", metadata={"k": 1}),
        m.RawPart(raw=b"x", metadata={"k": 1}),
    ):
        other = replace(data, artifact=m.Artifact(artifact_id="a", parts=(part,)))
        assert protobuf_bytes.artifact_update(other) is None
        assert codec.event_bytes(other) == codec.encode_event(other).SerializeToString()
    assert codec.event_bytes(data) == codec.encode_event(data).SerializeToString()
    v03 = CODECS[Version.V0_3]
    assert v03.event_bytes(data) == v03.encode_event(data).SerializeToString()


@pytest.mark.parametrize("version", VERSIONS, ids=_case_id)
@settings(max_examples=60)
@given(data=st.data())
def test_the_direct_request_decoder_reads_what_the_reference_route_reads(
    version: Version, data: st.DataObject
) -> None:
    codec = CODECS[version]
    request = data.draw(MODELS[version][m.SendMessageRequest])
    message = codec.encode_request(Operation.SEND_MESSAGE, request)
    direct = codec.schema.request_decoders[Operation.SEND_MESSAGE]
    reference = codec.schema.json.decode_request(Operation.SEND_MESSAGE, to_json(message))
    try:
        assert direct(message) == reference == request
    except UnusualShapeError:  # a push config: only the reference route reads it
        assert request.configuration is not None
        assert request.configuration.push_notification_config is not None


@pytest.mark.parametrize(
    ("version", "operation"),
    [
        (version, spec.operation)
        for version in VERSIONS
        for spec in OPERATIONS.values()
        if version in spec.bindings
    ],
    ids=_case_id,
)
@settings(max_examples=25)
@given(data=st.data())
def test_every_request_round_trips_through_its_operation(
    version: Version, operation: Operation, data: st.DataObject
) -> None:
    codec = CODECS[version]
    kind = OPERATIONS[operation].request
    value = data.draw(MODELS[version][kind])
    message = codec.encode_request(operation, value)
    assert message.DESCRIPTOR is codec.request_type(operation).DESCRIPTOR
    assert codec.decode_request(operation, message) == value
    assert codec.request_from_bytes(operation, message.SerializeToString()) == value


def _results(version: Version) -> list[tuple[Operation, type[m.Model] | None]]:
    out: list[tuple[Operation, type[m.Model] | None]] = [
        (Operation.SEND_MESSAGE, m.Task),
        (Operation.SEND_MESSAGE, m.Message),
    ]
    for operation, kind in CODECS[version].schema.responses.items():
        spec = OPERATIONS[operation]
        out.append((operation, spec.response if kind is not pb10.Empty else None))
    return [(op, kind) for op, kind in out if kind is None or kind in MODELS[version]]


@pytest.mark.parametrize(
    ("version", "operation", "kind"),
    [(v, op, kind) for v in VERSIONS for op, kind in _results(v)],
    ids=_case_id,
)
@settings(max_examples=25)
@given(data=st.data())
def test_every_response_round_trips(
    version: Version, operation: Operation, kind: type[m.Model] | None, data: st.DataObject
) -> None:
    codec = CODECS[version]
    value = None if kind is None else data.draw(MODELS[version][kind])
    message = codec.encode_response(operation, value)
    assert codec.response_bytes(operation, value) == message.SerializeToString()
    again = type(message).FromString(message.SerializeToString())
    assert codec.decode_response(operation, again) == value


@pytest.mark.parametrize("version", VERSIONS, ids=_case_id)
@settings(max_examples=60)
@given(data=st.data())
def test_every_stream_event_round_trips(version: Version, data: st.DataObject) -> None:
    codec = CODECS[version]
    models = MODELS[version]
    event = data.draw(
        models[m.Task]
        | models[m.Message]
        | models[m.TaskStatusUpdateEvent]
        | models[m.TaskArtifactUpdateEvent]
    )
    message = codec.encode_event(event)
    again = type(message).FromString(message.SerializeToString())
    assert codec.decode_event(again) == event
    assert codec.decode_response(Operation.SUBSCRIBE_TO_TASK, again) == event
    reference = from_json(codec.schema.json.encode_event(event), codec.schema.stream_response)
    assert message == reference


# ---------------------------------------------------------------- examples


def _message(**changes: Any) -> m.Message:
    base = m.Message(message_id="m-1", role=m.Role.USER, parts=(m.TextPart(text="hi"),))
    return replace(base, **changes)


def test_1_0_send_message_request_reads_as_the_spec_names_it() -> None:
    request = pb10.SendMessageRequest(tenant="acme")
    request.message.message_id = "m-1"
    request.message.role = pb10.Role.Value("ROLE_USER")
    request.message.parts.add(text="hi")
    request.message.parts.add(data=pb10.Value(number_value=3))
    request.configuration.history_length = 0
    request.configuration.return_immediately = True
    decoded = v10.CODEC.decode_request(Operation.SEND_MESSAGE, request)
    assert decoded == m.SendMessageRequest(
        message=_message(parts=(m.TextPart(text="hi"), m.DataPart(data=3))),
        configuration=m.SendMessageConfiguration(history_length=0, return_immediately=True),
        tenant="acme",
    )


def test_0_3_send_message_request_reads_as_the_proto_names_it() -> None:
    request = pb03.SendMessageRequest()
    request.request.message_id = "m-1"
    request.request.role = pb03.Role.Value("ROLE_USER")
    request.request.content.add(text="hi")
    request.request.content.add().file.file_with_uri = "https://example.com/f"
    request.request.content.add().data.SetInParent()
    request.configuration.history_length = 0  # unlimited in 0.3
    decoded = v03.CODEC.decode_request(Operation.SEND_MESSAGE, request)
    assert decoded == m.SendMessageRequest(
        message=_message(
            parts=(
                m.TextPart(text="hi"),
                m.UrlPart(url="https://example.com/f"),
                m.DataPart(data={}),
            )
        ),
        configuration=m.SendMessageConfiguration(history_length=None, return_immediately=True),
    )


def test_0_3_requests_name_their_resources() -> None:
    codec = v03.CODEC
    get = codec.encode_request(Operation.GET_TASK, m.GetTaskRequest(id="t", history_length=2))
    assert (get.name, get.history_length) == ("tasks/t", 2)
    ref = m.GetTaskPushNotificationConfigRequest(task_id="t", id="c")
    assert codec.encode_request(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, ref).name == (
        "tasks/t/pushNotificationConfigs/c"
    )
    listing = m.ListTaskPushNotificationConfigsRequest(task_id="t", page_size=3)
    encoded = codec.encode_request(Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, listing)
    assert (encoded.parent, encoded.page_size) == ("tasks/t", 3)
    config = m.TaskPushNotificationConfig(url="https://h.example/x", task_id="t", id="c")
    create = codec.encode_request(Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, config)
    assert (create.parent, create.config_id, create.config.name) == (
        "tasks/t",
        "c",
        "tasks/t/pushNotificationConfigs/c",
    )
    final = codec.encode_event(
        m.TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.COMPLETED)
        )
    )
    assert final.status_update.final is True


def test_0_3_card_security_in_its_proto_form() -> None:
    card = m.AgentCard(
        name="A",
        description="d",
        version="1",
        supported_interfaces=(
            m.AgentInterface(
                url="https://a.example", protocol_binding="JSONRPC", protocol_version="0.3"
            ),
            m.AgentInterface(
                url="grpc://a.example:50051", protocol_binding="GRPC", protocol_version="0.3"
            ),
        ),
        capabilities=m.AgentCapabilities(streaming=True),
        default_input_modes=("text/plain",),
        default_output_modes=("text/plain",),
        skills=(
            m.AgentSkill(
                id="s",
                name="S",
                description="",
                tags=(),
                security_requirements=(m.SecurityRequirement(schemes={"key": ()}),),
            ),
        ),
        security_schemes={"key": m.APIKeySecurityScheme(location="header", name="X-Key")},
        security_requirements=(m.SecurityRequirement(schemes={"key": ("read",)}),),
    )
    message = v03.CODEC.encode_card(card)
    assert message.url == "https://a.example"
    assert [(i.url, i.transport) for i in message.additional_interfaces] == [
        ("https://a.example", "JSONRPC"),
        ("grpc://a.example:50051", "GRPC"),
    ]
    scheme = message.security_schemes["key"].api_key_security_scheme
    assert (scheme.location, scheme.name) == ("header", "X-Key")
    assert list(message.security[0].schemes["key"].list) == ["read"]
    assert v03.CODEC.decode_card(message) == card
    answer = v03.CODEC.encode_response(Operation.GET_EXTENDED_AGENT_CARD, card)
    assert v03.CODEC.decode_response(Operation.GET_EXTENDED_AGENT_CARD, answer) == card


def test_numbers_in_free_form_json() -> None:
    """Struct numbers are doubles: integral ones come back as ints, others as floats."""
    value = pb10.Value()
    fill_value(value, {"i": 3, "f": 0.5, "big": 2.0**60, "list": [], "obj": {}, "n": None})
    assert value_json(value) == {"i": 3, "f": 0.5, "big": 2.0**60, "list": [], "obj": {}, "n": None}
    with pytest.raises(InternalError):
        fill_value(value, object())  # type: ignore[arg-type]
    with pytest.raises(UnusualShapeError):
        value_json(pb10.Value())  # no kind: ProtoJSON has no spelling for it


def test_timestamps_outside_the_ordinary_shape() -> None:
    stamp = pb10.Timestamp(seconds=1, nanos=1500)
    with pytest.raises(UnusualShapeError):
        timestamp_datetime(stamp)  # nanoseconds the model cannot hold
    with pytest.raises(UnusualShapeError):
        timestamp_datetime(pb10.Timestamp(seconds=2**50))
    assert timestamp_datetime(pb10.Timestamp(seconds=1, nanos=2000)) == datetime(
        1970, 1, 1, 0, 0, 1, 2, tzinfo=UTC
    )


# ---------------------------------------------------------------- errors


def _bad_send_v10() -> list[tuple[Callable[[Any], None], str]]:
    def no_message(r: Any) -> None:
        r.ClearField("message")

    def no_id(r: Any) -> None:
        r.message.message_id = ""

    def no_role(r: Any) -> None:
        r.message.role = 0

    def no_parts(r: Any) -> None:
        del r.message.parts[:]

    def empty_part(r: Any) -> None:
        r.message.parts.add()

    def deep(r: Any) -> None:
        value: dict[str, Any] = {}
        for _ in range(40):
            value = {"x": value}
        r.message.metadata.update(value)

    return [
        (no_message, "message"),
        (no_id, "message.messageId"),
        (no_role, "message.role"),
        (no_parts, "message.parts"),
        (empty_part, "message.parts[1]"),
        (deep, "message.metadata"),
    ]


@pytest.mark.parametrize(
    ("mutate", "field"), _bad_send_v10(), ids=lambda c: getattr(c, "__name__", c)
)
def test_bad_1_0_requests_take_the_reference_route_and_name_the_field(
    mutate: Callable[[Any], None], field: str
) -> None:
    request = v10.CODEC.encode_request(
        Operation.SEND_MESSAGE, m.SendMessageRequest(message=_message())
    )
    mutate(request)
    with pytest.raises(InvalidParamsError) as raised:
        v10.CODEC.decode_request(Operation.SEND_MESSAGE, request)
    assert raised.value.field_violations[0].field.startswith(field)


def test_bad_0_3_requests_name_the_field() -> None:
    request = v03.CODEC.encode_request(
        Operation.SEND_MESSAGE, m.SendMessageRequest(message=_message())
    )
    request.request.content.add().file.mime_type = "text/plain"  # a file with no content
    with pytest.raises(InvalidParamsError) as raised:
        v03.CODEC.decode_request(Operation.SEND_MESSAGE, request)
    assert raised.value.field_violations[0].field.startswith("message.content[1]")
    request.ClearField("request")
    with pytest.raises(InvalidParamsError):
        v03.CODEC.decode_request(Operation.SEND_MESSAGE, request)


@pytest.mark.parametrize("version", VERSIONS, ids=_case_id)
def test_wrong_payloads_and_missing_operations(version: Version) -> None:
    codec = CODECS[version]
    task_message = codec.encode(
        m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.SUBMITTED))
    )
    with pytest.raises(InvalidRequestError):
        codec.decode_request(Operation.GET_TASK, task_message)
    with pytest.raises(InvalidRequestError):
        codec.decode_request(Operation.GET_TASK, SDK[version].GetTaskRequest())  # another pool
    with pytest.raises(InvalidRequestError):
        parse(codec.request_type(Operation.GET_TASK), b"\xff\xff\xff")
    with pytest.raises(InvalidRequestError):
        codec.request_from_bytes(Operation.GET_TASK, b"\xff\xff\xff")
    unusual = codec.encode_request(Operation.SEND_MESSAGE, m.SendMessageRequest(message=_message()))
    target = unusual.request if version is Version.V0_3 else unusual.message  # 0.3's name
    target.role = 0  # ROLE_UNSPECIFIED: the reference route reads it, and names the field
    with pytest.raises(InvalidParamsError):
        codec.request_from_bytes(Operation.SEND_MESSAGE, unusual.SerializeToString())
    with pytest.raises(InternalError):
        codec.encode_response(Operation.SEND_MESSAGE, m.TextPart(text="x"))
    with pytest.raises(InternalError):
        codec.encode_response(Operation.GET_TASK, _message())
    with pytest.raises(InternalError):
        codec.encode_response(Operation.SEND_STREAMING_MESSAGE, _message())
    with pytest.raises(InternalError):
        codec.encode_event(m.TextPart(text="x"))  # type: ignore[arg-type]
    violation = FieldViolation(field="f", description="d")
    with pytest.raises(InternalError):
        codec.encode(violation)  # a model type with no wire form
    with pytest.raises(InternalError):
        codec.decode(FieldViolation, task_message)


def test_list_tasks_does_not_exist_in_0_3() -> None:
    with pytest.raises(MethodNotFoundError):
        v03.CODEC.decode_request(Operation.LIST_TASKS, pb03.GetTaskRequest())
    with pytest.raises(MethodNotFoundError):
        v03.CODEC.request_from_bytes(Operation.LIST_TASKS, b"")
    with pytest.raises(MethodNotFoundError):
        v03.CODEC.encode_response(
            Operation.LIST_TASKS,
            m.ListTasksResponse(tasks=(), next_page_token="", page_size=0, total_size=0),
        )
    with pytest.raises(MethodNotFoundError):
        v03.CODEC.decode_response(Operation.LIST_TASKS, pb03.Task())


@pytest.mark.parametrize("version", VERSIONS, ids=_case_id)
@settings(max_examples=80)
@given(data=st.data())
def test_mutated_requests_raise_only_typed_errors(version: Version, data: st.DataObject) -> None:
    """Any bytes a client may send for any operation: a request, or an A2AError."""
    codec = CODECS[version]
    operation = data.draw(st.sampled_from(sorted(codec.schema.requests, key=str)))
    payload = data.draw(st.binary(max_size=64))
    with contextlib.suppress(A2AError):
        codec.decode_request(operation, parse(codec.request_type(operation), payload))


def test_the_1_0_codec_reads_an_official_request() -> None:
    official = sdk_v10.SendMessageRequest(
        message=sdk_v10.Message(
            message_id="m-1", role=sdk_v10.ROLE_USER, parts=[sdk_v10.Part(text="hi")]
        )
    )
    message = parse(pb10.SendMessageRequest, official.SerializeToString())
    assert v10.CODEC.decode_request(Operation.SEND_MESSAGE, message) == m.SendMessageRequest(
        message=_message()
    )


def test_fillers_refuse_what_is_not_a_part() -> None:
    with pytest.raises(InternalError):
        v10.fill_part(pb10.Part(), m.Message)  # type: ignore[arg-type]
    with pytest.raises(InternalError):
        v03.fill_part(pb03.Part(), m.Message)  # type: ignore[arg-type]


def test_0_3_parts_outside_the_ordinary_shape() -> None:
    with pytest.raises(UnusualShapeError):
        v03.read_part(pb03.Part())
    with pytest.raises(UnusualShapeError):
        v03.read_part(pb03.Part(file=pb03.FilePart(mime_type="text/plain")))
    for bad in (
        pb03.Message(content=[pb03.Part(text="x")], role=1),
        pb03.Message(message_id="m", role=1),
    ):
        with pytest.raises(UnusualShapeError):
            v03.read_message(bad)


def test_deep_lists_take_the_reference_route() -> None:
    value: Any = "leaf"
    for _ in range(40):
        value = [value]
    request = v10.CODEC.encode_request(
        Operation.SEND_MESSAGE,
        m.SendMessageRequest(message=_message(parts=(m.DataPart(data=value),))),
    )
    with pytest.raises(InvalidParamsError):
        v10.CODEC.decode_request(Operation.SEND_MESSAGE, request)


def test_unrepresentable_messages_and_values() -> None:
    request = pb10.ListTasksRequest()
    request.status_timestamp_after.seconds = 2**50  # past year 9999: no RFC 3339 form
    with pytest.raises(InvalidParamsError):
        v10.CODEC.decode_request(Operation.LIST_TASKS, request)
    with pytest.raises(InternalError):  # only our own JSON goes this way: a bug if it fails
        from_json({"noSuchField": 1}, pb10.Task)


@settings(max_examples=150)
@given(
    document=st.dictionaries(
        st.sampled_from(["securitySchemes", "security", "skills", "name", "capabilities"]),
        st.recursive(
            st.none() | st.booleans() | st.text(max_size=3),
            lambda inner: (
                st.lists(inner, max_size=2)
                | st.dictionaries(
                    st.sampled_from(
                        [
                            "apiKeySecurityScheme",
                            "oauth2SecurityScheme",
                            "flows",
                            "password",
                            "schemes",
                            "list",
                            "location",
                            "x",
                            "openIdConnectSecurityScheme",
                        ]
                    ),
                    inner,
                    max_size=2,
                )
            ),
            max_leaves=6,
        ),
    )
    | st.just([])
)
def test_odd_0_3_cards_raise_only_typed_errors(document: Any) -> None:
    with contextlib.suppress(A2AError):
        protobuf_card.decode_card(document)
