"""The 0.3 agent card: top-level `url`/`preferredTransport`/`additionalInterfaces`
against the model's interface list, capabilities, skills, extensions and signatures.
"""

from __future__ import annotations

from typing import Any

import msgspec

from parley import model as m
from parley.protocol.errors import InternalError
from parley.wire import card_fields as common
from parley.wire.reader import fail
from parley.wire.v0_3.fields import (
    Obj,
    flag,
    ident,
    items,
    nested,
    obj,
    optional_metadata,
    optional_text,
    required_items,
    required_strings,
    strings,
    text,
)
from parley.wire.v0_3.security import (
    decode_requirement,
    decode_schemes,
    encode_requirement,
    encode_schemes,
)

PROTOCOL_VERSION = "0.3.0"
"""What an encoded card declares as its `protocolVersion`."""
INTERFACE_VERSION = "0.3"
"""The `protocol_version` of every interface read from a 0.3 card."""
DEFAULT_TRANSPORT = "JSONRPC"
EXTENDED_CARD_FLAG = "supportsAuthenticatedExtendedCard"
encode_signature = common.encode_signature
"""A signature is spelt alike in both versions."""

# --- small parts of the card ---------------------------------------------------------------


def encode_interface(interface: m.AgentInterface) -> Obj:
    """`{url, transport}`: the protocol version is implied, the tenant has no 0.3 home."""
    return {"url": interface.url, "transport": interface.protocol_binding}


def decode_interface(value: Any) -> m.AgentInterface:
    d = obj(value)
    return m.AgentInterface(
        url=ident(d, "url"),
        protocol_binding=ident(d, "transport"),
        protocol_version=INTERFACE_VERSION,
    )


def encode_extension(extension: m.AgentExtension) -> Obj:
    return common.extension_fields(extension, {"uri": extension.uri})


def decode_extension(value: Any) -> m.AgentExtension:
    d = obj(value)
    return m.AgentExtension(
        uri=ident(d, "uri"),
        description=optional_text(d.get("description"), "description"),
        required=flag(d.get("required"), "required"),
        params=optional_metadata(d.get("params"), "params"),
    )


def encode_capabilities(capabilities: m.AgentCapabilities) -> Obj:
    """The card's capabilities; `extended_agent_card` lives at the card's top level."""
    out: Obj = {}
    for key, value in (
        ("streaming", capabilities.streaming),
        ("pushNotifications", capabilities.push_notifications),
        ("stateTransitionHistory", capabilities.state_transition_history),
    ):
        if value is not None:
            out[key] = value
    if capabilities.extensions:
        out["extensions"] = [encode_extension(e) for e in capabilities.extensions]
    return out


def _optional_bool(d: Obj, key: str) -> bool | None:
    value = d.get(key)
    if value is None or type(value) is bool:
        return value
    fail("", key, "expected true or false")


def decode_capabilities(value: Any) -> m.AgentCapabilities:
    """The card's capabilities, without the extended-card flag (see `decode_card`)."""
    d = obj(value)
    return m.AgentCapabilities(
        streaming=_optional_bool(d, "streaming"),
        push_notifications=_optional_bool(d, "pushNotifications"),
        state_transition_history=_optional_bool(d, "stateTransitionHistory"),
        extensions=items(d.get("extensions"), decode_extension, "extensions"),
    )


def encode_standalone_capabilities(capabilities: m.AgentCapabilities) -> Obj:
    """Capabilities on their own (never sent alone by 0.3): the card's top-level
    extended-card flag travels inside, under its 0.3 name."""
    out = encode_capabilities(capabilities)
    if capabilities.extended_agent_card is not None:
        out[EXTENDED_CARD_FLAG] = capabilities.extended_agent_card
    return out


def decode_standalone_capabilities(value: Any) -> m.AgentCapabilities:
    capabilities = decode_capabilities(value)
    extended = _optional_bool(value, EXTENDED_CARD_FLAG)
    return msgspec.structs.replace(capabilities, extended_agent_card=extended)


def encode_skill(skill: m.AgentSkill) -> Obj:
    out = common.skill_fields(skill)
    if skill.security_requirements:
        out["security"] = [encode_requirement(r) for r in skill.security_requirements]
    return out


def decode_skill(value: Any) -> m.AgentSkill:
    d = obj(value)
    return m.AgentSkill(
        id=ident(d, "id"),
        name=ident(d, "name"),
        description=text(d, "description"),
        tags=required_strings(d, "tags"),
        examples=strings(d.get("examples"), "examples"),
        input_modes=strings(d.get("inputModes"), "inputModes"),
        output_modes=strings(d.get("outputModes"), "outputModes"),
        security_requirements=items(d.get("security"), decode_requirement, "security"),
    )


