"""ListTasks cursor paging: the listing order, opaque page tokens, and slicing one page.

Tasks are listed by status timestamp descending, ties by id descending, untimed tasks last
(R-TASK-6, R-TASK-7). A token names the last task of a page by its sort position. No I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import struct
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

import msgspec

from parley.model import Task
from parley.protocol.errors import InvalidParamsError, invalid_field

DEFAULT_PAGE_SIZE = 50
"""Page size when the request gives none (R-TASK-9)."""

MIN_PAGE_SIZE = 1
MAX_PAGE_SIZE = 100
"""Bounds of `pageSize`; out of range is rejected, never clamped (R-TASK-9)."""

SortKey = tuple[bool, int, str]
"""(has a status timestamp, microseconds since the epoch, task id); listed descending."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_VERSION = 1
_HAS_TIMESTAMP = 0x01
_HEADER = struct.Struct(">BBq")  # version, flags, microseconds since the epoch
_DIGEST_SIZE = 8
_PERSON = b"parley.page.v1"
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_-]+")
_FIELD = "pageToken"


class PageCursor(msgspec.Struct, frozen=True, kw_only=True):
    """The position after which the next page starts: the last task of the previous page."""

    timestamp: datetime | None
    """Status timestamp of that task (None: it had none). Naive values are read as UTC."""
    task_id: str

    def key(self) -> SortKey:
        return _key(self.timestamp, self.task_id)


def micros(timestamp: datetime) -> int:
    """µs since the epoch (a naive value read as UTC)."""
    aware = timestamp if timestamp.tzinfo is not None else timestamp.replace(tzinfo=UTC)
    delta = aware - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _key(timestamp: datetime | None, task_id: str) -> SortKey:
    if timestamp is None:
        return (False, 0, task_id)
    return (True, micros(timestamp), task_id)


def sort_key(task: Task) -> SortKey:
    """The listing key of a task; sort with `reverse=True` for the ListTasks order."""
    return _key(task.status.timestamp, task.id)


def sort_tasks(tasks: Iterable[Task]) -> list[Task]:
    """Tasks in ListTasks order: newest status first, ties by id, untimed last."""
    return sorted(tasks, key=sort_key, reverse=True)


def cursor_of(task: Task) -> PageCursor:
    """The cursor naming `task`'s current position in the listing."""
    return PageCursor(timestamp=task.status.timestamp, task_id=task.id)


def check_page_size(page_size: int | None) -> int:
    """The effective page size: the default for None; InvalidParamsError out of range."""
    if page_size is None:
        return DEFAULT_PAGE_SIZE
    if not MIN_PAGE_SIZE <= page_size <= MAX_PAGE_SIZE:
        raise invalid_field(
            "pageSize", f"must be between {MIN_PAGE_SIZE} and {MAX_PAGE_SIZE}, got {page_size}"
        )
    return page_size


def page(
    tasks_sorted: Sequence[Task], cursor: PageCursor | None, page_size: int | None = None
) -> tuple[tuple[Task, ...], PageCursor | None]:
    """One page of `tasks_sorted` (in `sort_tasks` order) after `cursor`, and the next cursor.

    The page starts at the first task strictly after the cursor's position, so a task
    inserted or updated between requests (its new timestamp sorts before the cursor) is
    neither repeated nor does it shift the tasks that did not change. The next cursor is
    None when nothing follows the page.
    """
    size = check_page_size(page_size)
    start = 0 if cursor is None else _first_after(tasks_sorted, cursor.key())
    chunk = tuple(tasks_sorted[start : start + size])
    if not chunk or start + size >= len(tasks_sorted):
        return chunk, None
    return chunk, cursor_of(chunk[-1])


def _first_after(tasks_sorted: Sequence[Task], key: SortKey) -> int:
    """Index of the first task whose key is below `key` (binary search, descending list)."""
    low, high = 0, len(tasks_sorted)
    while low < high:
        middle = (low + high) // 2
        if sort_key(tasks_sorted[middle]) < key:
            high = middle
        else:
            low = middle + 1
    return low


def _digest(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=_DIGEST_SIZE, person=_PERSON).digest()


def encode_page_token(cursor: PageCursor) -> str:
    """An opaque, URL-safe token for `cursor` (unpadded base64url of a checked binary form)."""
    has_timestamp, micros, task_id = cursor.key()
    flags = _HAS_TIMESTAMP if has_timestamp else 0
    payload = _HEADER.pack(_VERSION, flags, micros) + task_id.encode("utf-8")
    raw = payload + _digest(payload)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_page_token(token: str) -> PageCursor:
    """The cursor in a token from `encode_page_token`; InvalidParamsError for anything else."""
    raw = _unbase64(token)
    if len(raw) < _HEADER.size + _DIGEST_SIZE:
        raise _bad_token("too short")
    payload, digest = raw[:-_DIGEST_SIZE], raw[-_DIGEST_SIZE:]
    if not hmac.compare_digest(digest, _digest(payload)):
        raise _bad_token("checksum mismatch")
    version, flags, micros = _HEADER.unpack_from(payload)
    if version != _VERSION:
        raise _bad_token(f"unknown version {version}")
    if flags not in (0, _HAS_TIMESTAMP) or (flags == 0 and micros != 0):
        raise _bad_token("malformed header")
    try:
        task_id = payload[_HEADER.size :].decode("utf-8")
        timestamp = _EPOCH + timedelta(microseconds=micros) if flags else None
    except (UnicodeDecodeError, OverflowError) as exc:
        raise _bad_token("malformed cursor") from exc
    if not task_id:
        raise _bad_token("no task id")
    return PageCursor(timestamp=timestamp, task_id=task_id)


def _unbase64(token: str) -> bytes:
    """The bytes of a canonical unpadded base64url string (no other spelling is accepted)."""
    if not _TOKEN_CHARS.fullmatch(token) or len(token) % 4 == 1:
        raise _bad_token("not base64url")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError) as exc:
        raise _bad_token("not base64url") from exc
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != token:
        raise _bad_token("not canonical")
    return raw


def _bad_token(reason: str) -> InvalidParamsError:
    return invalid_field(_FIELD, f"invalid page token ({reason})")
