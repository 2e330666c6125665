"""The A2A 1.0 JSON codec (ProtoJSON of `lf.a2a.v1` plus the spec's presence rules), used by
the JSON-RPC and HTTP+JSON bindings, push payloads and the agent card: its `JsonForms`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parley import model as m
from parley.protocol.negotiation import Version
from parley.wire.json_bytes import JSON
from parley.wire.json_codec import JsonCodec, JsonForms, each_content, each_part
from parley.wire.protojson import push
from parley.wire.v1_0 import card as cards
from parley.wire.v1_0 import content, operations, security

STANDALONE: dict[type[Any], tuple[Callable[[Any], JSON], Callable[[Any], Any]]] = {
    **each_part(content.encode_part, content.decode_part),
    **each_content(content.CONTENT.writers, content.CONTENT.readers),
    m.AuthenticationInfo: (push.encode_auth, push.decode_auth),
    m.TaskPushNotificationConfig: (push.encode_push_config, push.decode_push_config),
    m.AgentCard: (cards.encode_card, cards.decode_card),
    m.AgentSkill: (cards.encode_skill, cards.decode_skill),
    m.AgentCapabilities: (cards.encode_capabilities, cards.decode_capabilities),
    m.AgentInterface: (cards.encode_interface, cards.decode_interface),
    m.AgentExtension: (cards.encode_extension, cards.decode_extension),
    m.AgentProvider: (cards.encode_provider, cards.decode_provider),
    m.AgentCardSignature: (cards.encode_signature, cards.decode_signature),
    m.SecurityRequirement: (security.encode_requirement, security.decode_requirement),
    **security.STANDALONE,
    m.OAuthFlows: (security.encode_flows, security.decode_flows),
    m.SendMessageConfiguration: (operations.encode_configuration, operations.decode_configuration),
    m.ListTasksResponse: (
        operations.encode_list_tasks_result,
        operations.decode_list_tasks_result,
    ),
    m.ListTaskPushNotificationConfigsResponse: (
        push.encode_list_configs_result,
        push.decode_list_configs_result,
    ),
    **{kind: (encode, decode) for kind, encode, decode in operations.REQUESTS.values()},
}
"""Every model type 1.0 can express on its own: its standalone encoder and decoder."""

_PART_NAMES = {m.TextPart: "text", m.RawPart: "raw", m.UrlPart: "url", m.DataPart: "data"}


def _mismatch(kind: type[m.Model]) -> tuple[str, str]:
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
