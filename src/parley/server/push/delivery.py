"""The delivery worker: takes notifications from an outbox and POSTs them to their webhooks,
at least once, in order per (task, config), retrying on a schedule (DESIGN 10).

Theory of operation. One loop claims the heads of the due queues (`Outbox.claim`, held by a
lease a little longer than an attempt may take) while fewer than `concurrency` attempts run,
and starts an attempt for each; what is for a host with `per_host` attempts running waits
here, holding no slot, until one of them ends, so one slow receiver holds at most that
many attempts and the other hosts' go on. The loop
sleeps until a task write records notifications (`wake`), an attempt ends (which may free the
next of its queue), the next retry is due, or `poll` passes (other processes' writes).

An attempt re-checks the URL and resolves it (`ssrf.resolve_and_check`), connects to that
address only, and sends the notification with the config's headers, signed when the config
has a token (`signing`). 2xx: delivered. 410 Gone: the config is deleted and what waited for
it is dead. 408, 429, 5xx, timeouts, connection and resolution errors: retried on the
schedule. Other answers (4xx, an unfollowed redirect): retried `client_errors` times in all.
A URL the guard refuses now: dead at once. After the schedule: dead, kept for inspection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import msgspec

from parley import __version__
from parley.protocol.negotiation import Version
from parley.server.push import signing
from parley.server.push.credentials import CredentialsKeyError, CredentialsKeys, unsealed
from parley.server.push.outbox import Delivery, Outbox
from parley.server.push.ssrf import (
    NO_ALLOW,
    Allow,
    CheckedTarget,
    HostResolutionError,
    Resolver,
    UnsafeUrlError,
    resolve_and_check,
)
from parley.server.stores.base import TaskStore
from parley.wire import json_bytes as wire_json
from parley.wire.v0_3.jsonrpc_codec import CODEC as V0_3

if TYPE_CHECKING:
    from parley.server.push.sender import WebhookClient

log = logging.getLogger("parley.push")

V1_CONTENT_TYPE = "application/a2a+json"
V0_3_CONTENT_TYPE = "application/json"
REPAIR_EVERY = 30.0
"""Seconds between `Outbox.repair` runs (and one at start)."""
RELEASE_WITHIN = 2.0
"""Seconds `stop` waits for the outbox to take back the leases it gives back."""
TOKEN_HEADER = "X-A2A-Notification-Token"  # noqa: S105 (a header name)


class RetrySchedule(msgspec.Struct, frozen=True):
    """Full-jitter exponential backoff: before retry n (n = 1, 2, ...) wait a random time in
    [0, min(cap, base * 2**n)] seconds; after `retries` retries the notification is dead.
    The default: first retries within seconds, the ceilings doubling to 18 h; the last
    attempt comes about 27 h after the first on average (at most ~55 h)."""

    base: float = 1.0
    cap: float = 65536.0
    retries: int = 17
    client_errors: int = 3
    """Attempts in all for a notification the receiver refuses with a 4xx (not 408, 410, 429)."""

    def delay(self, retry: int, rand: Callable[[], float] = random.random) -> float:
        return rand() * min(self.cap, self.base * 2.0**retry)


class PushSettings(msgspec.Struct, frozen=True):
    """How notifications are delivered (`parley serve --push-*`)."""

    allow: Allow = NO_ALLOW
    """Exceptions to the SSRF guard (`--push-allow`), for development and tests."""
    schedule: RetrySchedule = msgspec.field(default_factory=RetrySchedule)
    timeout: float = 10.0
    """Seconds one attempt may take, connecting to reading the status (R-PUSH-15)."""
    concurrency: int = 64
    per_host: int = 4
    poll: float = 1.0
    read_limit: int = 1024
    """Bytes of an answer's body read (for the reason of a failure), at most."""
    credentials: CredentialsKeys | None = None
    """The keys push configs' credentials and tokens are encrypted with at rest
    (`--push-credentials-key`); None: stored as given."""


def _now_us() -> int:
    return time.time_ns() // 1000


