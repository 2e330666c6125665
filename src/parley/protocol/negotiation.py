"""Version negotiation (`A2A-Version`) and extension activation (`A2A-Extensions`).

This module and `parley.wire` are the only places that spell protocol versions.
No I/O here.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Collection, Iterable, Mapping, Sequence

import msgspec

from parley.model import AgentCard, AgentExtension
from parley.protocol.errors import ExtensionSupportRequiredError, VersionNotSupportedError


class Version(enum.Enum):
    """A protocol version Parley speaks. The value is the `Major.Minor` wire string.

    1.1 is the draft (`a2a-dev-1.1-draft.proto`): 1.0 plus task generations. A server
    serves it only when asked to (`parley serve --a2a-1.1-draft`); it shares 1.0's
    methods, routes, gRPC service and error forms, and has a codec of its own.
    """

    V0_3 = "0.3"
    V1_0 = "1.0"
    V1_1 = "1.1"

    __hash__ = object.__hash__
    """Members are singletons compared by identity: hashed in C, not by `Enum.__hash__`
    (a Python call per lookup of the per-version tables, several per request)."""


_BY_VALUE = {version.value: version for version in Version}

DEFAULT_VERSION = Version.V0_3
"""An absent or empty `A2A-Version` means 0.3 (R-VER-6)."""

VERSION_HEADER = "A2A-Version"
EXTENSIONS_HEADERS = {
    Version.V1_1: "A2A-Extensions",
    Version.V1_0: "A2A-Extensions",
    Version.V0_3: "X-A2A-Extensions",
}
GRPC_READS_VERSION: Mapping[Version, bool] = {
    Version.V1_1: True,
    Version.V1_0: True,
    Version.V0_3: False,
}
"""Whether a version's gRPC service reads `a2a-version` from a call's metadata: a call to
1.0's service must name 1.0 or a draft that shares the service; 0.3's service is 0.3
whatever a call says (its package is the version, and 0.3 had no such header)."""
DRAFT_VERSIONS = (Version.V1_1,)
"""Versions served only on request (`served_versions`)."""
RELEASED_VERSIONS = (Version.V1_0, Version.V0_3)
"""What a server serves by default: every version but the drafts, newest first."""


def served_by(card: AgentCard) -> tuple[Version, ...]:
    """What a server with this card serves unless told otherwise: the released versions,
    and each draft the card lists an interface of (after 1.0: a request whose version is
    unknown is answered in 1.0's form)."""
    listed = {interface.protocol_version for interface in card.supported_interfaces}
    drafts = tuple(version for version in DRAFT_VERSIONS if version.value in listed)
    return (RELEASED_VERSIONS[0], *drafts, *RELEASED_VERSIONS[1:])


NUMBERED_VERSIONS = frozenset({Version.V1_1})
"""Versions whose tasks carry generations (long-polls, `ifGenerationMatch`)."""
RELEASED_FORM = {Version.V1_1: Version.V1_0}
"""A draft's released version whose JSON-RPC methods, routes, gRPC service and error forms
it shares (the draft adds fields only)."""


def released_form(version: Version) -> Version:
    """The released version whose methods and routes `version` uses (itself if released)."""
    return RELEASED_FORM.get(version, version)


def parse_version(value: str | None, served: Collection[Version] = tuple(Version)) -> Version:
    """Parse an `A2A-Version` value; raise VersionNotSupportedError if not served.

    Patch numbers are ignored (R-VER-2): `1.0.3` is `1.0`. Absent or blank is 0.3.
    """
    text = (value or "").strip()
    if not text:
        version = DEFAULT_VERSION
    elif text in _BY_VALUE:  # the usual spelling, `Major.Minor`: no parsing
        version = _BY_VALUE[text]
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


class AskedVersion(msgspec.Struct, frozen=True):
    """A request's `A2A-Version`, parsed once per request (`ask_version`): `asked`, the
    version it names or the error it is refused with (raised only where the request's own
    version is needed: `required`), and `answer`, the version to answer in meanwhile."""

    text: str
    asked: Version | VersionNotSupportedError
    answer: Version

    def required(self) -> Version:
        """The version asked for; VersionNotSupportedError if it is not served."""
        if isinstance(self.asked, VersionNotSupportedError):
            raise self.asked
        return self.asked


def ask_version(value: str | None, served: Sequence[Version]) -> AskedVersion:
    """`value` parsed (`parse_version`) against `served`. Until a request's own version is
    known it is answered in the version it asks for if that is served, else in the first
    served one (a client that asks for one we cannot serve speaks one newer than 0.3)."""
    text = (value or "").strip()
    if isinstance(served, tuple):
        known = _asked(text, served)
        if known is not None:
            return known
    try:
        version = parse_version(text, served)
    except VersionNotSupportedError as error:
        return AskedVersion(text, error, served[0])
    return AskedVersion(text, version, version)


@functools.lru_cache(maxsize=64)
def _asked(text: str, served: tuple[Version, ...]) -> AskedVersion | None:
    """A served version's AskedVersion, made once per (header value, served versions): the
    same object answers every request that names it; None for a refused one (its error is
    made anew per request, as an exception raised and kept must not be shared)."""
    try:
        version = parse_version(text, served)
    except VersionNotSupportedError:
        return None
    return AskedVersion(text, version, version)


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
    if not requested:  # the usual call: only a required extension matters
        for extension in declared:
            if extension.required:
                raise _required(extension)
        return ()
    wanted = set(requested)
    active: list[str] = []
    for extension in declared:
        if extension.uri in wanted:
            active.append(extension.uri)
        elif extension.required:
            raise _required(extension)
    return tuple(active)


def _required(extension: AgentExtension) -> ExtensionSupportRequiredError:
    return ExtensionSupportRequiredError(
        f"The extension {extension.uri} is required: request it in the A2A-Extensions header",
        metadata={"extension": extension.uri},
    )
