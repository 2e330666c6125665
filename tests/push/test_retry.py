"""When a failed delivery is tried again, and which answers count as failures
(`parley.server.push.delivery`): full-jitter exponential backoff whose ceilings double up to
the cap, with the totals its docstring promises (R-PUSH-16); a receiver's status sorted into
delivered, retry (408, 429, 5xx), gone (410) and refused (any other 4xx, tried only a few
times), with a reason that quotes at most a bounded prefix of the answer (R-PUSH-10,
R-PUSH-14)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.server.push.delivery import PushSettings, RetrySchedule, _verdict

HOUR = 3600.0


def test_ceilings_double_from_the_base_up_to_the_cap() -> None:
    schedule = RetrySchedule(base=1.0, cap=16.0)
    ceilings = [schedule.delay(n, rand=lambda: 1.0) for n in range(1, 8)]
    assert ceilings == [2.0, 4.0, 8.0, 16.0, 16.0, 16.0, 16.0]


def test_the_jitter_is_full_from_zero() -> None:
    """Full jitter: receivers recovering from an outage are not hit by every sender at
    once."""
    schedule = RetrySchedule()
    assert schedule.delay(5, rand=lambda: 0.0) == 0.0
    assert schedule.delay(5, rand=lambda: 0.5) == 16.0


@given(
    retry=st.integers(min_value=1, max_value=64),
    rand=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    base=st.floats(min_value=0.001, max_value=10.0),
    cap=st.floats(min_value=0.01, max_value=1e6),
)
def test_a_delay_never_exceeds_its_ceiling_or_the_cap(
    retry: int, rand: float, base: float, cap: float
) -> None:
    schedule = RetrySchedule(base=base, cap=cap)
    delay = schedule.delay(retry, rand=lambda: rand)
    assert 0.0 <= delay <= min(cap, base * 2.0**retry)


def test_the_default_schedule_spans_the_promised_day_or_so() -> None:
    """The docstring: first retries within seconds, ceilings doubling to 18 h, the last
    attempt about 27 h after the first on average, at most about 55 h."""
    schedule = RetrySchedule()
    retries = range(1, schedule.retries + 1)
    ceilings = [schedule.delay(n, rand=lambda: 1.0) for n in retries]
    assert ceilings[0] == 2.0
    assert max(ceilings) == schedule.cap == pytest.approx(18.2 * HOUR, rel=0.01)
    assert sum(ceilings) / 2 / HOUR == pytest.approx(27.3, abs=0.1)
    assert sum(ceilings) / HOUR == pytest.approx(54.6, abs=0.1)
    assert schedule.client_errors == 3


def test_the_default_attempt_is_bounded() -> None:
    """R-PUSH-15: a webhook request is bounded by a timeout of 10 to 30 s."""
    assert 10.0 <= PushSettings().timeout <= 30.0


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_any_2xx_is_delivered(status: int) -> None:
    assert _verdict(status, b"ignored body") == ("delivered", f"HTTP {status}")


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504, 599])
def test_timeouts_rate_limits_and_server_errors_are_retried(status: int) -> None:
    verdict, reason = _verdict(status, b"try later")
    assert verdict == "retry"
    assert reason == f"HTTP {status}: try later"


def test_gone_is_its_own_verdict() -> None:
    assert _verdict(410, b"") == ("gone", "HTTP 410")


@pytest.mark.parametrize("status", [300, 301, 302, 400, 401, 403, 404, 405, 409, 413, 422])
def test_redirects_and_other_client_errors_are_refusals(status: int) -> None:
    """A redirect is never followed (SSRF): it counts as the receiver refusing."""
    verdict, _ = _verdict(status, b"")
    assert verdict == "client"


def test_the_reason_quotes_a_trimmed_bounded_prefix_of_the_answer() -> None:
    _, reason = _verdict(500, b"  \n" + b"e" * 500)
    assert reason == "HTTP 500: " + "e" * 197


def test_an_undecodable_answer_is_quoted_with_replacements() -> None:
    _, reason = _verdict(400, b"bad \xff\xfe byte")
    assert reason == "HTTP 400: bad \ufffd\ufffd byte"


def test_an_empty_or_blank_answer_gives_the_status_alone() -> None:
    assert _verdict(503, b" \r\n ") == ("retry", "HTTP 503")
