"""The request and response of every operation, version-neutral.

Fields that only one protocol version can carry say so; codecs drop or derive them.
"""

from __future__ import annotations

from datetime import datetime
from typing import TypeAlias

from parley.model._base import JSONObject, Model
from parley.model.messages import Message
from parley.model.push import TaskPushNotificationConfig
from parley.model.tasks import Task, TaskState


class SendMessageConfiguration(Model, frozen=True, kw_only=True):
    """How to process a sent message.

    `return_immediately` is 1.0's name; 0.3 sends its negation as `blocking`.
    `history_length` None means no limit was asked for. `if_generation_match` (1.1 draft):
    a follow-up is refused unless the task is at that generation.
    """

    accepted_output_modes: tuple[str, ...] = ()
    push_notification_config: TaskPushNotificationConfig | None = None
    history_length: int | None = None
    return_immediately: bool = False
    if_generation_match: int | None = None


class SendMessageRequest(Model, frozen=True, kw_only=True):
    """SendMessage and SendStreamingMessage."""

    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: JSONObject | None = None
    tenant: str = ""


SendMessageResult: TypeAlias = Task | Message
"""SendMessage answers with a task or, for a direct reply, a message."""


class GetTaskRequest(Model, frozen=True, kw_only=True):
    """GetTask. `current_generation` (1.1 draft): a long-poll, answered once the task's
    generation is above it (or at the server's timeout)."""

    id: str
    history_length: int | None = None
    metadata: JSONObject | None = None
    tenant: str = ""
    current_generation: int | None = None


class ListTasksRequest(Model, frozen=True, kw_only=True):
    """ListTasks (1.0 only). None means the filter or option was not given."""

    context_id: str = ""
    status: TaskState | None = None
    page_size: int | None = None
    page_token: str = ""
    history_length: int | None = None
    status_timestamp_after: datetime | None = None
    include_artifacts: bool | None = None
    tenant: str = ""


class ListTasksResponse(Model, frozen=True, kw_only=True):
    """One page of tasks; `next_page_token` is empty on the last page."""

    tasks: tuple[Task, ...]
    next_page_token: str
    page_size: int
    total_size: int


class CancelTaskRequest(Model, frozen=True, kw_only=True):
    """CancelTask."""

    id: str
    metadata: JSONObject | None = None
    tenant: str = ""


class SubscribeToTaskRequest(Model, frozen=True, kw_only=True):
    """SubscribeToTask (0.3: tasks/resubscribe)."""

    id: str
    metadata: JSONObject | None = None
    tenant: str = ""


class GetTaskPushNotificationConfigRequest(Model, frozen=True, kw_only=True):
    """GetTaskPushNotificationConfig: `id` is the config id."""

    task_id: str
    id: str
    metadata: JSONObject | None = None
    tenant: str = ""


class ListTaskPushNotificationConfigsRequest(Model, frozen=True, kw_only=True):
    """ListTaskPushNotificationConfigs."""

    task_id: str
    page_size: int = 0
    page_token: str = ""
    metadata: JSONObject | None = None
    tenant: str = ""


class ListTaskPushNotificationConfigsResponse(Model, frozen=True, kw_only=True):
    """The push configs of a task (0.3 answers a bare list; no paging there)."""

    configs: tuple[TaskPushNotificationConfig, ...]
    next_page_token: str = ""


class DeleteTaskPushNotificationConfigRequest(Model, frozen=True, kw_only=True):
    """DeleteTaskPushNotificationConfig: `id` is the config id."""

    task_id: str
    id: str
    metadata: JSONObject | None = None
    tenant: str = ""


class GetExtendedAgentCardRequest(Model, frozen=True, kw_only=True):
    """GetExtendedAgentCard (0.3: agent/getAuthenticatedExtendedCard)."""

    tenant: str = ""
