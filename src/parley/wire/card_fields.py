"""The agent-card pieces that the 0.3 JSON form and the 1.0 ProtoJSON form spell alike:
an extension's optional members, a signature, a skill's members before its security,
and the runs of card members both versions write in the same order. What differs
(member names, interfaces, security, the provider's member order) stays with each
version and comes in as a parameter.
"""

from __future__ import annotations

from collections.abc import Callable

from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentProvider,
    AgentSkill,
)
from parley.wire.protojson.fields import free
from parley.wire.reader import Obj


def extension_fields(extension: AgentExtension, out: Obj) -> Obj:
    """`out` (holding the version's `uri`, if any) with the extension's optional members."""
    if extension.description:
        out["description"] = extension.description
    if extension.required:
        out["required"] = True
    if extension.params is not None:
        out["params"] = free(extension.params)
    return out


def encode_signature(signature: AgentCardSignature) -> Obj:
    out: Obj = {"protected": signature.protected, "signature": signature.signature}
    if signature.header is not None:
        out["header"] = free(signature.header)
    return out


def skill_fields(skill: AgentSkill) -> Obj:
    """A skill's members up to its security requirements (named per version)."""
    out: Obj = {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "tags": list(skill.tags),
    }
    for key, values in (
        ("examples", skill.examples),
        ("inputModes", skill.input_modes),
        ("outputModes", skill.output_modes),
    ):
        if values:
            out[key] = list(values)
    return out


def add_card_body(
    card: AgentCard,
    out: Obj,
    encode_provider: Callable[[AgentProvider], Obj],
    encode_capabilities: Callable[[AgentCapabilities], Obj],
) -> None:
    """The provider, version, documentation URL and capabilities, in that order."""
    if card.provider is not None:
        out["provider"] = encode_provider(card.provider)
    out["version"] = card.version
    if card.documentation_url is not None:
        out["documentationUrl"] = card.documentation_url
    out["capabilities"] = encode_capabilities(card.capabilities)


def add_card_skills(card: AgentCard, out: Obj, encode_skill: Callable[[AgentSkill], Obj]) -> None:
    """The default input and output modes, then the skills."""
    out["defaultInputModes"] = list(card.default_input_modes)
    out["defaultOutputModes"] = list(card.default_output_modes)
    out["skills"] = [encode_skill(s) for s in card.skills]
