"""The send operations of `AgentService` (SendMessage, SendStreamingMessage): a new task's
run begun, or a follow-up's in its turn (one run at a time per task), and the answer or
the stream of its events. Across replicas, a follow-up whose task waits on another
replica (its agent function suspended there) is handed to that one (`Broker.hand_off`),
and the answer is followed on the bus.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from parley.model import (
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResult,
    StreamEvent,
    Task,
    TaskStatusUpdateEvent,
)
from parley.protocol import generations, history, lifecycle, validation
from parley.protocol.errors import InternalError, TaskNotFoundError
from parley.protocol.operations import Operation, require_capability
from parley.server.broker import Broker, EventStream, StreamPosition, Subscription, Turn
from parley.server.caps import Caps
from parley.server.context import CallContext
from parley.server.live import LiveTask
from parley.server.push_configs import PushConfigOperations
from parley.server.runner import TaskRunner
from parley.server.stores.base import Scope, TaskKey
from parley.server.visibility import Visibility
from parley.wire import limits

Admit = Callable[[CallContext, Message, Mapping[str, Any] | None], None]
"""An executor's check of a message before its run (`FunctionExecutor.admit`)."""


def not_found(task_id: str) -> TaskNotFoundError:
    # Missing and forbidden look the same (DESIGN 8, R-ERR-8).
    return TaskNotFoundError(f"Task {task_id} not found", metadata={"taskId": task_id})


