"""The concurrency contract of the server over every store: many tasks, each with the agent
writing (status, artifact chunks) while cancels, follow-ups and subscriptions arrive at
random moments from several clients. Whatever the interleaving: no internal error (only
the spec's answers to a lost race: TaskNotCancelable, UnsupportedOperation for a terminal
task); every task ends terminal or interrupted, never left active without a run; every
stream's statuses follow the lifecycle table and end where the task ended; nothing
acknowledged is lost (a canceled task is CANCELED, an accepted follow-up is in history,
a streamed chunk is in the stored artifact, in order, once).

The seed is random and named in every failure; PARLEY_RACE_SEED repeats it."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import Any

from parley.model import (
    Artifact,
    CancelTaskRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import lifecycle
from parley.protocol.errors import TaskNotCancelableError, UnsupportedOperationError
from parley.server.broker import EventBroker
from parley.server.context import CallContext, Caller
from parley.server.execution import EventSink, RequestContext
from parley.server.service import AgentService
from tests.contracts.support import opened, run
from tests.server.support import make_card

TASKS = 80
CHUNKS = 4
CLIENT = CallContext(caller=Caller(id="racer"))
LOST_RACES = (TaskNotCancelableError, UnsupportedOperationError)
"""The answers a client may get for coming second; anything else fails the test."""
Client = tuple[str, Coroutine[Any, Any, None]]


def _text(parts: tuple[object, ...]) -> list[str]:
    return [p.text for p in parts if isinstance(p, TextPart)]


class Worker:
    """Per message: WORKING, CHUNKS chunks of an artifact named after the message (random
    pauses between), then INPUT_REQUIRED if the message says "ask", else COMPLETED."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        name = context.message.message_id
        await events.emit(_status(TaskState.WORKING))
        for number in range(CHUNKS):
            await asyncio.sleep(self.random.random() * 0.004)
            chunk = Artifact(artifact_id=name, parts=(TextPart(text=f"{name}:{number}"),))
            await events.emit(
                TaskArtifactUpdateEvent(
                    task_id="",
                    context_id="",
                    artifact=chunk,
                    append=number > 0,
                    last_chunk=number == CHUNKS - 1,
                )
            )
        asks = _text(context.message.parts) == ["ask"]
        await events.emit(_status(TaskState.INPUT_REQUIRED if asks else TaskState.COMPLETED))

    async def cancel(self, context: RequestContext) -> None:
        """Nothing to release."""


def _status(state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id="", context_id="", status=TaskStatus(state=state))


