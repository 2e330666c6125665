"""Retries with exponential backoff, for idempotent operations only.

Which operations are idempotent is the operations table's `idempotent` (the reads and
Delete of a push config: `parley.protocol.operations.OperationSpec`). What is retried:
connection failures, timeouts, and the HTTP statuses a proxy or an overloaded server
answers (429, 502, 503, 504 without an A2A error body). A2A errors are the server's
answer and are never retried.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from parley.client.errors import ClientConnectionError, ClientProtocolError, ClientTimeoutError

T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to try again.

    `attempts` counts every try (1: never retry). The n-th retry waits
    `backoff * multiplier ** (n - 1)` seconds, at most `max_backoff`, less up to half of
    it at random (so many clients do not retry in step). A `Retry-After` up to
    `max_retry_after` seconds is honoured; a longer one is not waited for.
    """

    attempts: int = 3
    backoff: float = 0.2
    multiplier: float = 2.0
    max_backoff: float = 5.0
    max_retry_after: float = 30.0

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        if retry_after is not None:
            return retry_after
        ceiling = min(self.max_backoff, self.backoff * self.multiplier ** (retry - 1))
        return ceiling * (0.5 + random.random() / 2)  # noqa: S311  (jitter, not a secret)


NO_RETRY = RetryPolicy(attempts=1)


def retry_after(error: BaseException) -> float | None:
    """The wait a retryable error asks for: None if it is not retryable, else seconds
    (0.0 when the server did not say)."""
    if isinstance(error, ClientConnectionError | ClientTimeoutError):
        return 0.0
    if isinstance(error, ClientProtocolError) and error.status_code in RETRYABLE_STATUSES:
        return error.retry_after or 0.0
    return None


async def retrying(policy: RetryPolicy, call: Callable[[], Awaitable[T]]) -> T:
    """`call()`, tried again on a retryable failure until `policy.attempts` are used."""
    retry = 0
    while True:
        try:
            return await call()
        except (ClientConnectionError, ClientTimeoutError, ClientProtocolError) as error:
            asked = retry_after(error)
            retry += 1
            if asked is None or retry >= policy.attempts or asked > policy.max_retry_after:
                raise
            await asyncio.sleep(policy.delay(retry, asked or None))
