"""Push-notification (webhook) configuration of a task."""

from __future__ import annotations

from parley.model._base import Model


class AuthenticationInfo(Model, frozen=True, kw_only=True):
    """How the agent authenticates to the webhook: an HTTP auth scheme and credentials."""

    scheme: str
    credentials: str = ""


class TaskPushNotificationConfig(Model, frozen=True, kw_only=True):
    """A webhook registered for a task (1.0's flat shape; 0.3 nests it)."""

    url: str
    task_id: str = ""
    id: str = ""
    token: str = ""
    authentication: AuthenticationInfo | None = None
    tenant: str = ""
