"""Parts: the content of messages and artifacts (text, raw bytes, a URL, structured data).

Every part has a `text`: a text part's own text, an empty string for the others, so that
`part.text` reads the same whatever the kind of part.
"""

from __future__ import annotations

from typing import TypeAlias

from parley.model._base import JSONObject, JSONValue, Model


class TextPart(Model, frozen=True, kw_only=True):
    """Plain text content."""

    text: str
    media_type: str = ""
    filename: str = ""
    metadata: JSONObject | None = None


class RawPart(Model, frozen=True, kw_only=True):
    """Inline file content as raw bytes (0.3: a file part with `bytes`)."""

    raw: bytes
    media_type: str = ""
    filename: str = ""
    metadata: JSONObject | None = None

    @property
    def text(self) -> str:
        """No text: a file or data part (`TextPart.text` is a text part's)."""
        return ""


class UrlPart(Model, frozen=True, kw_only=True):
    """File content by reference (0.3: a file part with `uri`)."""

    url: str
    media_type: str = ""
    filename: str = ""
    metadata: JSONObject | None = None

    @property
    def text(self) -> str:
        """No text: a file or data part (`TextPart.text` is a text part's)."""
        return ""


class DataPart(Model, frozen=True, kw_only=True):
    """Structured data: any JSON value (0.3 requires an object)."""

    data: JSONValue
    media_type: str = ""
    filename: str = ""
    metadata: JSONObject | None = None

    @property
    def text(self) -> str:
        """No text: a file or data part (`TextPart.text` is a text part's)."""
        return ""


Part: TypeAlias = TextPart | RawPart | UrlPart | DataPart
"""One part of a message or artifact: exactly one kind of content."""