def encode_provider(provider: m.AgentProvider) -> Obj:
    return {"organization": provider.organization, "url": provider.url}


def decode_provider(value: Any) -> m.AgentProvider:
    d = obj(value)
    return m.AgentProvider(organization=ident(d, "organization"), url=ident(d, "url"))


def decode_signature(value: Any) -> m.AgentCardSignature:
    d = obj(value)
    return m.AgentCardSignature(
        protected=ident(d, "protected"),
        signature=ident(d, "signature"),
        header=optional_metadata(d.get("header"), "header"),
    )


# --- the card ------------------------------------------------------------------------------


def card_interfaces(card: m.AgentCard) -> list[m.AgentInterface]:
    """The interfaces a 0.3 card lists: those of a 0.x protocol version, else all."""
    legacy = [i for i in card.supported_interfaces if i.protocol_version.startswith("0.")]
    return legacy or list(card.supported_interfaces)


def encode_card(card: m.AgentCard) -> Obj:
    """The first 0.3 interface is `url` + `preferredTransport`; with several, all of them
    (the first included) are `additionalInterfaces`."""
    interfaces = card_interfaces(card)
    if not interfaces:
        raise InternalError("An agent card needs at least one interface")
    main = interfaces[0]
    out: Obj = {
        "protocolVersion": PROTOCOL_VERSION,
        "name": card.name,
        "description": card.description,
        "url": main.url,
        "preferredTransport": main.protocol_binding,
    }
    if len(interfaces) > 1:
        out["additionalInterfaces"] = [encode_interface(i) for i in interfaces]
    if card.icon_url is not None:
        out["iconUrl"] = card.icon_url
    common.add_card_body(card, out, encode_provider, encode_capabilities)
    return _encode_card_rest(card, out)


def _encode_card_rest(card: m.AgentCard, out: Obj) -> Obj:
    if card.security_schemes:
        out["securitySchemes"] = encode_schemes(card.security_schemes)
    if card.security_requirements:
        out["security"] = [encode_requirement(r) for r in card.security_requirements]
    common.add_card_skills(card, out, encode_skill)
    extended = card.capabilities.extended_agent_card
    if extended is not None:
        out[EXTENDED_CARD_FLAG] = extended
    if card.signatures:
        out["signatures"] = [encode_signature(s) for s in card.signatures]
    return out


def _decode_interfaces(d: Obj) -> tuple[m.AgentInterface, ...]:
    """The main interface, then every additional one that is not a repeat of an earlier one."""
    transport = d.get("preferredTransport")
    main = m.AgentInterface(
        url=ident(d, "url"),
        protocol_binding=DEFAULT_TRANSPORT if transport is None else ident(d, "preferredTransport"),
        protocol_version=INTERFACE_VERSION,
    )
    out = [main]
    for interface in items(d.get("additionalInterfaces"), decode_interface, "additionalInterfaces"):
        if interface not in out:
            out.append(interface)
    return tuple(out)


def decode_card(value: Any) -> m.AgentCard:
    """Every interface gets protocol version 0.3, whatever `protocolVersion` says (the
    card is read as a 0.3 card); `supportsAuthenticatedExtendedCard` becomes
    `capabilities.extended_agent_card`."""
    d = obj(value)
    text(d, "protocolVersion")  # required by the schema; its value is not kept
    capabilities = nested(d.get("capabilities"), decode_capabilities, "capabilities")
    extended = _optional_bool(d, EXTENDED_CARD_FLAG)
    if extended is not None:
        capabilities = msgspec.structs.replace(capabilities, extended_agent_card=extended)
    provider = d.get("provider")
    schemes = d.get("securitySchemes")
    return m.AgentCard(
        name=ident(d, "name"),
        description=text(d, "description"),
        version=ident(d, "version"),
        supported_interfaces=_decode_interfaces(d),
        capabilities=capabilities,
        default_input_modes=required_strings(d, "defaultInputModes"),
        default_output_modes=required_strings(d, "defaultOutputModes"),
        skills=required_items(d.get("skills"), decode_skill, "skills"),
        provider=None if provider is None else nested(provider, decode_provider, "provider"),
        documentation_url=_optional_str(d, "documentationUrl"),
        icon_url=_optional_str(d, "iconUrl"),
        security_schemes={} if schemes is None else decode_schemes(schemes),
        security_requirements=items(d.get("security"), decode_requirement, "security"),
        signatures=items(d.get("signatures"), decode_signature, "signatures"),
    )


def _optional_str(d: Obj, key: str) -> str | None:
    value = d.get(key)
    if value is None or type(value) is str:
        return value
    fail("", key, "expected a string")
