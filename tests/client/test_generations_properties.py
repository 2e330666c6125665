"""A stream's task generations (`parley.client.generations`, A2A 1.1 draft) as properties:
for a task whose updates are numbered 1, 2, 3, … and any subsequence of them a client
receives, possibly after a snapshot, an update is a gap exactly when numbers were skipped
since the last one delivered, skipped exactly when the snapshot already holds it, and
delivered otherwise; a server that numbers nothing, or repeats a number, is not relied on
for the rest of the stream. The stream's use of it is in test_generations.py."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from parley.client.generations import Generations, Verdict
from parley.model import (
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

WORKING = TaskStatus(state=TaskState.WORKING)


def update(generation: int) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id="t", context_id="c", status=WORKING, generation=generation)


def snapshot(generation: int) -> Task:
    return Task(id="t", context_id="c", status=WORKING, generation=generation)


received = st.lists(st.integers(min_value=1, max_value=30), max_size=12, unique=True).map(sorted)


@given(st.integers(min_value=0, max_value=10), received)
def test_gaps_and_skips_follow_the_numbers(held: int, numbers: list[int]) -> None:
    """`held`: the generation of the snapshot the stream began with (0: none numbered)."""
    generations = Generations()
    assert generations.see(snapshot(held)) is Verdict.DELIVER
    last = held
    for number in numbers:
        verdict = generations.see(update(number))
        if number <= held:
            assert verdict is Verdict.SKIP
        elif last > 0 and number > last + 1:
            assert verdict is Verdict.GAP
        else:
            assert verdict is Verdict.DELIVER
        if number > held:
            last = number


@given(received)
def test_without_a_snapshot_the_first_update_is_never_a_gap(numbers: list[int]) -> None:
    generations = Generations()
    verdicts = [generations.see(update(number)) for number in numbers]
    assert Verdict.SKIP not in verdicts
    if verdicts:
        assert verdicts[0] is Verdict.DELIVER
    gaps = [b for a, b in itertools.pairwise(numbers) if b > a + 1]
    assert verdicts.count(Verdict.GAP) == len(gaps)


@given(received, st.integers(min_value=0, max_value=11))
def test_an_unnumbered_update_turns_generations_off(numbers: list[int], at: int) -> None:
    generations = Generations()
    cut = min(at, len(numbers))
    for number in numbers[:cut]:
        generations.see(update(number))
    assert generations.see(update(0)) is Verdict.DELIVER
    assert all(generations.see(update(n)) is Verdict.DELIVER for n in numbers[cut:])
    assert not generations.used


def test_a_repeated_number_turns_generations_off() -> None:
    generations = Generations()
    assert generations.see(update(1)) is Verdict.DELIVER
    assert generations.see(update(1)) is Verdict.DELIVER  # the same twice: not relied on
    assert not generations.used
    assert generations.see(update(9)) is Verdict.DELIVER  # no gap once off


def test_messages_are_not_numbered_and_never_judged() -> None:
    generations = Generations()
    generations.see(update(3))
    reply = Message(message_id="m", role=Role.AGENT, parts=())
    assert generations.see(reply) is Verdict.DELIVER
    assert generations.see(update(4)) is Verdict.DELIVER


@given(st.integers(min_value=1, max_value=20), st.integers(min_value=1, max_value=20))
def test_after_a_reconcile_what_the_fetched_task_holds_is_skipped(seen: int, fetched: int) -> None:
    generations = Generations()
    generations.see(update(seen))
    generations.reconciled(snapshot(fetched))
    top = max(seen, fetched)
    assert generations.see(update(top)) is Verdict.SKIP
    assert generations.see(update(top + 1)) is Verdict.DELIVER


def test_a_reconcile_with_an_unnumbered_task_changes_nothing() -> None:
    generations = Generations()
    generations.see(update(2))
    generations.reconciled(snapshot(0))
    assert generations.see(update(3)) is Verdict.DELIVER
