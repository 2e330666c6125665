"""ListTasks cursor paging: order, page tokens, and stability under concurrent changes.

R-TASK-6 (cursor pagination), R-TASK-7 (status timestamp descending), R-TASK-9 (page
size bounds), REFERENCE §8.5 (tie-break on id, stable across pages).
"""

from __future__ import annotations

import base64
import random
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from parley.model import Task, TaskState, TaskStatus
from parley.protocol import paging
from parley.protocol.errors import InvalidParamsError
from parley.protocol.paging import PageCursor, decode_page_token, encode_page_token
from tests.strategies import ids, timestamps

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def make(task_id: str, at: datetime | None) -> Task:
    return Task(
        id=task_id, context_id="c", status=TaskStatus(state=TaskState.WORKING, timestamp=at)
    )


def field_of(error: InvalidParamsError) -> str:
    return error.field_violations[0].field


cursors = st.builds(
    PageCursor, timestamp=st.none() | timestamps, task_id=st.text(min_size=1, max_size=40)
)


@given(cursors)
def test_token_round_trip(cursor: PageCursor) -> None:
    token = encode_page_token(cursor)
    assert token.isascii()
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert decode_page_token(token) == cursor


def test_token_of_a_naive_or_offset_timestamp_is_the_same_instant() -> None:
    naive = datetime(2025, 3, 15, 18, 30)
    decoded = decode_page_token(encode_page_token(PageCursor(timestamp=naive, task_id="t")))
    assert decoded.timestamp == naive.replace(tzinfo=UTC)
    offset = datetime(2025, 3, 15, 20, 30, tzinfo=timezone(timedelta(hours=2)))
    decoded = decode_page_token(encode_page_token(PageCursor(timestamp=offset, task_id="t")))
    assert decoded.timestamp == offset
    assert decoded.key() == PageCursor(timestamp=offset, task_id="t").key()


@given(st.text(max_size=200))
def test_garbage_strings_are_invalid_params(token: str) -> None:
    """Any string that is not one of our tokens is InvalidParams on `pageToken`."""
    with pytest.raises(InvalidParamsError) as caught:
        decode_page_token(token)
    assert field_of(caught.value) == "pageToken"


@given(st.binary(max_size=120))
def test_well_formed_base64_of_random_bytes_is_invalid_params(raw: bytes) -> None:
    token = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    with pytest.raises(InvalidParamsError):
        decode_page_token(token)


@given(cursors, st.data())
def test_tampered_tokens_are_invalid_params(cursor: PageCursor, data: st.DataObject) -> None:
    """Changing any one character of a token makes it invalid (integrity check)."""
    token = encode_page_token(cursor)
    index = data.draw(st.integers(0, len(token) - 1))
    replacement = data.draw(
        st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/.")
    )
    tampered = token[:index] + replacement + token[index + 1 :]
    if tampered == token:
        return
    with pytest.raises(InvalidParamsError):
        decode_page_token(tampered)
    with pytest.raises(InvalidParamsError):
        decode_page_token(token[:-1])
    with pytest.raises(InvalidParamsError):
        decode_page_token(token + "A")


def test_order_is_newest_first_ties_by_id_untimed_last() -> None:
    """R-TASK-7: status timestamp descending; REFERENCE §8.5: tie-break on id."""
    tasks = [
        make("b", T0),
        make("x", None),
        make("a", T0),
        make("c", T0 + timedelta(seconds=1)),
        make("y", None),
        # 00:00:00.5 UTC: between "c" and the tie at T0.
        make("d", datetime(2024, 12, 31, 22, 0, 0, 500_000, tzinfo=timezone(timedelta(hours=-2)))),
    ]
    assert [t.id for t in paging.sort_tasks(tasks)] == ["c", "d", "b", "a", "y", "x"]


def test_page_sizes() -> None:
    """R-TASK-9: default 50, 1..100, out of range rejected (not clamped)."""
    tasks = paging.sort_tasks(make(f"t{i:03}", T0 + timedelta(seconds=i)) for i in range(120))
    first, cursor = paging.page(tasks, None)
    assert len(first) == paging.DEFAULT_PAGE_SIZE == 50
    assert len(paging.page(tasks, None, 100)[0]) == 100
    assert cursor == paging.cursor_of(first[-1])
    for bad in (0, 101, -5):
        with pytest.raises(InvalidParamsError) as caught:
            paging.page(tasks, None, bad)
        assert field_of(caught.value) == "pageSize"


