"""Push notifications to webhooks (DESIGN 10). `ssrf` is the guard: which webhook URLs a
config may name and a delivery may reach, and how a delivery connects to the address it
checked."""

from parley.server.push.sender import Answer, SendError, WebhookClient, send_pinned, webhook_client
from parley.server.push.ssrf import (
    Allow,
    CheckedTarget,
    HostResolutionError,
    Resolver,
    Target,
    UnsafeUrlError,
    check_url,
    refusal,
    resolve_and_check,
    system_resolver,
)

__all__ = [
    "Allow",
    "Answer",
    "CheckedTarget",
    "HostResolutionError",
    "Resolver",
    "SendError",
    "Target",
    "UnsafeUrlError",
    "WebhookClient",
    "check_url",
    "refusal",
    "resolve_and_check",
    "send_pinned",
    "system_resolver",
    "webhook_client",
]
