"""`Client`: the A2A client applications use. `Client.connect(url)` resolves the agent card,
picks the interface and builds its transport; every operation is one method on the
canonical model, with per-call extensions and timeout; idempotent calls are retried;
streams resubscribe (see `parley.client.streaming`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import partial

import httpx

from parley.client import waiting
from parley.client.auth import Auth
from parley.client.card import HTTP_JSON_BINDING, JSONRPC_BINDING, PREFERRED_VERSIONS
from parley.client.connect import TRANSPORTS, Connecting, TransportFactory, connect_client
from parley.client.content import Content, configured, user_message, with_skill
from parley.client.http import DEFAULT_CONNECT_TIMEOUT
from parley.client.retry import RetryPolicy
from parley.client.session import Session
from parley.client.streaming import ClientStream, StreamPolicy
from parley.client.transport import (
    DEFAULT,
    DEFAULT_TIMEOUT,
    CallOptions,
    EventStream,
    Timeout,
)
from parley.model import (
    AgentCard,
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    JSONObject,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResult,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation


class Client(Session):
    """One agent, through one transport.

    `Client.connect(url, …)` is the usual way in (`await` it, or `async with` it);
    `Client(transport)` wraps any transport, e.g. `parley.testing.InMemoryTransport`.
    Server errors are raised as `parley.protocol.errors` classes, transport failures
    as `parley.client.errors` classes.
    """

    @staticmethod
    def connect(
        url: str,
        *,
        auth: Auth | None = None,
        versions: Sequence[Version] = PREFERRED_VERSIONS,
        bindings: Sequence[str] = (JSONRPC_BINDING, HTTP_JSON_BINDING),
        extensions: Sequence[str] = (),
        extended_card: bool | None = None,
        card_keys: object = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        retry: RetryPolicy | None = None,
        streaming: StreamPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        http: httpx.AsyncClient | None = None,
        transports: Mapping[str, TransportFactory] = TRANSPORTS,
    ) -> Connecting:
        """Resolve the card at `url` (its well-known path, or `url` itself if it names a
        `.json` document), pick the interface (`versions` in order, then the card's order
        among `bindings`), and build its transport.

        `extended_card`: fetch the extended card when the card offers one — by default
        only when `auth` is given (the server requires credentials for it); True: always;
        False: never. `card_keys`: public keys the card must be signed with (a JWKS, a PEM
        public key, or a file of either; `parley.wire.card_signatures.load_keys`), else
        `CardSignatureError` before anything is sent. `http`: an httpx client to use (and
        leave open); by default one is made and closed with the Client.
        """
        return Connecting(
            connect_client(
                Client,
                url,
                auth=auth,
                versions=versions,
                bindings=bindings,
                extensions=extensions,
                extended_card=extended_card,
                card_keys=card_keys,
                timeout=timeout,
                connect_timeout=connect_timeout,
                retry=retry,
                streaming=streaming,
                headers=headers,
                http=http,
                transports=transports,
            )
        )

    # ------------------------------------------------------------------ messages

    async def send(
        self,
        content: Content,
        *,
        task_id: str = "",
        context_id: str = "",
        return_immediately: bool = False,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        configuration: SendMessageConfiguration | None = None,
        metadata: JSONObject | None = None,
        skill: str = "",
        extensions: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
        deadline: float | None = None,
        follow: bool = True,
    ) -> SendMessageResult:
        """SendMessage: the Task (finished or interrupted, unless `return_immediately`) or
        the agent's direct Message reply (both have `.text`). The keyword options override
        `configuration`'s. `skill`: the skill to run, for agents that route by the
        request's `"skill"` metadata, as Parley's do.

        A blocking send answered with a task still SUBMITTED or WORKING (some servers do
        not wait) is followed to the end of its turn (`wait`), as is a follow-up whose
        request timed out (`timeout`, 300 s by default); `follow=False`: neither.
        `deadline`: a hard bound on the whole, in seconds; past it, ClientTimeoutError
        carrying the task id when the client knows it. A blocking send tells a new task's
        id only when it answers: for tasks that may outlast the timeout, `stream`, or send
        with `return_immediately=True` and `wait`."""
        settings = configured(
            configuration, return_immediately, history_length, accepted_output_modes
        )
        request = self._request(content, task_id, context_id, settings, with_skill(metadata, skill))
        return await waiting.sent(
            self,
            partial(
                self._call, Operation.SEND_MESSAGE, self.transport.send_message, request, extensions
            ),
            task_id=task_id,
            blocking=follow and not (settings is not None and settings.return_immediately),
            timeout=timeout,
            deadline=deadline,
            history_length=settings.history_length if settings is not None else None,
            extensions=extensions,
        )

    def _request(
        self,
        content: Content,
        task_id: str,
        context_id: str,
        configuration: SendMessageConfiguration | None,
        metadata: JSONObject | None,
    ) -> SendMessageRequest:
        message = user_message(content, task_id=task_id, context_id=context_id)
        return SendMessageRequest(
            message=message, configuration=configuration, metadata=metadata, tenant=self.tenant
        )

    def stream(
        self,
        content: Content,
        *,
        task_id: str = "",
        context_id: str = "",
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        configuration: SendMessageConfiguration | None = None,
        metadata: JSONObject | None = None,
        skill: str = "",
        extensions: Sequence[str] = (),
    ) -> ClientStream:
        """SendStreamingMessage: iterate the result (`async for`), ideally inside
        `async with`. Yields StreamEvents, and `Reconnected` after a reconnection that
        could not replay what was missed. `skill`: as `send`'s."""
        settings = configured(configuration, False, history_length, accepted_output_modes)
        request = self._request(content, task_id, context_id, settings, with_skill(metadata, skill))
        options = self._options(extensions, DEFAULT)

        def open(first: CallOptions) -> EventStream:
            return self.transport.send_streaming_message(request, first)

        return self._stream(open, options)

    # ------------------------------------------------------------------ tasks

    async def get_task(
        self,
        task_id: str,
        *,
        history_length: int | None = None,
        current_generation: int | None = None,
        extensions: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
    ) -> Task:
        """The task. `current_generation` (A2A 1.1 draft): a long-poll, answered once the
        task is past that generation, or at the server's timeout (give a `timeout` above
        it); a server of another version answers at once."""
        request = GetTaskRequest(
            id=task_id,
            history_length=history_length,
            tenant=self.tenant,
            current_generation=current_generation,
        )
        return await self._call(
            Operation.GET_TASK, self.transport.get_task, request, extensions, timeout
        )

    async def list_tasks(
        self,
        *,
        context_id: str = "",
        status: TaskState | None = None,
        page_size: int | None = None,
        page_token: str = "",
        history_length: int | None = None,
        status_timestamp_after: datetime | None = None,
        include_artifacts: bool | None = None,
        extensions: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
    ) -> ListTasksResponse:
        """ListTasks (1.0 only: a 0.3 interface raises MethodNotFoundError)."""
        request = ListTasksRequest(
            context_id=context_id,
            status=status,
            page_size=page_size,
            page_token=page_token,
            history_length=history_length,
            status_timestamp_after=status_timestamp_after,
            include_artifacts=include_artifacts,
            tenant=self.tenant,
        )
        return await self._call(
            Operation.LIST_TASKS, self.transport.list_tasks, request, extensions, timeout
        )

    async def cancel_task(
        self,
        task_id: str,
        *,
        metadata: JSONObject | None = None,
        extensions: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
    ) -> Task:
        request = CancelTaskRequest(id=task_id, metadata=metadata, tenant=self.tenant)
        return await self._call(
            Operation.CANCEL_TASK, self.transport.cancel_task, request, extensions, timeout
        )

    def subscribe(self, task_id: str, *, extensions: Sequence[str] = ()) -> ClientStream:
        """SubscribeToTask: the task's current snapshot first, then its updates."""
        request = SubscribeToTaskRequest(id=task_id, tenant=self.tenant)

        def open(first: CallOptions) -> EventStream:
            return self.transport.subscribe_to_task(request, first)

        return self._stream(open, self._options(extensions, DEFAULT), task_id)

    async def wait(
        self,
        task: Task | str,
        *,
        history_length: int | None = None,
        deadline: float | None = None,
        extensions: Sequence[str] = (),
    ) -> Task:
        """The task once it is terminal or interrupted (input or authorization required),
        however long that takes: followed by SubscribeToTask when the agent streams, else
        by GetTask every so often (`parley.client.waiting`). `deadline`: seconds, past
        which ClientTimeoutError carries the task id."""
        return await waiting.wait(
            self, task, history_length=history_length, deadline=deadline, extensions=extensions
        )

    # ------------------------------------------------------------------ push configs

    async def create_push_config(
        self,
        task_id: str,
        url: str,
        *,
        config_id: str = "",
        token: str = "",
        authentication: AuthenticationInfo | None = None,
        extensions: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
    ) -> TaskPushNotificationConfig:
        """Register a webhook for a task (the same `config_id` replaces it)."""
        request = TaskPushNotificationConfig(
            url=url,
            task_id=task_id,
            id=config_id,
            token=token,
            authentication=authentication,
            tenant=self.tenant,
        )
        return await self._call(
            Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
            self.transport.create_task_push_notification_config,
            request,
            extensions,
            timeout,
        )

    async def get_push_config(
        self,
        task_id: str,
        config_id: str,
        *,
        extensions: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
    ) -> TaskPushNotificationConfig:
        request = GetTaskPushNotificationConfigRequest(
            task_id=task_id, id=config_id, tenant=self.tenant
        )
        return await self._call(
            Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
            self.transport.get_task_push_notification_config,
            request,
            extensions,
            timeout,
        )

    async def list_push_configs(
        self,
        task_id: str,
        *,
        page_size: int = 0,
        page_token: str = "",
        extensions: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
    ) -> ListTaskPushNotificationConfigsResponse:
        request = ListTaskPushNotificationConfigsRequest(
            task_id=task_id, page_size=page_size, page_token=page_token, tenant=self.tenant
        )
        return await self._call(
            Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
            self.transport.list_task_push_notification_configs,
            request,
            extensions,
            timeout,
        )

    async def delete_push_config(
        self,
        task_id: str,
        config_id: str,
        *,
        extensions: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
    ) -> None:
        request = DeleteTaskPushNotificationConfigRequest(
            task_id=task_id, id=config_id, tenant=self.tenant
        )
        await self._call(
            Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
            self.transport.delete_task_push_notification_config,
            request,
            extensions,
            timeout,
        )

    # ------------------------------------------------------------------ cards

    async def get_extended_card(
        self, *, extensions: Sequence[str] = (), timeout: Timeout = DEFAULT
    ) -> AgentCard:
        """GetExtendedAgentCard; the client keeps it as its `card` (R-XCARD-2)."""
        request = GetExtendedAgentCardRequest(tenant=self.tenant)
        card = await self._call(
            Operation.GET_EXTENDED_AGENT_CARD,
            self.transport.get_extended_agent_card,
            request,
            extensions,
            timeout,
        )
        self.card = card
        return card
