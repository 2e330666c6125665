"""The Redis event bus (DESIGN 7): a task's events reach its subscribers on every replica
(`parley serve --bus redis://host:port/db`, `AgentService(broker=RedisBus(url))`).

Theory of operation. `publish` (the runner's, after the store committed the event) queues
the event for the task's Redis stream, with the entry id `SEQUENCE-0` (the task's
generation) in A2A 1.1 draft JSON (1.0's with generations); one writer sends the queue
in order, a pipeline per round trip (what queues meanwhile goes next), so many events
share a round trip. Ids only grow, as generations do: the stream is the task's events
in order. A subscription, on any replica, reads the stream from its cursor (the
generation of the snapshot it started with, or the client's Last-Event-ID) with a
blocking XREAD of its own: every event above the cursor, once, in order, whichever
replica produced it; a subscriber on the producing replica takes the same path, so no
copy can overtake another. A direct Message reply (no task, no
sequence) is only ever awaited where it is produced, and goes to this process's
subscribers at once. `replayable` vouches for a cursor when the stream holds every entry
above it (`recorded-first-entry-id`, `max-deleted-entry-id`). Retention: at most
`max_events` entries per task (approximate trimming); the stream expires `retention`
seconds after a task's last event, `idle` seconds after any other. Redis unreachable:
`start` fails with a clear error; a publish that fails is logged (the store has the
event; the task's snapshot is right) and streams end with an error telling the client to
resubscribe. Cancels (`request_stop`) go over pub/sub; leases: `redis_leases`;
follow-ups to the replica where their task waits: `redis_turns`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import uuid
from collections.abc import Awaitable, Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from parley.model import SendMessageRequest, StreamEvent
from parley.protocol import generations
from parley.protocol.errors import InternalError
from parley.server import redis_leases as leases
from parley.server.broker import Entry, EventBroker, Subscription, Turn
from parley.server.context import CallContext
from parley.server.redis_turns import RedisTurns
from parley.server.stores.base import TaskKey
from parley.wire import json_bytes as wire_json
from parley.wire.v1_1.protojson_codec import CODEC  # 1.0's JSON with generations

log = logging.getLogger("parley.bus")

OUTGOING = 4096
"""Events queued for Redis at most before a publish waits for them to be sent."""
BLOCK_MS = 2000
"""How long one XREAD waits for an entry before asking again (the client's socket timeout
is 5 s more: a Redis that stops answering is noticed)."""
BATCH = 256
STOP_WAIT = 5.0
"""Seconds a cancel waits for the other replicas to confirm they stopped the task's run."""


class BusUnavailableError(RuntimeError):
    """Redis cannot be reached (at start)."""


