"""The outbox records (`parley.server.push.outbox`): a stored notification id carries the
trace context of the write that caused it, when tracing is on; the id a receiver is sent
(`webhook-id`) and the W3C headers its delivery continues the trace with come back out of
it unchanged. The queue semantics are the contract suite's (tests/contracts/test_outbox)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from parley.server.push.outbox import (
    TRACE_MARK,
    Delivery,
    trace_context,
    traced,
)

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def delivery(notification_id: str) -> Delivery:
    return Delivery(1, ("", "alice"), "t1", "c1", notification_id, b"{}", 0, 0, 0)


def with_context(make: Callable[[], str] | None, notification_id: str) -> str:
    token = trace_context.set(make)
    try:
        return traced(notification_id)
    finally:
        trace_context.reset(token)


def test_without_tracing_the_id_is_stored_as_it_is() -> None:
    assert trace_context.get() is None
    assert traced("t1.3.0") == "t1.3.0"
    record = delivery("t1.3.0")
    assert (record.sent_id, record.trace_headers) == ("t1.3.0", {})


def test_a_traced_write_stores_parent_and_state_after_the_id() -> None:
    stored = with_context(lambda: f"{TRACE_MARK}{PARENT}{TRACE_MARK}vendor=1", "t1.3.0")
    record = delivery(stored)
    assert record.sent_id == "t1.3.0"
    assert record.trace_headers == {"traceparent": PARENT, "tracestate": "vendor=1"}


def test_an_empty_trace_state_sends_only_the_parent() -> None:
    record = delivery(with_context(lambda: f"{TRACE_MARK}{PARENT}{TRACE_MARK}", "t1.3.0"))
    assert record.trace_headers == {"traceparent": PARENT}


def test_an_unsampled_write_stores_the_id_alone() -> None:
    """The context maker answers "" when the write's span is not sampled."""
    record = delivery(with_context(lambda: "", "t1.3.0"))
    assert (record.notification_id, record.sent_id, record.trace_headers) == (
        "t1.3.0",
        "t1.3.0",
        {},
    )


def test_the_context_is_made_only_when_a_notification_is_recorded() -> None:
    made: list[int] = []

    def make() -> str:
        made.append(1)
        return ""

    token = trace_context.set(make)
    try:
        assert made == []
        traced("a")
        traced("b")
        assert made == [1, 1]
    finally:
        trace_context.reset(token)


@given(
    notification_id=st.text(
        alphabet=st.characters(blacklist_characters=TRACE_MARK),
        min_size=1,
        max_size=40,
    ),
    state=st.sampled_from(["", "a=1", "a=1,b=2"]),
)
def test_the_sent_id_and_headers_round_trip(notification_id: str, state: str) -> None:
    stored = with_context(lambda: f"{TRACE_MARK}{PARENT}{TRACE_MARK}{state}", notification_id)
    record = delivery(stored)
    assert record.sent_id == notification_id
    assert record.trace_headers["traceparent"] == PARENT
    assert record.trace_headers.get("tracestate", "") == state