@dataclass
class Record:
    """What the clients of one task were told."""

    task_id: str = ""
    canceled: bool = False
    accepted: list[str] = field(default_factory=list)
    streams: list[list[StreamEvent]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    unexpected: list[BaseException] = field(default_factory=list)


class Race:
    """One task's clients: a creator, then a canceller, two follow-up senders and a
    subscriber, each starting after a random pause."""

    def __init__(self, service: AgentService, rng: random.Random, number: int) -> None:
        self.service = service
        self.rng = rng
        self.number = number
        self.record = Record()
        self.messages = 0

    def _message(self, text: str, task_id: str = "") -> Message:
        self.messages += 1
        return Message(
            message_id=f"t{self.number}-m{self.messages}",
            role=Role.USER,
            parts=(TextPart(text=text),),
            task_id=task_id,
        )

    def _request(
        self, text: str, task_id: str = "", *, immediate: bool = False
    ) -> SendMessageRequest:
        configuration = SendMessageConfiguration(return_immediately=immediate)
        return SendMessageRequest(message=self._message(text, task_id), configuration=configuration)

    async def _guard(self, client: str, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except LOST_RACES as exc:
            self.record.lost.append(f"{client}: {type(exc).__name__}")
        except Exception as exc:  # any other answer fails the test
            self.record.unexpected.append(exc)

    async def _drain(self, events: AsyncIterator[StreamEvent], seen: list[StreamEvent]) -> None:
        async for event in events:
            seen.append(event)

    async def play(self) -> Record:
        text = "ask" if self.rng.random() < 0.7 else "done"
        creator: asyncio.Future[None] | None = None
        if self.rng.random() < 0.5:
            seen: list[StreamEvent] = []
            self.record.streams.append(seen)
            events = aiter(self.service.send_streaming_message(CLIENT, self._request(text)))
            first = await anext(events)
            seen.append(first)
            assert isinstance(first, Task)
            self.record.task_id = first.id
            creator = asyncio.ensure_future(self._guard("stream", self._drain(events, seen)))
        else:
            sent = await self.service.send_message(CLIENT, self._request(text, immediate=True))
            assert isinstance(sent, Task)
            self.record.task_id = sent.id
        clients = [
            self._follow_up("follow-up 1"),
            self._follow_up("follow-up 2"),
            self._subscribe(),
        ]
        if self.rng.random() < 0.6:
            clients.append(self._cancel())
        await asyncio.gather(*(self._guard(name, c) for name, c in clients))
        if creator is not None:
            await creator
        return self.record

    async def _pause(self) -> None:
        await asyncio.sleep(self.rng.random() * 0.03)

    def _cancel(self) -> Client:
        async def cancel() -> None:
            await self._pause()
            task = await self.service.cancel_task(CLIENT, CancelTaskRequest(id=self.record.task_id))
            assert task.status.state is TaskState.CANCELED
            self.record.canceled = True

        return "cancel", cancel()

    def _follow_up(self, name: str) -> Client:
        async def follow_up() -> None:
            for _ in range(2):
                await self._pause()
                text = "ask" if self.rng.random() < 0.5 else "done"
                request = self._request(text, self.record.task_id)
                if self.rng.random() < 0.5:
                    await self.service.send_message(CLIENT, request)
                    self.record.accepted.append(request.message.message_id)
                else:
                    seen: list[StreamEvent] = []
                    events = aiter(self.service.send_streaming_message(CLIENT, request))
                    seen.append(await anext(events))  # the task with the message: accepted
                    self.record.accepted.append(request.message.message_id)
                    self.record.streams.append(seen)
                    await self._drain(events, seen)

        return name, follow_up()

    def _subscribe(self) -> Client:
        async def subscribe() -> None:
            await self._pause()
            seen: list[StreamEvent] = []
            self.record.streams.append(seen)
            request = SubscribeToTaskRequest(id=self.record.task_id)
            await self._drain(aiter(self.service.subscribe_to_task(CLIENT, request)), seen)

        return "subscribe", subscribe()


def _check_stream(events: list[StreamEvent], final: Task, where: str) -> None:
    """Statuses follow the lifecycle table from the first event's; a stream that ended at
    a terminal status ended where the task did; every chunk is stored."""
    first = events[0]
    assert isinstance(first, Task), where
    state = first.status.state
    stored = {a.artifact_id: _text(a.parts) for a in final.artifacts}
    for event in events[1:]:
        if isinstance(event, TaskStatusUpdateEvent):
            target = event.status.state
            assert target in lifecycle.TRANSITIONS[state], f"{where}: {state.name} -> {target.name}"
            state = target
        elif isinstance(event, TaskArtifactUpdateEvent):
            for text in _text(event.artifact.parts):
                assert text in stored.get(event.artifact.artifact_id, []), f"{where}: {text} lost"
    if lifecycle.is_terminal(state):
        assert state is final.status.state, f"{where}: stream ended {state.name}"


def _check(record: Record, final: Task, where: str) -> None:
    assert not record.unexpected, f"{where}: {record.unexpected!r}"
    assert final.status.state in {
        TaskState.COMPLETED,
        TaskState.CANCELED,
        TaskState.INPUT_REQUIRED,
    }, f"{where}: ended {final.status.state.name}"
    if record.canceled:
        assert final.status.state is TaskState.CANCELED, where
    history = [m.message_id for m in final.history if m.role is Role.USER]
    assert len(history) == len(set(history)), f"{where}: a message stored twice"
    for message_id in record.accepted:
        assert message_id in history, f"{where}: accepted message {message_id} lost"
    for artifact in final.artifacts:
        texts = _text(artifact.parts)
        assert texts == [f"{artifact.artifact_id}:{n}" for n in range(len(texts))], where
    for number, events in enumerate(record.streams):
        if events:
            _check_stream(events, final, f"{where}, stream {number}")


def test_cancels_follow_ups_and_subscriptions_racing_the_agent(store_url: str) -> None:
    seed = int(os.environ.get("PARLEY_RACE_SEED") or random.randrange(2**32))

    async def main() -> None:
        async with opened(store_url) as stores:
            service = AgentService(
                Worker(seed),
                make_card(),
                store=stores.tasks,
                push_store=stores.push_configs,
                broker=EventBroker(),
            )
            rng = random.Random(seed)
            races = [Race(service, random.Random(rng.random()), n) for n in range(TASKS)]
            records = await asyncio.gather(*(race.play() for race in races))
            while service.runner.live_count():  # runs end: none is left behind
                await asyncio.sleep(0.005)
            outcomes: dict[str, int] = {}
            for number, record in enumerate(records):
                stored = await stores.tasks.get(service.store_scope(CLIENT), record.task_id)
                assert stored is not None
                _check(record, stored.task, f"seed {seed}, task {number}")
                state = stored.task.status.state.name
                outcomes[state] = outcomes.get(state, 0) + 1
            await service.runner.shutdown()
            # The races were real: some cancels won, some came second.
            assert outcomes.get("CANCELED"), f"seed {seed}: {outcomes}"
            assert any(r.lost for r in records), f"seed {seed}: no client came second"

    run(main())
