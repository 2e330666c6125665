"""Checks of push-notification configs on one interface: declared means the four config
operations work on a task of the checker's own; undeclared means they are refused
(REFERENCE R-PUSH). No notification is delivered: the webhook URL is only stored."""

from __future__ import annotations

from parley.conformance.context import InterfaceContext, NoTaskError, describe
from parley.conformance.results import CheckFailedError, CheckSkippedError, Level, Registry
from parley.model import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    TaskPushNotificationConfig,
)
from parley.protocol import errors as e
from parley.protocol.operations import Operation

checks = Registry()

WEBHOOK = "https://example.com/parley-check/webhook"
"""Stored, never called: the checker's tasks end before a notification would matter."""


@checks.interface(
    "push.config-crud", "R-PUSH-1", Level.MUST, "declared push: create, get, list, delete a config"
)
async def push_config_crud(context: InterfaceContext) -> str:
    if not context.card.capabilities.push_notifications:
        raise CheckSkippedError("the card does not declare push notifications")
    task_id = await _task_id(context)
    created = context.decoded(
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        await context.call(
            Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
            TaskPushNotificationConfig(url=WEBHOOK, task_id=task_id, token="parley-check"),  # noqa: S106 - a webhook token, not a secret
        ),
    )
    if not created.id:
        raise CheckFailedError("the created config has no id")
    read = context.decoded(
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        await context.call(
            Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
            GetTaskPushNotificationConfigRequest(task_id=task_id, id=created.id),
        ),
    )
    if read.url != WEBHOOK:
        raise CheckFailedError(f"Get returns url {read.url!r}, not the one created (R-PUSH-3)")
    listed = context.decoded(
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        await context.call(
            Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
            ListTaskPushNotificationConfigsRequest(task_id=task_id),
        ),
    )
    if created.id not in [config.id for config in listed.configs]:
        raise CheckFailedError("List does not hold the created config (R-PUSH-5)")
    deleted = await context.call(
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=created.id),
    )
    if not deleted.succeeded:
        raise CheckFailedError(f"Delete answered {describe(deleted)}")
    after = await context.call(
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        GetTaskPushNotificationConfigRequest(task_id=task_id, id=created.id),
    )
    if after.error is None:
        raise CheckFailedError("Get still finds the config after Delete (R-PUSH-6)")
    return "created, read, listed, deleted"


@checks.interface(
    "push.undeclared", "R-PUSH-8", Level.MUST, "without push, config operations are refused"
)
async def push_undeclared(context: InterfaceContext) -> str:
    if context.card.capabilities.push_notifications:
        raise CheckSkippedError("the card declares push notifications")
    task_id = await _task_id(context)
    answer = await context.call(
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        TaskPushNotificationConfig(url=WEBHOOK, task_id=task_id),
    )
    return context.expect_error(answer, e.PushNotificationNotSupportedError)


async def _task_id(context: InterfaceContext) -> str:
    try:
        return (await context.new_task()).id
    except NoTaskError as exc:
        raise CheckSkippedError(str(exc)) from exc
