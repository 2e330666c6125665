"""Checks of the agent card itself: required fields, and interfaces that say what they
are (REFERENCE R-CARD, R-DATA)."""

from __future__ import annotations

from urllib.parse import urlsplit

from parley.client.card import HTTP_JSON_BINDING, JSONRPC_BINDING
from parley.conformance.context import CardContext
from parley.conformance.results import CheckFailedError, Level, Registry

checks = Registry()

_REQUIRED = (
    "name",
    "description",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)
_SKILL_REQUIRED = ("id", "name", "description", "tags")
_INTERFACE_REQUIRED = ("url", "protocolBinding", "protocolVersion")


@checks.card("card.required-fields", "R-DATA-8", Level.MUST, "the card's REQUIRED fields are set")
async def required_fields(context: CardContext) -> str:
    document = context.document
    if not isinstance(document, dict):
        raise CheckFailedError("the card is not a JSON object")
    missing = [name for name in _REQUIRED if document.get(name) in (None, "")]
    if "supportedInterfaces" not in document and "url" not in document:
        missing.append("supportedInterfaces (or the legacy url)")
    skills = document.get("skills")
    for index, skill in enumerate(skills if isinstance(skills, list) else []):
        lacking = [f for f in _SKILL_REQUIRED if not isinstance(skill, dict) or f not in skill]
        missing.extend(f"skills[{index}].{f}" for f in lacking)
    if missing:
        raise CheckFailedError("missing: " + ", ".join(missing))
    if context.card is None:
        raise CheckFailedError(f"the card does not decode: {context.decode_error}")
    return f"{len(_REQUIRED)} top-level fields and {len(skills or [])} skills"


@checks.card(
    "card.interfaces", "R-CARD-4", Level.MUST, "each interface states binding, version and URL"
)
async def interfaces(context: CardContext) -> str:
    document = context.document
    listed = document.get("supportedInterfaces") if isinstance(document, dict) else None
    if not isinstance(listed, list):
        return "a legacy card: its url and preferredTransport name the interface"
    if not listed:
        raise CheckFailedError("supportedInterfaces is empty")
    problems: list[str] = []
    for index, entry in enumerate(listed):
        if not isinstance(entry, dict):
            problems.append(f"[{index}] is not an object")
            continue
        problems.extend(f"[{index}].{f} missing" for f in _INTERFACE_REQUIRED if not entry.get(f))
        url = str(entry.get("url", ""))
        http = entry.get("protocolBinding") in (JSONRPC_BINDING, HTTP_JSON_BINDING)
        if http and urlsplit(url).scheme not in ("http", "https"):
            problems.append(f"[{index}].url {url!r} is not an absolute HTTP(S) URL")
    if problems:
        raise CheckFailedError("; ".join(problems))
    return f"{len(listed)} interfaces"