class SendOperations(PushConfigOperations):
    """Mixed into AgentService, which provides these."""

    runner: TaskRunner
    broker: Broker
    caps: Caps
    max_parts: int | None
    content_modes: validation.ContentModes
    _configs_with_task: bool
    visibility: Visibility
    _admitting: tuple[object, Admit | None] = (None, None)
    """The runner's executor and its `admit` hook (looked up again if the executor changes,
    e.g. wrapped by telemetry)."""

    def _admit_hook(self) -> Admit | None:
        """The executor's `admit` (e.g. a skill's scopes, `FunctionExecutor.admit`), if any."""
        executor = self.runner.executor
        admitting = self._admitting
        if admitting[0] is not executor:
            admitting = self._admitting = (executor, getattr(executor, "admit", None))
        return admitting[1]

    async def send_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> SendMessageResult:
        self._admit_send(request)
        configuration = request.configuration
        immediate = configuration is not None and configuration.return_immediately
        live, elsewhere = await self._start(
            ctx, request, eager=immediate or self._has_push(request)
        )
        try:
            if elsewhere is not None:  # a follow-up another replica runs
                return await self._answered_elsewhere(live, elsewhere, request, immediate)
            if not immediate:
                await live.settled.wait()
            if live.reply is not None and live.task is None:
                return live.reply
            if live.task is None:  # the run failed, or was stopped, before any answer
                raise live.error or InternalError("The agent stopped before answering; try again")
            return self._shaped(live.task, request)
        finally:
            self.runner.release(live)

    def send_streaming_message(self, ctx: CallContext, request: SendMessageRequest) -> EventStream:
        return EventStream(lambda position: self._stream_message(ctx, request, position))

    async def _stream_message(
        self, ctx: CallContext, request: SendMessageRequest, position: StreamPosition
    ) -> AsyncGenerator[StreamEvent, None]:
        require_capability(self._card, Operation.SEND_STREAMING_MESSAGE)
        self._admit_send(request)
        with self.caps.stream(ctx):
            live, subscription = await self._start(
                ctx, request, eager=self._has_push(request), subscribe=True
            )
            assert subscription is not None
            try:
                async for event in subscription:  # the snapshot: a follow-up's or the runner's
                    position.sequence = subscription.sequence
                    yield self._shaped(event, request) if isinstance(event, Task) else event
            finally:
                subscription.close()
                self.runner.release(live)

    def _admit_send(self, request: SendMessageRequest) -> None:
        validation.validate_send(request, max_parts=self.max_parts or limits.active().max_parts)
        self.content_modes.check(request)
        self._check_inline_push(request)

    @staticmethod
    def _has_push(request: SendMessageRequest) -> bool:
        configuration = request.configuration
        return configuration is not None and configuration.push_notification_config is not None

    async def _start(
        self, ctx: CallContext, request: SendMessageRequest, *, eager: bool, subscribe: bool = False
    ) -> tuple[LiveTask, Subscription | None]:
        """The message's live task and its run begun; with `subscribe`, the subscription
        to its events. Without, a subscription is returned only for a follow-up another
        replica took (`Broker.hand_off`): how the answer is followed."""
        message = request.message
        self.caps.admit_run(ctx)
        scope = self.store_scope(ctx)
        if message.task_id:
            live = await self._follow_up(scope, message, request.configuration)
        else:
            task_id = self.runner.ids()
            context_id = message.context_id or self.runner.ids()
            live = self.runner.acquire(TaskKey(*scope, task_id), context_id)
        subscription = self.runner.subscribe(live) if subscribe and not message.task_id else None
        try:
            if (admit := self._admit_hook()) is not None:  # checked once a follow-up's
                admit(ctx, message, request.metadata)  # task is known to be the caller's
            if eager and self._has_push(request):  # (eager whenever it has one)
                await self._set_inline_push(ctx, request, live)
            task = live.task
            if task is not None and lifecycle.is_interrupted(task.status.state):
                turn = await self.broker.hand_off(live.key, request, ctx)
                if turn is not None:  # its run waits on another replica, which took it
                    return live, self.broker.subscribe(live.key, (turn,), after=turn[0])
            await self.runner.begin(ctx, request, live, eager=eager)
            self.visibility.watch(live)  # a new task: created soon even if its agent is silent
            if subscribe and live.task is not None and message.task_id:
                # A follow-up's stream starts with the task as the message left it (no
                # await since `begin` committed it: the agent's events all come after).
                subscription = self.runner.subscribe(live, ((live.sequence, live.task),))
        except BaseException:
            if subscription is not None:
                subscription.close()
            self.runner.release(live)
            raise
        finally:
            if message.task_id and live.turn.locked():
                live.turn.release()
        return live, subscription

    async def _set_inline_push(
        self, ctx: CallContext, request: SendMessageRequest, live: LiveTask
    ) -> None:
        """The push config the request carries: set with a new task in its creation when
        the stores share a database, else now."""
        config = self._inline_push(ctx, request, live.key.task_id)
        if self._configs_with_task and not request.message.task_id:
            live.creating = {"configs": (config,)}
        else:
            await self.push_store.put(live.key[:2], config[0], protocol=config[1])

    async def _follow_up(
        self, scope: Scope, message: Message, configuration: SendMessageConfiguration | None
    ) -> LiveTask:
        """The task's live state, once it is this message's turn (the caller must
        `begin` and then leave `live.turn`); the message checked against the task."""
        live = self.runner.acquire(TaskKey(*scope, message.task_id))
        try:
            await live.turn.acquire()  # follow-ups of one task take turns
            while live.run is not None and not live.run.done():
                await asyncio.wait({live.run})  # one run at a time per task
            async with live.lock:
                stored = await self.runner.load(live, scope)
            if stored is None:
                raise not_found(message.task_id)
            validation.check_follow_up(stored.task, message)
            generations.check_match(stored.task, configuration)  # 1.1 draft's ifGenerationMatch
        except BaseException:
            if live.turn.locked():
                live.turn.release()
            self.runner.release(live)
            raise
        return live

    async def _take_turn(self, key: TaskKey, request: SendMessageRequest, ctx: CallContext) -> Turn:
        """A follow-up another replica handed here (its task waits here): begun as if sent
        here; the task as its message left it."""
        live = await self._follow_up(key[:2], request.message, request.configuration)
        try:
            if (admit := self._admit_hook()) is not None:
                admit(ctx, request.message, request.metadata)
            await self.runner.begin(ctx, request, live, eager=False)
            assert live.task is not None
            return live.sequence, live.task
        finally:
            live.turn.release()
            self.runner.release(live)

    async def _answered_elsewhere(
        self, live: LiveTask, events: Subscription, request: SendMessageRequest, immediate: bool
    ) -> Task:
        """A blocking send's answer to a follow-up run on another replica: the task once
        the run ends or pauses (non-blocking: as the message left it)."""
        try:
            async for event in events:
                if immediate and isinstance(event, Task):
                    return self._shaped(event, request)
                if isinstance(event, TaskStatusUpdateEvent) and lifecycle.ends_blocking_send(
                    event.status.state
                ):
                    break
        finally:
            events.close()
        stored = await self._stored(live.key[:2], live.key.task_id)
        return self._shaped(stored.task, request)

    @staticmethod
    def _shaped(task: Task, request: SendMessageRequest) -> Task:
        configuration = request.configuration
        length = configuration.history_length if configuration else None
        if length is None:
            return task  # (the usual: no trimming, and no call to decide so)
        return history.trim_history(task, length, field="configuration.historyLength")
