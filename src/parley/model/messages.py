"""Messages exchanged between a client and an agent."""

from __future__ import annotations

import enum

from parley.model._base import JSONObject, Model
from parley.model.parts import Part, TextPart


class Role(enum.IntEnum):
    """Who sent a message. Values are the protobuf enum numbers."""

    USER = 1
    AGENT = 2


class Message(Model, frozen=True, kw_only=True):
    """One turn of communication: a role and at least one part."""

    message_id: str
    role: Role
    parts: tuple[Part, ...]
    context_id: str = ""
    task_id: str = ""
    metadata: JSONObject | None = None
    extensions: tuple[str, ...] = ()
    reference_task_ids: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The text of the message's text parts, joined by newlines ("" if none)."""
        return "\n".join(part.text for part in self.parts if isinstance(part, TextPart))
