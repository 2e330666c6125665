"""The 1.0 wire form of the agent card: interfaces, provider, capabilities, extensions,
skills and signatures (security lives in `security`). REQUIRED fields are always emitted.
"""

from __future__ import annotations

from typing import Any

from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    SecurityScheme,
)
from parley.wire import card_fields
from parley.wire.card_fields import add_card_body, add_card_skills, extension_fields, skill_fields
from parley.wire.protojson.fields import obj, required
from parley.wire.reader import (
    Obj,
    fail,
    field,
    listed,
    nested,
    opt_bool,
    opt_str,
    opt_str_or_none,
    req_str,
    str_list,
    struct,
)
from parley.wire.v1_0.security import (
    decode_requirement,
    decode_scheme,
    encode_requirement,
    encode_scheme,
)

encode_signature = card_fields.encode_signature
"""A signature is spelt alike in both versions."""


def encode_interface(interface: AgentInterface) -> Obj:
    out: Obj = {"url": interface.url, "protocolBinding": interface.protocol_binding}
    if interface.tenant:
        out["tenant"] = interface.tenant
    out["protocolVersion"] = interface.protocol_version
    return out


def decode_interface(value: Any) -> AgentInterface:
    d = obj(value)
    return AgentInterface(
        url=req_str(d, "url", ""),
        protocol_binding=req_str(d, "protocolBinding", "", "protocol_binding"),
        protocol_version=req_str(d, "protocolVersion", "", "protocol_version"),
        tenant=opt_str(d, "tenant", ""),
    )


def encode_provider(provider: AgentProvider) -> Obj:
    return {"url": provider.url, "organization": provider.organization}


def decode_provider(value: Any) -> AgentProvider:
    d = obj(value)
    return AgentProvider(url=req_str(d, "url", ""), organization=req_str(d, "organization", ""))


def encode_extension(extension: AgentExtension) -> Obj:
    return extension_fields(extension, {"uri": extension.uri} if extension.uri else {})


def decode_extension(value: Any) -> AgentExtension:
    d = obj(value)
    return AgentExtension(
        uri=opt_str(d, "uri", ""),
        description=opt_str(d, "description", ""),
        required=bool(opt_bool(d, "required", "")),
        params=struct(d, "params", ""),
    )


def encode_capabilities(capabilities: AgentCapabilities) -> Obj:
    """proto3 `optional` flags are emitted iff set, even when false (0.3's
    `stateTransitionHistory` has no 1.0 field and is dropped)."""
    out: Obj = {}
    if capabilities.streaming is not None:
        out["streaming"] = capabilities.streaming
    if capabilities.push_notifications is not None:
        out["pushNotifications"] = capabilities.push_notifications
    if capabilities.extensions:
        out["extensions"] = [encode_extension(e) for e in capabilities.extensions]
    if capabilities.extended_agent_card is not None:
        out["extendedAgentCard"] = capabilities.extended_agent_card
    return out


def decode_capabilities(value: Any) -> AgentCapabilities:
    d = obj(value)
    return AgentCapabilities(
        streaming=opt_bool(d, "streaming", ""),
        push_notifications=opt_bool(d, "pushNotifications", "", "push_notifications"),
        extended_agent_card=opt_bool(d, "extendedAgentCard", "", "extended_agent_card"),
        extensions=listed("extensions", decode_extension, d.get("extensions")),
    )


def encode_skill(skill: AgentSkill) -> Obj:
    out = skill_fields(skill)
    if skill.security_requirements:
        out["securityRequirements"] = [encode_requirement(r) for r in skill.security_requirements]
    return out


def decode_skill(value: Any) -> AgentSkill:
    """`description` and `tags` are REQUIRED but may be empty, so absent reads as empty."""
    d = obj(value)
    return AgentSkill(
        id=req_str(d, "id", ""),
        name=req_str(d, "name", ""),
        description=opt_str(d, "description", ""),
        tags=str_list(d, "tags", ""),
        examples=str_list(d, "examples", ""),
        input_modes=str_list(d, "inputModes", "", "input_modes"),
        output_modes=str_list(d, "outputModes", "", "output_modes"),
        security_requirements=listed(
            "securityRequirements",
            decode_requirement,
            field(d, "securityRequirements", "security_requirements"),
        ),
    )


def decode_signature(value: Any) -> AgentCardSignature:
    d = obj(value)
    return AgentCardSignature(
        protected=req_str(d, "protected", ""),
        signature=req_str(d, "signature", ""),
        header=struct(d, "header", ""),
    )


def encode_card(card: AgentCard) -> Obj:
    out: Obj = {
        "name": card.name,
        "description": card.description,
        "supportedInterfaces": [encode_interface(i) for i in card.supported_interfaces],
    }
    add_card_body(card, out, encode_provider, encode_capabilities)
    if card.security_schemes:
        out["securitySchemes"] = {k: encode_scheme(v) for k, v in card.security_schemes.items()}
    if card.security_requirements:
        out["securityRequirements"] = [encode_requirement(r) for r in card.security_requirements]
    add_card_skills(card, out, encode_skill)
    if card.signatures:
        out["signatures"] = [encode_signature(s) for s in card.signatures]
    if card.icon_url is not None:
        out["iconUrl"] = card.icon_url
    return out


def decode_card(value: Any) -> AgentCard:
    """REQUIRED fields that may legitimately be empty (description, the default modes,
    skills) read as empty when absent: ProtoJSON peers drop them."""
    d = obj(value)
    provider = d.get("provider")
    return AgentCard(
        name=req_str(d, "name", ""),
        description=opt_str(d, "description", ""),
        version=req_str(d, "version", ""),
        supported_interfaces=_interfaces(field(d, "supportedInterfaces", "supported_interfaces")),
        capabilities=required("capabilities", decode_capabilities, d.get("capabilities")),
        default_input_modes=str_list(d, "defaultInputModes", "", "default_input_modes"),
        default_output_modes=str_list(d, "defaultOutputModes", "", "default_output_modes"),
        skills=listed("skills", decode_skill, d.get("skills")),
        provider=None if provider is None else nested("provider", decode_provider, provider),
        documentation_url=opt_str_or_none(d, "documentationUrl", "", "documentation_url"),
        icon_url=opt_str_or_none(d, "iconUrl", "", "icon_url"),
        security_schemes=_schemes(field(d, "securitySchemes", "security_schemes")),
        security_requirements=listed(
            "securityRequirements",
            decode_requirement,
            field(d, "securityRequirements", "security_requirements"),
        ),
        signatures=listed("signatures", decode_signature, d.get("signatures")),
    )


def _interfaces(value: Any) -> tuple[AgentInterface, ...]:
    interfaces = listed("supportedInterfaces", decode_interface, value)
    if not interfaces:
        fail("", "supportedInterfaces", "at least one interface is required")
    return interfaces


def _schemes(value: Any) -> dict[str, SecurityScheme]:
    if value is None:
        return {}
    if type(value) is not dict:
        fail("", "securitySchemes", "expected a JSON object")
    return {
        name: nested(f"securitySchemes.{name}", decode_scheme, scheme)
        for name, scheme in value.items()
    }
