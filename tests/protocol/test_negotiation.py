"""Version negotiation and extension activation (REFERENCE §1.2, §11)."""

from __future__ import annotations

import pytest

from parley.model import AgentExtension
from parley.protocol.errors import ExtensionSupportRequiredError, VersionNotSupportedError
from parley.protocol.negotiation import (
    RELEASED_VERSIONS,
    Version,
    activate_extensions,
    ask_version,
    parse_extensions,
    parse_version,
)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, Version.V0_3),
        ("", Version.V0_3),
        ("  ", Version.V0_3),
        ("0.3", Version.V0_3),
        ("1.0", Version.V1_0),
        ("1.0.0", Version.V1_0),
        ("1.0.7", Version.V1_0),
        (" 1.0 ", Version.V1_0),
        ("0.3.0", Version.V0_3),
    ],
)
def test_parse_version(header: str | None, expected: Version) -> None:
    """R-VER-6: absent or empty is 0.3; R-VER-2: patch numbers are ignored."""
    assert parse_version(header) is expected


@pytest.mark.parametrize("header", ["2.0", "1.2", "0.2", "latest", "1", "1.0.0.0", "v1.0", "1.x"])
def test_unsupported_versions(header: str) -> None:
    """R-VER-5: a version not served gives VersionNotSupportedError."""
    with pytest.raises(VersionNotSupportedError):
        parse_version(header)


def test_version_must_be_served_by_the_interface() -> None:
    """R-VER-5: absent header means 0.3, refused by a 1.0-only interface."""
    with pytest.raises(VersionNotSupportedError, match=r"serves 1\.0"):
        parse_version(None, served=[Version.V1_0])
    assert parse_version("1.0", served=[Version.V1_0]) is Version.V1_0


def test_parse_extensions_splits_and_dedupes() -> None:
    """R-SVC-3: multi-valued parameters are comma-joined."""
    assert parse_extensions(["a, b", "b,c", " ", ""]) == ("a", "b", "c")


def test_required_extension_rule() -> None:
    """R-CAP-2, R-EXT-3/4: unknown requests are ignored; a missing required one is an error."""
    declared = [AgentExtension(uri="urn:x", required=True), AgentExtension(uri="urn:y")]
    assert activate_extensions(declared, ["urn:x", "urn:unknown"]) == ("urn:x",)
    with pytest.raises(ExtensionSupportRequiredError) as raised:
        activate_extensions(declared, ["urn:y"])
    assert raised.value.metadata == {"extension": "urn:x"}
    empty: tuple[tuple[str, ...], list[str]] = ((), [])
    for nothing in empty:
        with pytest.raises(ExtensionSupportRequiredError) as raised:
            activate_extensions(declared, nothing)
        assert raised.value.message == (
            "The extension urn:x is required: request it in the A2A-Extensions header"
        )
        assert activate_extensions(declared[1:], nothing) == ()


def test_the_draft_is_known_but_served_only_when_asked() -> None:
    """1.1 (the draft) parses; a server serving the released versions refuses it."""
    assert parse_version("1.1") is Version.V1_1
    assert parse_version("1.1.0", (Version.V1_1,)) is Version.V1_1
    with pytest.raises(VersionNotSupportedError, match=r"serves 1\.0, 0\.3"):
        parse_version("1.1", RELEASED_VERSIONS)


def test_a_request_version_is_parsed_once_and_answered_in_until_known() -> None:
    """`ask_version` keeps the parse: the version asked for, answered in at once."""
    asked = ask_version(" 1.0.2 ", RELEASED_VERSIONS)
    assert (asked.text, asked.answer, asked.required()) == ("1.0.2", Version.V1_0, Version.V1_0)
    assert ask_version(None, RELEASED_VERSIONS).required() is Version.V0_3


def test_a_served_version_is_asked_once_and_a_refused_one_gets_its_own_error() -> None:
    """A served header value's AskedVersion is shared (it is immutable); a refused value's
    error is made per request, so no raised exception (and its traceback) is shared."""
    assert ask_version("1.0", RELEASED_VERSIONS) is ask_version(" 1.0", RELEASED_VERSIONS)
    assert ask_version("1.0", (Version.V1_0,)).answer is Version.V1_0
    first, second = ask_version("2.0", RELEASED_VERSIONS), ask_version("2.0", RELEASED_VERSIONS)
    assert first.asked is not second.asked
    assert isinstance(first.asked, VersionNotSupportedError)
    assert ask_version("1.0", [Version.V1_0, Version.V0_3]).required() is Version.V1_0


def test_an_unserved_version_is_answered_in_the_first_served_and_refused_when_needed() -> None:
    asked = ask_version("2.0", RELEASED_VERSIONS)
    assert asked.answer is RELEASED_VERSIONS[0]
    with pytest.raises(VersionNotSupportedError, match=r"'2\.0' is not supported") as refused:
        asked.required()
    assert refused.value.metadata["requestedVersion"] == "2.0"
