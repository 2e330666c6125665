"""Building a send from what the caller has at hand: the user's message from text, parts or
a Message, and its configuration from keyword options."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from msgspec.structs import replace

from parley.model import (
    DataPart,
    JSONObject,
    Message,
    Part,
    RawPart,
    Role,
    SendMessageConfiguration,
    TextPart,
    UrlPart,
)

Content = str | Part | Sequence[Part] | Message
"""Text (one text part), one part, several parts, or a whole Message."""


def user_message(
    content: Content,
    *,
    task_id: str = "",
    context_id: str = "",
    metadata: JSONObject | None = None,
) -> Message:
    """A user message; a new one gets a fresh `message_id`, a given Message keeps its ids
    unless `task_id` / `context_id` are given."""
    if isinstance(content, Message):
        message = content
    else:
        parts: tuple[Part, ...]
        if isinstance(content, str):
            parts = (TextPart(text=content),)
        elif isinstance(content, TextPart | RawPart | UrlPart | DataPart):
            parts = (content,)
        else:
            parts = tuple(content)
        message = Message(message_id=uuid.uuid4().hex, role=Role.USER, parts=parts)
    changes: dict[str, object] = {}
    if task_id:
        changes["task_id"] = task_id
    if context_id:
        changes["context_id"] = context_id
    if metadata is not None:
        changes["metadata"] = metadata
    return replace(message, **changes) if changes else message


def configured(
    configuration: SendMessageConfiguration | None,
    return_immediately: bool,
    history_length: int | None,
    accepted_output_modes: Sequence[str],
) -> SendMessageConfiguration | None:
    """`configuration` with the options that were given (not left at their defaults);
    None when there is nothing to configure."""
    changes: dict[str, object] = {}
    if return_immediately:
        changes["return_immediately"] = True
    if history_length is not None:
        changes["history_length"] = history_length
    if accepted_output_modes:
        changes["accepted_output_modes"] = tuple(accepted_output_modes)
    if not changes:
        return configuration
    return replace(configuration or SendMessageConfiguration(), **changes)


SKILL_KEY = "skill"
"""The request metadata naming the skill to run (Parley's agents route by it)."""


def with_skill(metadata: JSONObject | None, skill: str) -> JSONObject | None:
    """`metadata` naming `skill`, if one is given."""
    if not skill:
        return metadata
    return {**(metadata or {}), SKILL_KEY: skill}