def test_last_page_has_no_cursor() -> None:
    """R-TASK-4: the last page has an empty nextPageToken."""
    tasks = paging.sort_tasks(make(f"t{i}", T0) for i in range(10))
    assert paging.page(tasks, None, 10)[1] is None
    chunk, cursor = paging.page(tasks, None, 4)
    assert cursor is not None
    chunk, cursor = paging.page(tasks, cursor, 4)
    chunk, cursor = paging.page(tasks, cursor, 4)
    assert (len(chunk), cursor) == (2, None)
    assert paging.page([], None, 5) == ((), None)
    # A cursor past everything gives an empty last page.
    assert paging.page(tasks, PageCursor(timestamp=None, task_id=""), 5) == ((), None)


def test_cursor_of_a_deleted_task_still_positions() -> None:
    tasks = paging.sort_tasks(make(f"t{i}", T0 + timedelta(seconds=i)) for i in range(6))
    first, cursor = paging.page(tasks, None, 3)
    assert cursor is not None
    remaining = [t for t in tasks if t.id != first[-1].id]
    assert [t.id for t in paging.page(remaining, cursor, 3)[0]] == ["t2", "t1", "t0"]


class Store:
    """A minimal in-memory listing driven by a monotonic clock, as a server store would."""

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}
        self.clock = T0

    def tick(self) -> datetime:
        self.clock += timedelta(milliseconds=1)
        return self.clock

    def put(self, task: Task) -> None:
        self.tasks[task.id] = task

    def touch(self, task_id: str) -> None:
        task = self.tasks[task_id]
        self.put(replace(task, status=replace(task.status, timestamp=self.tick())))

    def list(self, token: str, size: int) -> tuple[list[str], str]:
        cursor = decode_page_token(token) if token else None
        chunk, nxt = paging.page(paging.sort_tasks(self.tasks.values()), cursor, size)
        return [t.id for t in chunk], encode_page_token(nxt) if nxt else ""


@pytest.mark.parametrize("seed", range(5))
def test_paging_250_tasks_with_inserts_and_updates_between_pages(seed: int) -> None:
    """R-TASK-6/7, §8.5: changed tasks move to the front and are not repeated; every task
    that existed and was not updated appears exactly once."""
    rng = random.Random(seed)
    store = Store()
    for i in range(250):
        # Many equal timestamps (ties broken by id) and a few untimed tasks.
        at = None if i % 50 == 7 else T0 - timedelta(seconds=i // 4)
        store.put(make(f"task-{rng.randrange(10**9):09}-{i}", at))
    original = set(store.tasks)
    updated: set[str] = set()
    inserted: set[str] = set()
    seen: list[str] = []
    token = ""
    while True:
        ids_, token = store.list(token, rng.choice([1, 7, 20, 50]))
        seen.extend(ids_)
        if not token:
            break
        for _ in range(rng.randrange(4)):
            new_id = f"new-{len(inserted)}"
            store.put(make(new_id, store.tick()))
            inserted.add(new_id)
        for task_id in rng.sample(sorted(store.tasks), rng.randrange(4)):
            store.touch(task_id)
            updated.add(task_id)
    counts = Counter(seen)
    assert updated & set(seen), "the run updated tasks it had already listed"
    assert max(counts.values()) == 1, "no task is listed twice"
    assert not inserted & set(seen), "tasks created after the first page sort before it"
    for task_id in original - updated:
        assert counts[task_id] == 1, f"{task_id} was skipped"
    # A fresh listing puts the changed tasks first, newest first.
    fresh, _ = store.list("", 100)
    changed = sorted(updated | inserted, key=lambda t: store.tasks[t].status.timestamp or T0)
    assert fresh[: len(changed)] == list(reversed(changed))[:100]


@given(st.lists(st.tuples(ids, st.none() | timestamps), max_size=40), st.integers(1, 10))
def test_walking_all_pages_lists_every_task_once_in_order(
    entries: list[tuple[str, datetime | None]], size: int
) -> None:
    """Without concurrent changes the pages concatenate to exactly the sorted listing."""
    tasks = paging.sort_tasks({i: make(i, at) for i, at in entries}.values())
    walked: list[Task] = []
    cursor: PageCursor | None = None
    while True:
        token = encode_page_token(cursor) if cursor else ""
        chunk, cursor = paging.page(tasks, decode_page_token(token) if token else None, size)
        walked.extend(chunk)
        if cursor is None:
            break
    assert walked == tasks
