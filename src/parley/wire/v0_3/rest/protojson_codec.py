"""`RestCodec`: the A2A 0.3 HTTP+JSON codec, ProtoJSON of the 0.3 proto (`a2a.v1`, read and
written by `parley.wire.protojson` with the 0.3 tables); the
agent card keeps the 0.3 JSON-RPC form, which is what 0.3 REST servers answer at `/v1/card`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from parley import model as m
from parley.protocol.errors import InternalError, MethodNotFoundError
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.json_bytes import JSON
from parley.wire.protojson import operations as protojson_operations
from parley.wire.protojson import parts, push
from parley.wire.protojson.content import V0_3
from parley.wire.reader import fail
from parley.wire.v0_3 import card as cards
from parley.wire.v0_3 import push as jsonrpc_push
from parley.wire.v0_3.jsonrpc_codec import STANDALONE as JSONRPC_STANDALONE
from parley.wire.v0_3.rest import operations

M = TypeVar("M", bound=m.Model)

_CARD_TYPES = (
    m.AgentCard,
    m.AgentSkill,
    m.AgentCapabilities,
    m.AgentInterface,
    m.AgentExtension,
    m.AgentProvider,
    m.AgentCardSignature,
    m.SecurityRequirement,
    m.APIKeySecurityScheme,
    m.HTTPAuthSecurityScheme,
    m.OAuth2SecurityScheme,
    m.OpenIdConnectSecurityScheme,
    m.MutualTlsSecurityScheme,
    m.OAuthFlows,
)


def _list_tasks(value: Any) -> Any:
    raise MethodNotFoundError("ListTasks does not exist in A2A 0.3")


_STANDALONE: dict[type[Any], tuple[Callable[[Any], JSON], Callable[[Any], Any]]] = {
    m.TextPart: (parts.encode_part_v0_3, parts.decode_part_v0_3),
    m.RawPart: (parts.encode_part_v0_3, parts.decode_part_v0_3),
    m.UrlPart: (parts.encode_part_v0_3, parts.decode_part_v0_3),
    m.DataPart: (parts.encode_part_v0_3, parts.decode_part_v0_3),
    m.Message: (V0_3.encode_message, V0_3.decode_message),
    m.TaskStatus: (V0_3.encode_status, V0_3.decode_status),
    m.Artifact: (V0_3.encode_artifact, V0_3.decode_artifact),
    m.Task: (V0_3.encode_task, V0_3.decode_task),
    m.TaskStatusUpdateEvent: (V0_3.encode_status_event, V0_3.decode_status_event),
    m.TaskArtifactUpdateEvent: (V0_3.encode_artifact_event, V0_3.decode_artifact_event),
    m.AuthenticationInfo: (jsonrpc_push.encode_auth, jsonrpc_push.decode_auth),
    m.TaskPushNotificationConfig: (push.encode_named_config, push.decode_named_config),
    m.SendMessageConfiguration: (
        protojson_operations.encode_configuration_v0_3,
        protojson_operations.decode_configuration_v0_3,
    ),
    m.ListTaskPushNotificationConfigsResponse: (
        push.encode_list_named_configs,
        push.decode_list_named_configs,
    ),
    m.ListTasksRequest: (_list_tasks, _list_tasks),
    m.ListTasksResponse: (_list_tasks, _list_tasks),
    **{kind: JSONRPC_STANDALONE[kind] for kind in _CARD_TYPES},
    **{
        kind: (encode, decode)
        for operation, (kind, encode, decode) in operations.REQUESTS.items()
        if kind is not m.TaskPushNotificationConfig  # its standalone form is the config
    },
}
"""Every model type 0.3 REST can express on its own: its encoder and decoder. Requests
are their payloads (path parameters included); card types are the JSON-RPC card's."""

# Why a part of another kind is not the part asked for: (field, description).
_PART_MISMATCH = {
    m.TextPart: ("text", "is required"),
    m.DataPart: ("data", "is required"),
    m.RawPart: ("file.fileWithBytes", "is required"),
    m.UrlPart: ("file.fileWithUri", "is required"),
}


def _not_in_v0_3(operation: Operation) -> MethodNotFoundError:
    return MethodNotFoundError(
        f"{operation.value} does not exist in A2A 0.3", metadata={"method": operation.value}
    )


class RestCodec:
    """Model <-> 0.3 REST JSON values (parsed, not bytes: `parley.wire.json_bytes` does those).

    Output uses JSON (camelCase) names; input also takes the proto's snake_case names.
    Decoders raise only A2AError subclasses: InvalidParamsError naming the field for a
    bad shape, MethodNotFoundError for ListTasks (0.3 has none).
    """

    version: Version = Version.V0_3

    def decode_request(self, operation: Operation, payload: JSON) -> m.Model:
        """The body with the path and query parameters merged in (see `operations`)."""
        entry = operations.REQUESTS.get(operation)
        if entry is None:
            raise _not_in_v0_3(operation)
        request: m.Model = entry[2](payload)
        return request

    def encode_request(self, operation: Operation, request: m.Model) -> JSON:
        """The path parameters (`id`, `taskId`) with the body or the query parameters."""
        entry = operations.REQUESTS.get(operation)
        if entry is None:
            raise _not_in_v0_3(operation)
        kind, encode, _ = entry
        if type(request) is not kind:
            raise InternalError(
                f"{operation.value} takes a {kind.__name__}, not a {type(request).__name__}"
            )
        return encode(request)

    def encode_response(self, operation: Operation, result: Any) -> JSON:
        """A unary result; InternalError for streaming operations (use `encode_event`)."""
        entry = operations.RESPONSES.get(operation)
        if entry is None:
            if operation in operations.REQUESTS:
                raise InternalError("A streaming operation answers with events: use encode_event")
            raise _not_in_v0_3(operation)
        kinds, encode, _ = entry
        if type(result) not in kinds:
            raise InternalError(f"{operation.value} cannot answer a {type(result).__name__}")
        return encode(result)

    def decode_response(self, operation: Operation, payload: JSON) -> Any:
        """A unary result; for a streaming operation, one event of its stream."""
        entry = operations.RESPONSES.get(operation)
        if entry is None:
            if operation in operations.REQUESTS:
                return V0_3.decode_event(payload)
            raise _not_in_v0_3(operation)
        return entry[2](payload)

    def encode_event(self, event: m.StreamEvent) -> JSON:
        return V0_3.encode_event(event)

    def decode_event(self, payload: JSON) -> m.StreamEvent:
        return V0_3.decode_event(payload)

    def encode_card(self, card: m.AgentCard) -> JSON:
        return cards.encode_card(card)

    def decode_card(self, payload: JSON) -> m.AgentCard:
        return cards.decode_card(payload)

    def encode(self, value: m.Model) -> JSON:
        """The standalone form of a model object (requests: their payload)."""
        return self._standalone(type(value))[0](value)

    def decode(self, kind: type[M], payload: JSON) -> M:
        value = self._standalone(kind)[1](payload)
        if type(value) is not kind:  # a part of another kind than asked for
            key, description = _PART_MISMATCH.get(kind, ("", f"expected {kind.__name__}"))
            fail("", key, description)
        return value

    @staticmethod
    def _standalone(kind: type[m.Model]) -> tuple[Callable[[Any], JSON], Callable[[Any], Any]]:
        entry = _STANDALONE.get(kind)
        if entry is None:
            raise InternalError(f"A2A 0.3 REST has no standalone form for {kind.__name__}")
        return entry


CODEC = RestCodec()
"""The one 0.3 REST codec instance."""
