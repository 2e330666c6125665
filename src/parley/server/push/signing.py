"""Signed notifications, as Standard Webhooks defines them (standardwebhooks.com): a
notification carries `webhook-id` (its stable id), `webhook-timestamp` (Unix seconds of the
attempt) and `webhook-signature` (`v1,` + base64 of HMAC-SHA256 over `id.timestamp.body`).

The key is the config's `token`: a `whsec_`-prefixed token is a Standard Webhooks secret
(the base64 after the prefix is the key), any other token is used as its UTF-8 bytes. So a
receiver that set a token can verify every notification with it, and one that set a
`whsec_` secret can use any Standard Webhooks library.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
SECRET_PREFIX = "whsec_"  # noqa: S105 (a prefix, not a secret)
TOLERANCE = 300
"""Seconds a receiver accepts between a notification's timestamp and its own clock."""


class SignatureError(ValueError):
    """A notification's signature headers are missing, malformed, stale or do not match."""


def secret_key(token: str) -> bytes:
    """The HMAC key a config's token stands for (ValueError for a malformed whsec_ secret)."""
    if token.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(token[len(SECRET_PREFIX) :], validate=True)
        except binascii.Error:
            raise ValueError("a whsec_ secret must be base64 after its prefix") from None
    return token.encode("utf-8")


def signature(key: bytes, notification_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` value (one `v1,` signature) of a notification."""
    signed = f"{notification_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signed_headers(key: bytes, notification_id: str, body: bytes, now: float) -> dict[str, str]:
    """The three Standard Webhooks headers of one attempt at `now` (Unix seconds)."""
    timestamp = int(now)
    return {
        ID_HEADER: notification_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(key, notification_id, timestamp, body),
    }


def verify(
    key: bytes,
    headers: Mapping[str, str],
    body: bytes,
    *,
    now: float | None = None,
    tolerance: int = TOLERANCE,
) -> str:
    """Check a received notification (header names in lower case); its id, or
    SignatureError saying what is wrong. Any one matching `v1,` signature of the
    space-separated list is enough (a sender rotating keys sends several)."""
    notification_id = headers.get(ID_HEADER)
    stamp = headers.get(TIMESTAMP_HEADER)
    sent = headers.get(SIGNATURE_HEADER)
    if not notification_id or not stamp or not sent:
        raise SignatureError(
            f"missing {ID_HEADER}, {TIMESTAMP_HEADER} or {SIGNATURE_HEADER} header"
        )
    try:
        timestamp = int(stamp)
    except ValueError:
        raise SignatureError(f"{TIMESTAMP_HEADER} {stamp!r} is not a number") from None
    skew = (time.time() if now is None else now) - timestamp
    if abs(skew) > tolerance:
        raise SignatureError(f"{TIMESTAMP_HEADER} is {int(skew)} s away from now")
    expected = signature(key, notification_id, timestamp, body)
    if not any(hmac.compare_digest(expected, each) for each in sent.split(" ")):
        raise SignatureError("no signature matches: wrong secret, or the body was changed")
    return notification_id