class RedisBus(EventBroker):
    """Task events across replicas through Redis streams (see the module), and the
    execution leases that let the others recover a dead replica's tasks
    (`redis_leases`)."""

    failover = True

    def __init__(
        self,
        url: str,
        *,
        prefix: str | None = None,
        buffer_size: int = 1024,
        max_events: int = 10_000,
        retention: float = 300.0,
        idle: float = 86_400.0,
        lease: float = leases.TTL,
    ) -> None:
        super().__init__(buffer_size)
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        self.prefix = prefix or query.pop("prefix", "parley")
        if "lease" in query:  # seconds a lease lasts unrenewed (the URL's say, for the CLI)
            try:
                lease = float(query.pop("lease"))
            except ValueError:
                raise ValueError("the bus URL's lease= must be a number of seconds") from None
        if lease <= 0:
            raise ValueError("a lease must last a positive number of seconds")
        self.url = urlunsplit(parts._replace(query=urlencode(query)))
        self.max_events = max_events
        self.retention = int(retention)
        self.idle = int(idle)
        self._redis: Any = None
        self._readers: dict[Subscription, asyncio.Task[None]] = {}
        self._outgoing: list[tuple[TaskKey, int, dict[str, Any], int]] = []
        self._writer: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self.lease = lease
        self.leases: leases.RedisLeases | None = None
        self.turns: RedisTurns | None = None
        self._doing: set[asyncio.Task[None]] = set()
        self.channel = f"{self.prefix}:stop"
        """Where a replica that canceled a task asks the others to stop their run of it."""

    def stream(self, key: TaskKey) -> str:
        """The Redis key of a task's stream (its scope and id, unambiguously)."""
        return f"{self.prefix}:events:" + wire_json.dumps(list(key)).decode()

    async def start(self) -> None:
        try:
            import redis.asyncio as aioredis  # noqa: PLC0415 - the redis extra
        except ImportError:
            raise BusUnavailableError(
                "the Redis bus needs the redis extra: pip install 'parley-a2a[redis]'"
            ) from None
        client = aioredis.from_url(self.url, socket_timeout=BLOCK_MS / 1000 + 5)
        try:
            await client.ping()
        except Exception as exc:
            await client.aclose()
            raise BusUnavailableError(f"the event bus {self.url} is unreachable: {exc}") from exc
        self._redis = client
        held = leases.RedisLeases(client, f"{self.prefix}:leases", ttl=self.lease)
        held.lost = self.stops_here
        self.leases = held
        turns = RedisTurns(client, self.prefix, held.replica, expiry=self.idle)
        turns.takes = self.takes
        self.turns = turns
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(self.channel, turns.channel)
        self._listener = asyncio.get_running_loop().create_task(self._listen(pubsub, turns))
        self._keeper = asyncio.get_running_loop().create_task(self._keep(held))

    def stops_here(self, key: TaskKey) -> None:
        """Stop the run of a task whose lease was taken away (soon: in a task)."""
        self._later(self.stops(key))

    def _later(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._doing.add(task)
        task.add_done_callback(self._doing.discard)

    async def _keep(self, held: leases.RedisLeases) -> None:
        """Renew this replica's leases; recover the tasks of leases that ran out."""
        renewed = 0.0
        while True:
            await asyncio.sleep(leases.SWEEP * (0.5 + random.random()))  # noqa: S311 - jitter
            try:
                if time.monotonic() - renewed >= held.renew:
                    renewed = time.monotonic()
                    await held.renew_held()
                for task, holder in await held.expired():
                    log.warning("task %s: its replica %s stopped; recovering", task[2], holder)
                    try:
                        await self.recover(task)
                    except Exception:  # e.g. the store is unreachable: a later sweep's
                        log.exception("task %s was not recovered; trying again", task[2])
                        await held.give_back(task, holder)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("leases: %s; trying again", exc)

    async def claim(self, key: TaskKey) -> None:
        """Hold the run's lease; with Redis unreachable the run goes on without one (it is
        logged: were this replica to die now, its task would not be failed over)."""
        assert self.leases is not None, "the bus is not started"
        try:
            await self.leases.hold(key)
        except Exception as exc:
            log.warning("leases: task %s runs without a lease (%s)", key.task_id, exc)

    def released(self, key: TaskKey) -> None:
        if self.leases is not None:
            self.leases.let_go(key)

    def waiting(self, key: TaskKey) -> Awaitable[None]:
        assert self.turns is not None, "the bus is not started"
        return self.turns.waiting(key)

    def hand_off(
        self, key: TaskKey, request: SendMessageRequest, ctx: CallContext
    ) -> Awaitable[Turn | None]:
        assert self.turns is not None, "the bus is not started"
        return self.turns.hand_off(key, request, ctx)

    async def _listen(self, pubsub: Any, turns: RedisTurns) -> None:
        """Stop requests and follow-ups from other replicas, until `stop` (Redis lost:
        tried again)."""
        try:
            while True:
                try:
                    message = await pubsub.get_message(timeout=1.0)
                except Exception as exc:
                    log.warning("event bus: stop requests not heard (%s); trying again", exc)
                    await asyncio.sleep(1.0)
                    continue
                if message is None:
                    continue
                if message["channel"] == turns.channel.encode():
                    turns.heard(message["data"])
                else:
                    key, answer = wire_json.loads(message["data"])
                    self._later(self._stop_here(TaskKey(key[0], key[1], key[2]), answer))
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    async def request_stop(self, key: TaskKey) -> None:
        """Ask every replica to stop its run of the task, and wait (at most `STOP_WAIT`
        seconds) until each has: the cancel then answers once the run has stopped, as in
        one process."""
        answer = f"{self.prefix}:stopped:{uuid.uuid4().hex}"
        try:
            heard = await self._redis.publish(self.channel, wire_json.dumps([list(key), answer]))
            deadline = time.monotonic() + STOP_WAIT
            for _ in range(heard):
                left = deadline - time.monotonic()
                if left <= 0 or await self._redis.blpop([answer], timeout=left) is None:
                    log.warning("event bus: a replica did not confirm stopping %s", key.task_id)
                    break
        except Exception:
            log.exception("event bus: the other replicas were not asked to stop %s", key.task_id)

    async def _stop_here(self, key: TaskKey, answer: str) -> None:
        try:
            await self.stops(key)
        except Exception:
            log.exception("event bus: the run of %s did not stop cleanly", key.task_id)
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.rpush(answer, "1")
                pipe.expire(answer, int(STOP_WAIT) + 5)
                await pipe.execute()
        except Exception as exc:  # the canceling replica stops waiting after STOP_WAIT
            log.warning("event bus: a stop was not confirmed (%s)", exc)

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.flush()
        readers = [*self._readers.values(), *self._doing]
        for task in (self._listener, self._keeper):
            if task is not None:
                readers.append(task)
        self._listener = self._keeper = None
        self._readers.clear()
        if self.leases is not None:
            await self.leases.close()
        if self.turns is not None:
            await self.turns.close()
        await _cancelled(readers)
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def publish(
        self, key: TaskKey, event: StreamEvent, *, final: bool = False, sequence: int | None = None
    ) -> None:
        if sequence is None:  # a direct reply: awaited only here
            self.deliver(key, event, final=final)
            return
        numbered = generations.numbered(event, sequence)  # kept for other replicas' 1.1 streams
        fields = {"e": wire_json.dumps(CODEC.encode_event(numbered)), "f": "1" if final else "0"}
        self._outgoing.append((key, sequence, fields, self.retention if final else self.idle))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write())
        if len(self._outgoing) >= OUTGOING:  # Redis slower than the agents: wait for it
            await asyncio.shield(self._writer)

    async def _write(self) -> None:
        """Send what `publish` queued, in order, as one pipeline per round (what queues
        while a round is out goes in the next): one round trip for many events."""
        while self._outgoing:
            batch, self._outgoing = self._outgoing, []
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for key, sequence, fields, expiry in batch:
                        stream = self.stream(key)
                        pipe.xadd(
                            stream, fields, id=f"{sequence}-0", maxlen=self.max_events,
                            approximate=True,
                        )  # fmt: skip
                        pipe.expire(stream, expiry)
                    answers = await pipe.execute(raise_on_error=False)
            except Exception:
                log.exception("event bus: %d events not published", len(batch))
                continue
            refused = [each for each in answers if isinstance(each, Exception)]
            if refused:  # a later version is there already: a race with another replica
                log.warning("event bus: %d events refused: %s", len(refused), refused[0])

    async def flush(self) -> None:
        """Wait until what was published is sent (for tests and shutdown)."""
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)

    def subscribe(
        self, key: TaskKey, head: Iterable[Entry] = (), *, after: int | None = None
    ) -> Subscription:
        subscription = super().subscribe(key, head, after=after)
        cursor = subscription._last or 0
        reader = asyncio.get_running_loop().create_task(
            self._read(subscription, self.stream(key), cursor)
        )
        self._readers[subscription] = reader
        return subscription

    async def _read(self, subscription: Subscription, stream: str, cursor: int) -> None:
        last = f"{cursor}-0"
        try:
            while True:
                reply = await self._redis.xread({stream: last}, count=BATCH, block=BLOCK_MS)
                for _, entries in reply or ():
                    for entry_id, fields in entries:
                        last = entry_id
                        sequence = int(bytes(entry_id).split(b"-", 1)[0])
                        event = CODEC.decode_event(wire_json.loads(fields[b"e"]))
                        final = fields.get(b"f") == b"1"
                        if not subscription._offer((sequence, event)):
                            return  # fell behind: dropped, told to resubscribe
                        if final:
                            subscription._offer(None)
                            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("event bus: a subscription to %s ended: %s", stream, exc)
            subscription.fail(
                InternalError("The event bus is unavailable: resubscribe to continue")
            )
        finally:
            self._readers.pop(subscription, None)

    def _remove(self, key: TaskKey, subscription: Subscription) -> None:
        super()._remove(key, subscription)
        reader = self._readers.pop(subscription, None)
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()

    async def replayable(self, key: TaskKey, after: int) -> bool:
        try:
            info = await self._redis.xinfo_stream(self.stream(key))
        except Exception:  # no such stream (expired, never published), or Redis is gone
            return False
        first = _sequence(info.get("recorded-first-entry-id"))
        deleted = _sequence(info.get("max-deleted-entry-id"))
        return first is not None and first <= after and (deleted or 0) <= after

    def reader_count(self) -> int:
        """Subscriptions reading the bus (for tests and metrics)."""
        return len(self._readers)


async def _cancelled(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel `tasks` and wait for them, `STOP_WAIT` seconds at most: a bus's stop never
    holds up the app's shutdown (what does not end is logged and left)."""
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    done, stuck = await asyncio.wait(tasks, timeout=STOP_WAIT)
    for task in done:
        if not task.cancelled():
            task.exception()  # retrieved: it ended as it could
    for task in stuck:
        log.warning("event bus: %r did not stop within %s s", task, STOP_WAIT)


def _sequence(entry_id: object) -> int | None:
    if isinstance(entry_id, bytes | bytearray):
        entry_id = entry_id.decode()
    if not isinstance(entry_id, str):
        return None
    with contextlib.suppress(ValueError):
        return int(entry_id.split("-", 1)[0])
    return None


__all__ = ["BusUnavailableError", "RedisBus"]
