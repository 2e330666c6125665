"""`JsonCodec`: the A2A 1.0 JSON codec (ProtoJSON of `lf.a2a.v1` plus the spec's presence
rules), used by the JSON-RPC and HTTP+JSON bindings, push payloads and the agent card.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    Artifact,
    AuthenticationInfo,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    DataPart,
    DeviceCodeOAuthFlow,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    ListTaskPushNotificationConfigsResponse,
    ListTasksResponse,
    Message,
    Model,
    MutualTlsSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    PasswordOAuthFlow,
    RawPart,
    SecurityRequirement,
    SendMessageConfiguration,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UrlPart,
)
from parley.protocol.errors import InternalError, MethodNotFoundError
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.json_bytes import JSON
from parley.wire.protojson import push
from parley.wire.reader import fail
from parley.wire.v1_0 import card as cards
from parley.wire.v1_0 import content, operations, security

M = TypeVar("M", bound=Model)

_STANDALONE: dict[type[Any], tuple[Callable[[Any], JSON], Callable[[Any], Any]]] = {
    TextPart: (content.encode_part, content.decode_part),
    RawPart: (content.encode_part, content.decode_part),
    UrlPart: (content.encode_part, content.decode_part),
    DataPart: (content.encode_part, content.decode_part),
    Message: (content.encode_message, content.decode_message),
    TaskStatus: (content.encode_status, content.decode_status),
    Artifact: (content.encode_artifact, content.decode_artifact),
    Task: (content.encode_task, content.decode_task),
    TaskStatusUpdateEvent: (content.encode_status_event, content.decode_status_event),
    TaskArtifactUpdateEvent: (content.encode_artifact_event, content.decode_artifact_event),
    AuthenticationInfo: (push.encode_auth, push.decode_auth),
    TaskPushNotificationConfig: (push.encode_push_config, push.decode_push_config),
    AgentCard: (cards.encode_card, cards.decode_card),
    AgentSkill: (cards.encode_skill, cards.decode_skill),
    AgentCapabilities: (cards.encode_capabilities, cards.decode_capabilities),
    AgentInterface: (cards.encode_interface, cards.decode_interface),
    AgentExtension: (cards.encode_extension, cards.decode_extension),
    AgentProvider: (cards.encode_provider, cards.decode_provider),
    AgentCardSignature: (cards.encode_signature, cards.decode_signature),
    SecurityRequirement: (security.encode_requirement, security.decode_requirement),
    APIKeySecurityScheme: (security.encode_api_key, security.decode_api_key),
    HTTPAuthSecurityScheme: (security.encode_http_auth, security.decode_http_auth),
    OAuth2SecurityScheme: (security.encode_oauth2, security.decode_oauth2),
    OpenIdConnectSecurityScheme: (security.encode_open_id, security.decode_open_id),
    MutualTlsSecurityScheme: (security.encode_mtls, security.decode_mtls),
    OAuthFlows: (security.encode_flows, security.decode_flows),
    AuthorizationCodeOAuthFlow: (
        security.encode_authorization_code,
        security.decode_authorization_code,
    ),
    ClientCredentialsOAuthFlow: (
        security.encode_client_credentials,
        security.decode_client_credentials,
    ),
    DeviceCodeOAuthFlow: (security.encode_device_code, security.decode_device_code),
    ImplicitOAuthFlow: (security.encode_implicit, security.decode_implicit),
    PasswordOAuthFlow: (security.encode_password, security.decode_password),
    SendMessageConfiguration: (operations.encode_configuration, operations.decode_configuration),
    ListTasksResponse: (
        operations.encode_list_tasks_result,
        operations.decode_list_tasks_result,
    ),
    ListTaskPushNotificationConfigsResponse: (
        push.encode_list_configs_result,
        push.decode_list_configs_result,
    ),
    **{kind: (encode, decode) for kind, encode, decode in operations.REQUESTS.values()},
}
"""Every model type 1.0 can express on its own: its standalone encoder and decoder."""

_PART_NAMES = {TextPart: "text", RawPart: "raw", UrlPart: "url", DataPart: "data"}


class JsonCodec:
    """Model <-> 1.0 JSON values (parsed, not bytes: `parley.wire.json_bytes` does the bytes).

    Decoders raise only A2AError subclasses: InvalidParamsError naming the field for a
    bad shape, MethodNotFoundError for an unknown operation.
    """

    version: Version = Version.V1_0

    def decode_request(self, operation: Operation, payload: JSON) -> Model:
        entry = operations.REQUESTS.get(operation)
        if entry is None:
            raise MethodNotFoundError(f"Operation {operation!r} does not exist in A2A 1.0")
        request: Model = entry[2](payload)
        return request

    def encode_request(self, operation: Operation, request: Model) -> JSON:
        entry = operations.REQUESTS.get(operation)
        if entry is None:
            raise InternalError(f"Operation {operation!r} does not exist in A2A 1.0")
        kind, encode, _ = entry
        if type(request) is not kind:
            raise InternalError(
                f"{operation.value} takes a {kind.__name__}, not {type(request).__name__}"
            )
        return encode(request)

    def encode_response(self, operation: Operation, result: Any) -> JSON:
        """A unary result; streaming operations answer with `encode_event` instead."""
        entry = operations.RESPONSES.get(operation)
        if entry is None:
            raise InternalError(f"{operation.value} has no unary response: use encode_event")
        kinds, encode, _ = entry
        if type(result) not in kinds:
            raise InternalError(f"{operation.value} cannot return a {type(result).__name__}")
        return encode(result)

    def decode_response(self, operation: Operation, payload: JSON) -> Any:
        """A unary result; for a streaming operation, one event of its stream."""
        entry = operations.RESPONSES.get(operation)
        if entry is None:
            if operation in operations.REQUESTS:  # streaming
                return content.decode_event(payload)
            raise MethodNotFoundError(f"Operation {operation!r} does not exist in A2A 1.0")
        return entry[2](payload)

    def encode_event(self, event: StreamEvent) -> JSON:
        return content.encode_event(event)

    def decode_event(self, payload: JSON) -> StreamEvent:
        return content.decode_event(payload)

    def encode_card(self, card: AgentCard) -> JSON:
        return cards.encode_card(card)

    def decode_card(self, payload: JSON) -> AgentCard:
        return cards.decode_card(payload)

    def encode(self, value: Model) -> JSON:
        entry = _STANDALONE.get(type(value))
        if entry is None:
            raise InternalError(f"A2A 1.0 has no wire form for {type(value).__name__}")
        return entry[0](value)

    def decode(self, kind: type[M], payload: JSON) -> M:
        entry = _STANDALONE.get(kind)
        if entry is None:
            raise InternalError(f"A2A 1.0 has no wire form for {kind.__name__}")
        value = entry[1](payload)
        if type(value) is not kind:  # a part of another kind than asked for
            fail("", "", f"expected a {_PART_NAMES.get(kind, kind.__name__)} part")
        return value


CODEC = JsonCodec()
"""The 1.0 JSON codec."""
