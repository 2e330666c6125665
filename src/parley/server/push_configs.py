"""The push-config operations of `AgentService` (R-PUSH-1..8): create, get, list, delete, and
the config a SendMessage carries. A webhook URL passes the SSRF guard's syntactic check when
set (`push.ssrf.check_url`, with the service's allow-list) and is checked again, resolved, at
every delivery; a config remembers the protocol version it was set in (its payloads are in
that version); get and list never show credentials or tokens (R-PUSH-21, R-PUSH-22).
"""

from __future__ import annotations

from msgspec.structs import replace

from parley.model import (
    AgentCard,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from parley.protocol import validation
from parley.protocol.errors import TaskNotFoundError, invalid_field
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation, require_capability
from parley.server.context import CallContext
from parley.server.push import signing
from parley.server.push.credentials import CredentialsKeys
from parley.server.push.ssrf import NO_ALLOW, Allow, UnsafeUrlError, check_url
from parley.server.stores.base import PushConfigStore, Scope, StoredTask


def check_webhook(config: TaskPushNotificationConfig, allow: Allow, field: str = "url") -> None:
    """InvalidParamsError on `field` when the SSRF guard refuses the config's URL, or on
    the token when it is a malformed Standard Webhooks secret (`whsec_` + base64)."""
    try:
        check_url(config.url, allow=allow)
    except UnsafeUrlError as exc:
        raise invalid_field(field, f"webhook URL refused: {exc}") from None
    if not config.token.startswith(signing.SECRET_PREFIX):
        return  # any other token is a key as it is
    try:
        signing.secret_key(config.token)
    except ValueError as exc:
        raise invalid_field(field.removesuffix("url") + "token", str(exc)) from None


def redacted(config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
    """The config without its secrets: the authentication's scheme stays, its credentials and
    the token go."""
    auth = config.authentication
    if auth is not None and auth.credentials:
        auth = replace(auth, credentials="")
    if auth is config.authentication and not config.token:
        return config
    return replace(config, authentication=auth, token="")


class PushConfigOperations:
    """Mixed into AgentService, which provides these."""

    _card: AgentCard
    _prefix: str
    push_store: PushConfigStore
    push_allow: Allow = NO_ALLOW
    push_credentials: CredentialsKeys | None = None
    """What stored credentials and tokens are encrypted with (None: stored as given)."""

    def store_scope(self, ctx: CallContext) -> Scope:
        raise NotImplementedError

    async def _stored(
        self, scope: Scope, task_id: str, history_length: int | None = None
    ) -> StoredTask:
        raise NotImplementedError

    def _check_inline_push(self, request: SendMessageRequest) -> None:
        configuration = request.configuration
        if configuration is None or configuration.push_notification_config is None:
            return
        if not self._card.capabilities.push_notifications:  # declared: no table lookup
            require_capability(self._card, Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG)
        check_webhook(
            configuration.push_notification_config,
            self.push_allow,
            "configuration.taskPushNotificationConfig.url",
        )

    def _inline_push(
        self, ctx: CallContext, request: SendMessageRequest, task_id: str
    ) -> tuple[TaskPushNotificationConfig, Version]:
        """A SendMessage's config, to set before its task runs (so it hears every event):
        with the new task as it is created, or before a follow-up; sealed for storing."""
        assert request.configuration is not None
        config = request.configuration.push_notification_config
        assert config is not None
        config = replace(config, task_id=task_id, id=config.id or task_id)
        return self._sealed(config), ctx.version

    def _sealed(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """The config as stored: its credentials and token encrypted, with a key."""
        keys = self.push_credentials
        return config if keys is None else keys.seal(config)

    async def create_task_push_notification_config(
        self, ctx: CallContext, request: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        require_capability(self._card, Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG)
        validation.validate_push_config(request)
        check_webhook(request, self.push_allow)
        scope = self.store_scope(ctx)
        await self._stored(scope, request.task_id)
        config = replace(request, id=request.id or request.task_id, tenant=ctx.tenant)
        await self.push_store.put(scope, self._sealed(config), protocol=ctx.version)
        return config  # the caller's own input: get and list are what never show secrets

    async def get_task_push_notification_config(
        self, ctx: CallContext, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        require_capability(self._card, Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG)
        scope = self.store_scope(ctx)
        await self._stored(scope, request.task_id)
        config = await self.push_store.get(scope, request.task_id, request.id)
        if config is None:
            raise TaskNotFoundError(
                f"Push notification config {request.id} of task {request.task_id} not found",
                metadata={"taskId": request.task_id, "configId": request.id},
            )
        return self._as_put(config, ctx)

    async def list_task_push_notification_configs(
        self, ctx: CallContext, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        require_capability(self._card, Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS)
        scope = self.store_scope(ctx)
        await self._stored(scope, request.task_id)
        configs = await self.push_store.list(scope, request.task_id)
        return ListTaskPushNotificationConfigsResponse(
            configs=tuple(self._as_put(config, ctx) for config in configs)
        )

    async def delete_task_push_notification_config(
        self, ctx: CallContext, request: DeleteTaskPushNotificationConfigRequest
    ) -> None:
        require_capability(self._card, Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG)
        scope = self.store_scope(ctx)
        await self._stored(scope, request.task_id)
        await self.push_store.delete(scope, request.task_id, request.id)

    def _as_put(
        self, config: TaskPushNotificationConfig, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        """A stored config carries its store scope's tenant, the namespace included; the
        caller gets its own tenant back, and no secret."""
        return redacted(replace(config, tenant=ctx.tenant) if self._prefix else config)
