"""Signed notifications (`parley.server.push.signing`, Standard Webhooks): the key a token
stands for, the signature of `id.timestamp.body`, and a receiver's check of every way a
notification can be wrong — missing headers, a timestamp that is no number or too far
from now, a changed body, a wrong key — with key rotation (several signatures) accepted
(R-PUSH-9, R-PUSH-13, R-PUSH-18)."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.server.push import signing

KEY = b"0123456789abcdef0123456789abcdef"
NOW = 1_700_000_000.0
BODY = b'{"statusUpdate":{"taskId":"t-1"}}'


def headers(key: bytes = KEY, body: bytes = BODY, now: float = NOW) -> dict[str, str]:
    return signing.signed_headers(key, "n-1", body, now)


def test_a_whsec_secret_is_the_base64_after_its_prefix() -> None:
    secret = "whsec_" + base64.b64encode(KEY).decode()
    assert signing.secret_key(secret) == KEY


def test_any_other_token_is_its_utf8_bytes() -> None:
    assert signing.secret_key("plain-tökén") == "plain-tökén".encode()


@pytest.mark.parametrize("secret", ["whsec_not*base64", "whsec_abc", "whsec_YQ=?"])
def test_a_malformed_whsec_secret_is_a_value_error(secret: str) -> None:
    with pytest.raises(ValueError, match="base64 after its prefix"):
        signing.secret_key(secret)


def test_the_signature_is_hmac_sha256_of_id_timestamp_and_body() -> None:
    """The Standard Webhooks construction, computed independently here."""
    expected = hmac.new(KEY, b"n-1.1700000000." + BODY, hashlib.sha256).digest()
    assert signing.signature(KEY, "n-1", 1_700_000_000, BODY) == (
        "v1," + base64.b64encode(expected).decode()
    )


def test_signed_headers_are_the_three_headers_at_whole_seconds() -> None:
    sent = signing.signed_headers(KEY, "n-1", BODY, NOW + 0.9)
    assert sent == {
        "webhook-id": "n-1",
        "webhook-timestamp": "1700000000",
        "webhook-signature": signing.signature(KEY, "n-1", 1_700_000_000, BODY),
    }


def test_a_good_notification_verifies_to_its_id() -> None:
    assert signing.verify(KEY, headers(), BODY, now=NOW) == "n-1"


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_a_missing_header_is_refused(missing: str) -> None:
    sent = headers()
    del sent[missing]
    with pytest.raises(signing.SignatureError, match="missing"):
        signing.verify(KEY, sent, BODY, now=NOW)


@pytest.mark.parametrize("empty", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_an_empty_header_counts_as_missing(empty: str) -> None:
    sent = headers() | {empty: ""}
    with pytest.raises(signing.SignatureError, match="missing"):
        signing.verify(KEY, sent, BODY, now=NOW)


@pytest.mark.parametrize("stamp", ["soon", "1.7e9", "0x10"])
def test_a_timestamp_that_is_not_a_number_is_refused(stamp: str) -> None:
    with pytest.raises(signing.SignatureError, match="is not a number"):
        signing.verify(KEY, headers() | {"webhook-timestamp": stamp}, BODY, now=NOW)


@pytest.mark.parametrize("skew", [signing.TOLERANCE + 1, -(signing.TOLERANCE + 1), 86_400])
def test_a_timestamp_too_far_from_now_is_refused_either_way(skew: int) -> None:
    """A replayed (old) or forged-ahead (future) notification: both are outside tolerance."""
    with pytest.raises(signing.SignatureError, match="s away from now"):
        signing.verify(KEY, headers(), BODY, now=NOW + skew)


@pytest.mark.parametrize("skew", [signing.TOLERANCE, -signing.TOLERANCE, 0])
def test_the_tolerance_is_inclusive(skew: int) -> None:
    assert signing.verify(KEY, headers(), BODY, now=NOW + skew) == "n-1"


def test_the_tolerance_can_be_narrowed() -> None:
    with pytest.raises(signing.SignatureError):
        signing.verify(KEY, headers(), BODY, now=NOW + 10, tolerance=5)


def test_without_now_the_receivers_clock_is_used() -> None:
    """A notification stamped in 2023 is stale by any real clock."""
    with pytest.raises(signing.SignatureError, match="away from now"):
        signing.verify(KEY, headers(), BODY)


def test_a_changed_id_does_not_verify() -> None:
    with pytest.raises(signing.SignatureError, match="no signature matches"):
        signing.verify(KEY, headers() | {"webhook-id": "n-2"}, BODY, now=NOW)


def test_a_changed_timestamp_does_not_verify() -> None:
    shifted = headers() | {"webhook-timestamp": str(int(NOW) + 1)}
    with pytest.raises(signing.SignatureError, match="no signature matches"):
        signing.verify(KEY, shifted, BODY, now=NOW)


def test_one_matching_signature_among_several_is_enough() -> None:
    """A sender rotating keys signs with the old and the new one."""
    old = headers(key=b"old-key")["webhook-signature"]
    new = headers()["webhook-signature"]
    rotated = headers() | {"webhook-signature": f"{old} {new}"}
    assert signing.verify(KEY, rotated, BODY, now=NOW) == "n-1"
    assert signing.verify(b"old-key", rotated, BODY, now=NOW) == "n-1"
    with pytest.raises(signing.SignatureError):
        signing.verify(b"third-key", rotated, BODY, now=NOW)


def test_a_signature_of_another_scheme_does_not_count() -> None:
    v1 = headers()["webhook-signature"]
    other = "v1a," + v1.removeprefix("v1,")
    with pytest.raises(signing.SignatureError):
        signing.verify(KEY, headers() | {"webhook-signature": other}, BODY, now=NOW)


@given(body=st.binary(max_size=64), flip=st.integers(min_value=0, max_value=63))
def test_any_change_of_the_body_is_caught(body: bytes, flip: int) -> None:
    sent = headers(body=body)
    assert signing.verify(KEY, sent, body, now=NOW) == "n-1"
    if body:
        i = flip % len(body)
        changed = body[:i] + bytes([body[i] ^ 1]) + body[i + 1 :]
        with pytest.raises(signing.SignatureError):
            signing.verify(KEY, sent, changed, now=NOW)
    with pytest.raises(signing.SignatureError):
        signing.verify(KEY, sent, body + b" ", now=NOW)
