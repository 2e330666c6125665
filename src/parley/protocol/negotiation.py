"""Version negotiation (`A2A-Version`) and extension activation (`A2A-Extensions`).

This module and `parley.wire` are the only places that spell protocol versions.
No I/O here.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable

from parley.model import AgentExtension
from parley.protocol.errors import ExtensionSupportRequiredError, VersionNotSupportedError


class Version(enum.Enum):
    """A protocol version Parley speaks. The value is the `Major.Minor` wire string."""

    V0_3 = "0.3"
    V1_0 = "1.0"


_BY_VALUE = {version.value: version for version in Version}

DEFAULT_VERSION = Version.V0_3
"""An absent or empty `A2A-Version` means 0.3 (R-VER-6)."""

VERSION_HEADER = "A2A-Version"
EXTENSIONS_HEADERS = {Version.V1_0: "A2A-Extensions", Version.V0_3: "X-A2A-Extensions"}


def parse_version(value: str | None, served: Collection[Version] = tuple(Version)) -> Version:
    """Parse an `A2A-Version` value; raise VersionNotSupportedError if not served.

    Patch numbers are ignored (R-VER-2): `1.0.3` is `1.0`. Absent or blank is 0.3.
    """
    text = (value or "").strip()
    if not text:
        version = DEFAULT_VERSION
    else:
        pieces = text.split(".")
        if len(pieces) not in (2, 3) or not all(p.isdigit() for p in pieces):
            raise VersionNotSupportedError(
                f"Malformed A2A-Version {text!r}: expected Major.Minor",
                metadata={"requestedVersion": text[:64]},
            )
        found = _BY_VALUE.get(f"{int(pieces[0])}.{int(pieces[1])}")
        if found is None:
            raise _unsupported(text, served)
        version = found
    if version not in served:
        raise _unsupported(text or version.value, served)
    return version


def _unsupported(text: str, served: Collection[Version]) -> VersionNotSupportedError:
    offered = ", ".join(v.value for v in served)
    return VersionNotSupportedError(
        f"A2A-Version {text!r} is not supported; this interface serves {offered}",
        metadata={"requestedVersion": text[:64], "supportedVersions": offered},
    )


def parse_extensions(values: Iterable[str]) -> tuple[str, ...]:
    """Split one or more `A2A-Extensions` header values into unique URIs, in order."""
    seen: dict[str, None] = {}
    for value in values:
        for item in value.split(","):
            uri = item.strip()
            if uri:
                seen.setdefault(uri, None)
    return tuple(seen)


def activate_extensions(
    declared: Iterable[AgentExtension], requested: Iterable[str]
) -> tuple[str, ...]:
    """The extensions to activate: requested and declared. Enforce `required` ones.

    Requested but undeclared URIs are ignored (R-EXT-3); a declared `required`
    extension the client did not request raises ExtensionSupportRequiredError (R-CAP-2).
    """
    wanted = set(requested)
    active: list[str] = []
    for extension in declared:
        if extension.uri in wanted:
            active.append(extension.uri)
        elif extension.required:
            raise ExtensionSupportRequiredError(
                f"The extension {extension.uri} is required: request it in the "
                "A2A-Extensions header",
                metadata={"extension": extension.uri},
            )
    return tuple(active)
