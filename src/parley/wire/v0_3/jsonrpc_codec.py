"""The A2A 0.3 JSON-RPC codec's `JsonForms`: model objects to and from parsed JSON values,
as the 0.3 JSON schema (`a2a.json`) defines them; and the standalone form of every model
type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parley import model as m
from parley.protocol.errors import MethodNotFoundError
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation
from parley.wire.json_bytes import JSON
from parley.wire.json_codec import JsonCodec, JsonForms, each_content, each_part
from parley.wire.v0_3 import card as cards
from parley.wire.v0_3 import content, events, operations, parts, push, security

# Why a part of the wrong kind is not the part asked for: (field, description).
_PART_MISMATCH = {
    m.TextPart: ("kind", "expected 'text'"),
    m.DataPart: ("kind", "expected 'data'"),
    m.RawPart: ("file.bytes", "is required"),
    m.UrlPart: ("file.uri", "is required"),
}


def _request(operation: Operation) -> tuple[Callable[[Any], JSON], Callable[[Any], m.Model]]:
    return operations.REQUEST_ENCODERS[operation], operations.REQUEST_DECODERS[operation]


def _list_tasks(value: Any) -> Any:
    raise MethodNotFoundError("ListTasks does not exist in A2A 0.3")


# The standalone form of each model type: (encoder, decoder).
STANDALONE: dict[type[m.Model], tuple[Callable[[Any], JSON], Callable[[Any], Any]]] = {
    **each_part(parts.encode_part, parts.decode_part),
    **each_content(content.WRITERS, events.READERS),
    m.AuthenticationInfo: (push.encode_auth, push.decode_auth),
    m.TaskPushNotificationConfig: (push.encode_task_push_config, push.decode_task_push_config),
    m.AgentCard: (cards.encode_card, cards.decode_card),
    m.AgentSkill: (cards.encode_skill, cards.decode_skill),
    m.AgentCapabilities: (
        cards.encode_standalone_capabilities,
        cards.decode_standalone_capabilities,
    ),
    m.AgentInterface: (cards.encode_interface, cards.decode_interface),
    m.AgentExtension: (cards.encode_extension, cards.decode_extension),
    m.AgentProvider: (cards.encode_provider, cards.decode_provider),
    m.AgentCardSignature: (cards.encode_signature, cards.decode_signature),
    m.SecurityRequirement: (security.encode_requirement, security.decode_requirement),
    m.APIKeySecurityScheme: (security.encode_scheme, security.decode_scheme),
    m.HTTPAuthSecurityScheme: (security.encode_scheme, security.decode_scheme),
    m.OAuth2SecurityScheme: (security.encode_scheme, security.decode_scheme),
    m.OpenIdConnectSecurityScheme: (security.encode_scheme, security.decode_scheme),
    m.MutualTlsSecurityScheme: (security.encode_scheme, security.decode_scheme),
    m.OAuthFlows: (security.encode_flows, security.decode_flows),
    m.SendMessageConfiguration: (
        operations.encode_configuration,
        operations.decode_configuration,
    ),
    m.SendMessageRequest: _request(Operation.SEND_MESSAGE),
    m.GetTaskRequest: _request(Operation.GET_TASK),
    m.CancelTaskRequest: _request(Operation.CANCEL_TASK),
    m.SubscribeToTaskRequest: _request(Operation.SUBSCRIBE_TO_TASK),
    m.GetTaskPushNotificationConfigRequest: _request(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG),
    m.ListTaskPushNotificationConfigsRequest: _request(
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS
    ),
    m.DeleteTaskPushNotificationConfigRequest: _request(
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG
    ),
    m.GetExtendedAgentCardRequest: _request(Operation.GET_EXTENDED_AGENT_CARD),
    m.ListTaskPushNotificationConfigsResponse: (
        operations.encode_push_list,
        operations.decode_push_list,
    ),
    m.ListTasksRequest: (_list_tasks, _list_tasks),
    m.ListTasksResponse: (_list_tasks, _list_tasks),
}


def _mismatch(kind: type[m.Model]) -> tuple[str, str]:
    return _PART_MISMATCH.get(kind, ("", f"expected {kind.__name__}"))


FORMS = JsonForms(
    version=Version.V0_3,
    label="A2A 0.3",
    requests={
        operation: (OPERATIONS[operation].request, *_request(operation))
        for operation in operations.REQUEST_DECODERS
    },
    responses=operations.RESPONSES,
    standalone=STANDALONE,
    encode_event=events.encode_event,
    decode_event=events.decode_event,
    encode_card=cards.encode_card,
    decode_card=cards.decode_card,
    mismatch=_mismatch,
)
"""The 0.3 JSON-RPC forms: requests are the `params` (None, no `params`, for
agent/getAuthenticatedExtendedCard); ListTasks does not exist (MethodNotFoundError)."""

CODEC = JsonCodec(FORMS)
"""The one 0.3 JSON codec instance."""
