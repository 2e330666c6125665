"""The A2A 1.0 JSON codec (ProtoJSON of `lf.a2a.v1` plus the spec's presence rules), used by
the JSON-RPC and HTTP+JSON bindings, push payloads and the agent card: its `JsonForms`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UrlPart,
)
from parley.protocol.negotiation import Version
from parley.wire.json_bytes import JSON
from parley.wire.json_codec import JsonCodec, JsonForms
from parley.wire.protojson import push
from parley.wire.v1_0 import card as cards
from parley.wire.v1_0 import content, operations, security

STANDALONE: dict[type[Any], tuple[Callable[[Any], JSON], Callable[[Any], Any]]] = {
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


def _mismatch(kind: type[Model]) -> tuple[str, str]:
    return "", f"expected a {_PART_NAMES.get(kind, kind.__name__)} part"


FORMS = JsonForms(
    version=Version.V1_0,
    label="A2A 1.0",
    requests=operations.REQUESTS,
    responses=operations.RESPONSES,
    standalone=STANDALONE,
    encode_event=content.encode_event,
    decode_event=content.decode_event,
    encode_card=cards.encode_card,
    decode_card=cards.decode_card,
    mismatch=_mismatch,
)
"""The 1.0 forms (also the base of the 1.1 draft's)."""

CODEC = JsonCodec(FORMS)
"""The 1.0 JSON codec."""