class DeliveryWorker:
    """Delivers an outbox's notifications (`start` in the app's startup, `stop` at shutdown).
    `tasks` is read for 0.3 configs, whose payload is the task as it is when sent."""

    def __init__(
        self,
        outbox: Outbox,
        tasks: TaskStore,
        settings: PushSettings | None = None,
        *,
        resolver: Resolver | None = None,
        client: WebhookClient | None = None,
    ) -> None:
        self.outbox = outbox
        self.tasks = tasks
        self.settings = settings or PushSettings()
        self.resolver = resolver
        self._client = client
        self._wake = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._hosts: Counter[str] = Counter()
        self._held: dict[int, int] = {}
        """Notifications claimed by this worker and not settled (running or waiting), with
        the end of the lease it holds on each."""
        self._waiting: dict[str, deque[tuple[float, Delivery]]] = {}
        """Per host at its cap, what waits for one of its attempts to end (and since when)."""
        self._claiming: tuple[asyncio.Task[list[Delivery]], int] | None = None
        """The claim under way, and the lease it takes (a stop gives back what it took)."""
        self.delivered = 0
        """Notifications delivered since start (for tests and benchmarks)."""

    def wake(self) -> None:
        """Look for due notifications now (a task write recorded some)."""
        self._wake.set()

    async def start(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop claiming; cancel the attempts in flight, then give back the leases of what
        was running or waiting (`Outbox.release`): it is claimed again at once, by this
        process when it restarts or by another one. A lease not given back (the outbox
        failed or was closed) expires, and the notification is claimed then."""
        loop, self._loop = self._loop, None
        held, self._held = self._held, {}
        self._waiting.clear()  # nothing more starts as the cancelled attempts end
        tasks = [each for each in (loop, *self._running) if each is not None]
        for each in tasks:
            each.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._release(held | await self._claimed_meanwhile())
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _claim(self, now: int, lease: int, limit: int) -> list[Delivery]:
        """`Outbox.claim`, finished even if a stop cancels the loop meanwhile (it gives back
        what the claim took)."""
        claiming = asyncio.get_running_loop().create_task(self.outbox.claim(now, lease, limit))
        self._claiming = claiming, lease
        claimed = await asyncio.shield(claiming)
        self._claiming = None
        return claimed

    async def _claimed_meanwhile(self) -> dict[int, int]:
        """What the claim under way as the loop was cancelled took (with its lease)."""
        claiming, self._claiming = self._claiming, None
        if claiming is None:
            return {}
        try:
            async with asyncio.timeout(RELEASE_WITHIN):
                return {each.id: claiming[1] for each in await claiming[0]}
        except Exception:  # the claim failed: nothing was taken, or its leases expire
            return {}

    async def _release(self, held: dict[int, int]) -> None:
        """Give back the leases in `held` that have not run out (one that has may have
        been claimed by another worker since); log, never raise, when that fails."""
        now = _now_us()
        ids = sorted(each for each, lease in held.items() if lease > now)
        if not ids:
            return
        try:
            async with asyncio.timeout(RELEASE_WITHIN):
                await self.outbox.release(ids, now)
        except Exception as exc:  # a stop goes on whatever the outbox did
            log.warning("push: %d leases not given back (%r); they will expire", len(ids), exc)

    async def _run(self) -> None:
        settings = self.settings
        repaired = -REPAIR_EVERY
        while True:
            self._wake.clear()
            wait = settings.poll
            try:
                if time.monotonic() - repaired >= REPAIR_EVERY:
                    repaired = time.monotonic()
                    await self.outbox.repair(_now_us())
                free = settings.concurrency - len(self._running)
                if free > 0:
                    now = _now_us()
                    lease = now + int((settings.timeout + 5.0) * 1e6)
                    for each in await self._claim(now, lease, free):
                        if each.id in self._held:  # waiting: its lease renewed
                            self._held[each.id] = lease
                        else:
                            self._admit(each, lease)
                    due = await self.outbox.next_due()
                    if due is not None and due > now:
                        wait = min(wait, (due - now) / 1e6)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("push delivery: the outbox failed; trying again")
            # Not asyncio.wait_for: on Python 3.11 it swallows a cancellation that comes as
            # the wait ends (a wake-up), and stop() would then wait for this loop forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(wait, 0.001)):
                    await self._wake.wait()

    def _admit(self, delivery: Delivery, lease: int) -> None:
        """Start an attempt, or, with its host at its cap, queue it here until one of that
        host's attempts ends (it does not take a slot meanwhile)."""
        assert delivery.config is not None
        host = _host(delivery.config.url)
        self._held[delivery.id] = lease
        if self._hosts[host] >= self.settings.per_host:
            self._waiting.setdefault(host, deque()).append((time.monotonic(), delivery))
        else:
            self._start_attempt(host, delivery)

    def _start_attempt(self, host: str, delivery: Delivery) -> None:
        self._hosts[host] += 1
        attempt = asyncio.get_running_loop().create_task(self._attempt(delivery))
        self._running.add(attempt)

        def done(_: asyncio.Task[None]) -> None:
            self._running.discard(attempt)
            self._held.pop(delivery.id, None)
            self._hosts[host] -= 1
            if self._hosts[host] <= 0:
                del self._hosts[host]
            self._next_for(host)
            self._wake.set()  # the next of its queue may go now

        attempt.add_done_callback(done)

    def _next_for(self, host: str) -> None:
        """Start what waits for `host`; one that waited past an attempt's time is let go
        (its lease may have run out: it is claimed again, its config read afresh)."""
        waiting = self._waiting.get(host)
        while waiting and self._hosts[host] < self.settings.per_host:
            since, delivery = waiting.popleft()
            if time.monotonic() - since > self.settings.timeout:
                self._held.pop(delivery.id, None)
            else:
                self._start_attempt(host, delivery)
        if not waiting:
            self._waiting.pop(host, None)

    async def _attempt(self, delivery: Delivery) -> None:
        try:
            outcome = await self._send(delivery)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug or a store failure: retried, never lost
            log.exception("push delivery %s failed", delivery.sent_id)
            outcome = ("retry", f"{type(exc).__name__}: {exc}")
        await self._settle(delivery, *outcome)

    async def _settle(self, delivery: Delivery, verdict: str, reason: str) -> None:
        schedule = self.settings.schedule
        attempts = delivery.attempts + 1
        where = f"{delivery.sent_id} to config {delivery.config_id}"
        if verdict == "delivered":
            await self.outbox.delivered(delivery)
            self.delivered += 1
            return
        if verdict == "gone":
            log.warning("push %s: %s; the config is disabled", where, reason)
            await self.outbox.disable(delivery, reason)
            return
        if verdict == "client" and attempts >= schedule.client_errors:
            verdict = "dead"
        if verdict == "retry" and attempts > schedule.retries:
            reason = f"{reason} (gave up after {attempts} attempts)"
            verdict = "dead"
        if verdict == "dead":
            log.warning("push %s is dead: %s", where, reason)
            await self.outbox.bury(delivery, reason)
            return
        due = _now_us() + int(schedule.delay(attempts) * 1e6)
        log.info("push %s: attempt %d failed (%s); retrying", where, attempts, reason)
        await self.outbox.retry(delivery, due, reason)

    async def _send(self, delivery: Delivery) -> tuple[str, str]:
        """(verdict, reason): delivered, gone, client (a 4xx), retry or dead."""
        assert delivery.config is not None
        try:
            config = unsealed(delivery.config, self.settings.credentials)
        except CredentialsKeyError as exc:  # retried: the right key may be given meanwhile
            log.error("push %s: %s", delivery.sent_id, exc)
            return "retry", str(exc)
        timeout = self.settings.timeout
        deadline = asyncio.get_running_loop().time() + timeout  # resolving is part of it
        try:
            async with asyncio.timeout_at(deadline):
                checked = await resolve_and_check(
                    config.url, allow=self.settings.allow, resolver=self.resolver
                )
        except UnsafeUrlError as exc:
            return "dead", f"refused by the SSRF guard: {exc}"
        except HostResolutionError as exc:
            return "retry", str(exc)
        except TimeoutError:
            return "retry", f"{_host(config.url)} did not resolve within {timeout:g} s"
        body, content_type = await self._payload(delivery)
        if body is None:
            return "dead", "the task no longer exists"
        headers = {"Content-Type": content_type, "User-Agent": f"parley/{__version__}"}
        if config.authentication is not None and config.authentication.credentials:
            scheme, credentials = config.authentication.scheme, config.authentication.credentials
            headers["Authorization"] = f"{scheme} {credentials}"
        notification_id = delivery.sent_id
        headers[signing.ID_HEADER] = notification_id
        if config.token:
            headers[TOKEN_HEADER] = config.token
            key = signing.secret_key(config.token)
            headers.update(signing.signed_headers(key, notification_id, body, time.time()))
        else:
            headers[signing.TIMESTAMP_HEADER] = str(int(time.time()))
        headers.update(delivery.trace_headers)
        return await self._post(checked, body, headers, deadline)

    async def _post(
        self, checked: CheckedTarget, body: bytes, headers: dict[str, str], deadline: float
    ) -> tuple[str, str]:
        # The sender (h11, the CA bundle) loads with the first delivery, not at start.
        from parley.server.push.sender import (  # noqa: PLC0415
            SendError,
            WebhookClient,
            send_pinned,
        )

        if self._client is None:
            self._client = WebhookClient(timeout=self.settings.timeout)
        try:
            answer = await send_pinned(
                self._client,
                checked,
                content=body,
                headers=headers,
                read=self.settings.read_limit,
                deadline=deadline,
            )
        except TimeoutError:
            return "retry", f"no answer within {self.settings.timeout:g} s"
        except SendError as exc:
            return "retry", str(exc)
        return _verdict(answer.status, answer.body)

    async def _payload(self, delivery: Delivery) -> tuple[bytes | None, str]:
        if delivery.protocol is not Version.V0_3:
            return delivery.payload, V1_CONTENT_TYPE
        stored = await self.tasks.get(delivery.scope, delivery.task_id)
        if stored is None:
            return None, V0_3_CONTENT_TYPE
        return wire_json.dumps(V0_3.encode(stored.task)), V0_3_CONTENT_TYPE


def _host(url: str) -> str:
    """The URL's host (what the per-host cap counts), or "" when it has none."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _verdict(status: int, prefix: bytes) -> tuple[str, str]:
    if 200 <= status < 300:
        return "delivered", f"HTTP {status}"
    said = prefix[:200].decode("utf-8", "replace").strip()
    reason = f"HTTP {status}" + (f": {said}" if said else "")
    if status == 410:
        return "gone", reason
    if status in (408, 429) or status >= 500:
        return "retry", reason
    return "client", reason


__all__ = ["DeliveryWorker", "PushSettings", "RetrySchedule"]
