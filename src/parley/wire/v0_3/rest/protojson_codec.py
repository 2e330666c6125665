"""The A2A 0.3 HTTP+JSON codec's `JsonForms`: ProtoJSON of the 0.3 proto (`a2a.v1`, read and
written by `parley.wire.protojson` with the 0.3 tables); the
agent card keeps the 0.3 JSON-RPC form, which is what 0.3 REST servers answer at `/v1/card`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parley import model as m
from parley.protocol.errors import MethodNotFoundError
from parley.protocol.negotiation import Version
from parley.wire.json_bytes import JSON
from parley.wire.json_codec import JsonCodec, JsonForms, each_content, each_part
from parley.wire.protojson import operations as protojson_operations
from parley.wire.protojson import parts, push
from parley.wire.protojson.content import V0_3
from parley.wire.v0_3 import card as cards
from parley.wire.v0_3 import push as jsonrpc_push
from parley.wire.v0_3.jsonrpc_codec import STANDALONE as JSONRPC_STANDALONE
from parley.wire.v0_3.rest import operations

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


STANDALONE: dict[type[Any], tuple[Callable[[Any], JSON], Callable[[Any], Any]]] = {
    **each_part(parts.encode_part_v0_3, parts.decode_part_v0_3),
    **each_content(V0_3.writers, V0_3.readers),
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


def _mismatch(kind: type[m.Model]) -> tuple[str, str]:
    return _PART_MISMATCH.get(kind, ("", f"expected {kind.__name__}"))


FORMS = JsonForms(
    version=Version.V0_3,
    label="A2A 0.3 REST",
    requests=operations.REQUESTS,
    responses=operations.RESPONSES,
    standalone=STANDALONE,
    encode_event=V0_3.encode_event,
    decode_event=V0_3.decode_event,
    encode_card=cards.encode_card,
    decode_card=cards.decode_card,
    mismatch=_mismatch,
)
"""The 0.3 REST forms. Output uses JSON (camelCase) names; input also takes the proto's
snake_case names; requests are the body with the path and query parameters merged in."""

CODEC = JsonCodec(FORMS)
"""The one 0.3 REST codec instance."""
