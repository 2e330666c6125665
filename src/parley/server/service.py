"""`AgentService`: the request handler every binding calls — one method per operation,
binding-agnostic, scoped by the agent's namespace and the caller's (tenant, caller) before
any lookup.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable
from functools import partial
from operator import attrgetter

from msgspec.structs import replace

from parley.model import (
    AgentCard,
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
)
from parley.protocol import history, lifecycle, paging, validation
from parley.protocol.errors import (
    ExtendedAgentCardNotConfiguredError,
    TaskNotCancelableError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from parley.protocol.operations import Operation, require_capability
from parley.server import failover, long_poll
from parley.server.auth.security import Security
from parley.server.broker import (
    Broker,
    EventBroker,
    EventStream,
    StreamPosition,
)
from parley.server.caps import Caps
from parley.server.context import ANONYMOUS, Authenticator, CallContext, Caller
from parley.server.execution import AgentExecutor
from parley.server.push.delivery import DeliveryWorker, PushSettings
from parley.server.quotas import DEFAULT_QUOTAS, Quotas, RateLimiter
from parley.server.runner import TaskRunner
from parley.server.sending import SendOperations, not_found
from parley.server.stores import namespaces
from parley.server.stores import startup as store_startup
from parley.server.stores.base import PushConfigStore, Scope, StoredTask, TaskKey, TaskStore
from parley.server.stores.memory import InMemoryPushConfigStore, InMemoryTaskStore
from parley.server.visibility import DEFAULT_VISIBLE_AFTER, Visibility


def _with_push(card: AgentCard, on: bool) -> AgentCard:
    capabilities = replace(card.capabilities, push_notifications=on)
    return replace(card, capabilities=capabilities)


ExtendedCard = Callable[[Caller], AgentCard | Awaitable[AgentCard]]  # the caller's card


class AgentService(SendOperations):
    """The standard RequestHandler over an executor, a task store and a broker.

    `namespace` keeps this agent's tasks apart from those of other agents sharing its
    stores: every store read and write is scoped by it as well as by the caller's
    (tenant, caller). By default it is the card's name, so two agents of one name
    sharing a store share their tasks. `namespace=""` scopes by (tenant, caller) only,
    as before agents had namespaces: the tasks stored then are found there, and only
    there. A namespace with a control character, or too long, is a ValueError.

    `extended_card`: the card for authenticated callers, or a function of the caller.
    `sign_card`: signs a card as served (`CardSigner(key).sign`,
    `parley.wire.card_signatures`): the public card and the extended one.
    `quotas`: rate limits per caller (none by default) and caps on each caller's open
    streams and running tasks (on by default), `parley.server.quotas`.
    `visible_after`: seconds after which a new task whose agent has emitted nothing yet is
    created anyway (SUBMITTED), so its caller can see, follow and cancel it; None: only at
    the agent's first event (`parley.server.visibility`).
    """

    long_poll_timeout: float = long_poll.DEFAULT_TIMEOUT
    """Seconds a long-polling GetTask (1.1 draft `currentGeneration`) is held at most."""

    def __init__(
        self,
        executor: AgentExecutor,
        card: AgentCard,
        *,
        store: TaskStore | None = None,
        push_store: PushConfigStore | None = None,
        broker: Broker | None = None,
        extended_card: AgentCard | ExtendedCard | None = None,
        max_parts: int | None = None,
        namespace: str | None = None,
        security: Security | None = None,
        push: PushSettings | bool | None = None,
        sign_card: Callable[[AgentCard], AgentCard] | None = None,
        quotas: Quotas = DEFAULT_QUOTAS,
        visible_after: float | None = DEFAULT_VISIBLE_AFTER,
    ) -> None:
        if push is not None:  # the cards declare delivery exactly when it is on
            card = _with_push(card, push is not False)
            if isinstance(extended_card, AgentCard):
                extended_card = _with_push(extended_card, push is not False)
        if security is not None:  # the cards declare what the authenticator checks
            card = security.apply(card)
            if isinstance(extended_card, AgentCard):
                extended_card = security.apply(extended_card)
        if sign_card is not None:  # last: the signature covers the card as served
            card = sign_card(card)
            if isinstance(extended_card, AgentCard):
                extended_card = sign_card(extended_card)
        self._sign_card = sign_card
        self.security = security
        self.authenticator: Authenticator | None = security
        self._owner = security.owner if security is not None else attrgetter("id")
        self._card = card
        self.namespace = namespaces.check_namespace(card.name if namespace is None else namespace)
        self._prefix = namespaces.prefix(self.namespace)
        self.caps = Caps(quotas)
        self.rate_limiter = RateLimiter(quotas, self.namespace) if quotas.limits_rates else None
        """What the bindings count each request against (`quotas.rate_limiter_of`)."""
        if store is None and push_store is None:
            push_store = InMemoryPushConfigStore()
            store = InMemoryTaskStore(push_configs=push_store)
        self.store = store if store is not None else InMemoryTaskStore()
        self.push_store = push_store if push_store is not None else InMemoryPushConfigStore()
        self.broker = broker if broker is not None else EventBroker()
        self.runner = TaskRunner(executor, self.store, self.broker)
        self.visibility = Visibility(self.runner, visible_after)
        if quotas.max_running_tasks is not None or quotas.max_running_tasks_total is not None:
            self.runner.caps = self.caps  # runs are counted only to be capped
        self.broker.recover = partial(failover.recover, self.runner, self.broker)
        self.broker.takes = self._take_turn
        shares = getattr(self.store, "shares_configs", None)
        self._configs_with_task = shares is not None and shares(self.push_store)
        """Whether an inline push config is set in its new task's creation (one write)."""
        self.push_worker = self._push_worker(push)
        self.extended_card = extended_card
        self.max_parts = max_parts
        self.content_modes = validation.ContentModes(card)
        """The card's input and output modes: a send whose parts or accepted output modes
        the agent does not handle is refused (ContentTypeNotSupportedError, R-SEND-9)."""

    @property
    def card(self) -> AgentCard:
        return self._card

    def _push_worker(self, push: PushSettings | bool | None) -> DeliveryWorker | None:
        """Delivery of push notifications, when the card declares them (`push`: its settings;
        True: the defaults) and the push store has an outbox."""
        outbox = getattr(self.push_store, "outbox", None)
        if not self._card.capabilities.push_notifications:
            return None
        if outbox is None:
            if push is None:
                return None  # a store of configs only: they are kept, not delivered
            raise ValueError("push delivery needs a push-config store with an outbox")
        settings = push if isinstance(push, PushSettings) else PushSettings()
        self.push_allow = settings.allow
        self.push_credentials = settings.credentials
        worker = DeliveryWorker(outbox, self.store, settings)
        if hasattr(self.store, "recorded"):
            self.store.recorded = worker.wake
        return worker

    def store_scope(self, ctx: CallContext) -> Scope:
        """The scope this service reads and writes a call's tasks under in its stores: the
        caller's (tenant, caller) in this agent's namespace (`ctx.scope` when that is
        empty). What to pass to `store` when reaching it directly."""
        return (self._prefix + ctx.tenant, self._owner(ctx.caller))

    async def startup(self) -> None:
        """Open the stores (connect, migrate) and apply the restart policy: tasks a previous
        process of this agent left SUBMITTED or WORKING are failed (`stores.recovery`)."""
        await self.broker.start()
        await store_startup.start(
            self.store,
            self.push_store,
            self.runner.clock(),
            self.namespace,
            recover=not self.broker.failover,
        )
        if self.push_worker is not None:
            await self.push_worker.start()

    async def shutdown(self) -> None:
        try:
            if self.push_worker is not None:
                await self.push_worker.stop()
            await self.visibility.close()
            await self.runner.shutdown()
            await self.broker.stop()
            close = getattr(self.runner.executor, "aclose", None)
            if close is not None:
                await close()
        finally:
            await store_startup.stop(self.store, self.push_store)

    # ----------------------------------------------------------------- tasks

    async def _stored(
        self, scope: Scope, task_id: str, history_length: int | None = None
    ) -> StoredTask:
        stored = await self.store.get(scope, task_id, history_length=history_length)
        if stored is None:
            raise not_found(task_id)
        return stored

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        validation.validate_get(request)
        scope = self.store_scope(ctx)

        async def read() -> Task:
            return (await self._stored(scope, request.id, request.history_length)).task

        if request.current_generation is None:
            return await read()
        key = TaskKey(*scope, request.id)  # a long-poll (1.1 draft): `long_poll`
        return await long_poll.get_after(self.broker, key, request, read, self.long_poll_timeout)

    async def list_tasks(self, ctx: CallContext, request: ListTasksRequest) -> ListTasksResponse:
        validation.validate_list(request)
        size = paging.check_page_size(request.page_size)
        page = await self.store.list(self.store_scope(ctx), request, size)
        tasks = tuple(
            self._listed(task, request.history_length, bool(request.include_artifacts))
            for task in page.tasks
        )
        return ListTasksResponse(
            tasks=tasks,
            next_page_token=page.next_page_token,
            page_size=size,
            total_size=page.total_size,
        )

    @staticmethod
    def _listed(task: Task, history_length: int | None, include_artifacts: bool) -> Task:
        task = history.trim_history(task, history_length)
        return task if include_artifacts else history.without_artifacts(task)

    async def cancel_task(self, ctx: CallContext, request: CancelTaskRequest) -> Task:
        scope = self.store_scope(ctx)
        stored = await self._stored(scope, request.id)
        if lifecycle.is_terminal(stored.task.status.state):
            raise TaskNotCancelableError(
                f"Task {request.id} is already {stored.task.status.state.name}",
                metadata={"taskId": request.id},
            )
        live = self.runner.acquire(TaskKey(*scope, request.id), stored.task.context_id)
        try:
            if live.task is None:
                async with live.lock:
                    await self.runner.load(live, scope)
            return await self.runner.cancel(live)
        finally:
            self.runner.release(live)

    def subscribe_to_task(self, ctx: CallContext, request: SubscribeToTaskRequest) -> EventStream:
        """The task's events; with `ctx.resume_after` (the client's Last-Event-ID), those
        it missed if they can all be replayed, else the spec's Task snapshot first."""
        return EventStream(lambda position: self._subscription(ctx, request, position))

    async def _subscription(
        self, ctx: CallContext, request: SubscribeToTaskRequest, position: StreamPosition
    ) -> AsyncGenerator[StreamEvent, None]:
        require_capability(self._card, Operation.SUBSCRIBE_TO_TASK)
        with self.caps.stream(ctx):
            scope = self.store_scope(ctx)
            await self._stored(scope, request.id)
            live = self.runner.acquire(TaskKey(*scope, request.id))
            try:
                async with live.lock:
                    stored = await self.runner.load(live, scope)
                    if stored is None:
                        raise not_found(request.id)
                    if lifecycle.is_terminal(stored.task.status.state):
                        raise UnsupportedOperationError(
                            f"Task {request.id} is {stored.task.status.state.name}: "
                            "there is nothing to subscribe to",
                            metadata={"taskId": request.id},
                        )
                    subscription = await self.runner.resume(live, ctx.resume_after)
            except BaseException:
                self.runner.release(live)
                raise
            try:
                async for event in subscription:
                    position.sequence = subscription.sequence
                    yield event
            finally:
                subscription.close()
                self.runner.release(live)

    # ----------------------------------------------------------------- cards

    async def get_extended_agent_card(
        self, ctx: CallContext, request: GetExtendedAgentCardRequest
    ) -> AgentCard:
        require_capability(self._card, Operation.GET_EXTENDED_AGENT_CARD)
        if self.security is not None and ctx.caller.id == ANONYMOUS:
            raise UnauthenticatedError("The extended agent card is for authenticated callers")
        if self.extended_card is None:
            raise ExtendedAgentCardNotConfiguredError()
        if isinstance(self.extended_card, AgentCard):
            return self.extended_card
        card = self.extended_card(ctx.caller)
        card = await card if inspect.isawaitable(card) else card
        card = card if self.security is None else self.security.apply(card)
        return card if self._sign_card is None else self._sign_card(card)
