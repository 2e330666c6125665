"""Page tokens whose checksum is right but whose content is not one `encode_page_token`
makes (`parley.protocol.paging`): a later format version, stray flags, a timestamp on an
untimed cursor, a task id that is not UTF-8 or empty, a timestamp past what a datetime
holds, and non-canonical base64 spellings — each an InvalidParamsError on `pageToken`
saying why (R-ERR-10, R-ERR-11). Such tokens are forged here with the module's own
layout, as a future version or a tampering client with the layout could make them."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest

from parley.protocol import paging
from parley.protocol.errors import InvalidParamsError
from parley.protocol.paging import PageCursor, decode_page_token, encode_page_token


def forged(version: int, flags: int, micros: int, task_id: bytes) -> str:
    payload = paging._HEADER.pack(version, flags, micros) + task_id
    raw = payload + paging._digest(payload)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def refused(token: str) -> str:
    with pytest.raises(InvalidParamsError) as caught:
        decode_page_token(token)
    [violation] = caught.value.field_violations
    assert violation.field == "pageToken"
    return violation.description


def test_a_forged_token_of_the_current_layout_is_accepted() -> None:
    """The forging is faithful: what it makes for a real cursor is what the encoder makes."""
    cursor = PageCursor(timestamp=datetime(2025, 3, 15, tzinfo=UTC), task_id="t-1")
    micros = int((cursor.timestamp - paging._EPOCH).total_seconds()) * 10**6  # type: ignore[operator]
    token = forged(paging._VERSION, paging._HAS_TIMESTAMP, micros, b"t-1")
    assert token == encode_page_token(cursor)
    assert decode_page_token(token) == cursor


@pytest.mark.parametrize("version", [0, 2, 255])
def test_another_format_version_is_refused(version: int) -> None:
    assert refused(forged(version, 0, 0, b"t")) == f"invalid page token (unknown version {version})"


@pytest.mark.parametrize(("flags", "micros"), [(2, 0), (3, 5), (0xFF, 0), (0, 1), (0, -1)])
def test_stray_flags_or_a_timestamp_without_its_flag_are_refused(flags: int, micros: int) -> None:
    assert refused(forged(paging._VERSION, flags, micros, b"t")) == (
        "invalid page token (malformed header)"
    )


def test_a_task_id_that_is_not_utf8_is_refused() -> None:
    assert refused(forged(paging._VERSION, 0, 0, b"\xff\xfe")) == (
        "invalid page token (malformed cursor)"
    )


def test_a_timestamp_past_what_a_datetime_holds_is_refused() -> None:
    token = forged(paging._VERSION, paging._HAS_TIMESTAMP, 2**62, b"t")
    assert refused(token) == "invalid page token (malformed cursor)"


def test_an_empty_task_id_is_refused() -> None:
    assert refused(forged(paging._VERSION, 0, 0, b"")) == "invalid page token (no task id)"


def test_an_untimed_cursor_round_trips() -> None:
    token = forged(paging._VERSION, 0, 0, "tâche".encode())
    assert decode_page_token(token) == PageCursor(timestamp=None, task_id="tâche")


@pytest.mark.parametrize("suffix", ["=", "==", "A"])
def test_padding_or_a_dangling_character_is_refused(suffix: str) -> None:
    token = encode_page_token(PageCursor(timestamp=None, task_id="t-1"))
    assert "invalid page token" in refused(token + suffix)


def test_a_non_canonical_spelling_of_the_same_bytes_is_refused() -> None:
    """Unused low bits of the last character may be set: the same bytes, another token."""
    token = encode_page_token(PageCursor(timestamp=None, task_id="t-12"))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(token[-1])
    assert len(token) % 4 in (2, 3)  # 22 bytes: the last character has spare bits
    other = token[:-1] + alphabet[last | 1]
    assert other != token
    assert refused(other) == "invalid page token (not canonical)"
