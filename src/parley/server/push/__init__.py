"""Push notifications to webhooks (DESIGN 10). `ssrf` is the guard: which webhook URLs a
config may name and a delivery may reach, and how a delivery connects to the address it
checked."""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from parley.server.push.sender import (
        Answer,
        SendError,
        WebhookClient,
        send_pinned,
        webhook_client,
    )

_SENDER = frozenset({"Answer", "SendError", "WebhookClient", "send_pinned", "webhook_client"})


def __getattr__(name: str) -> Any:
    """The sender's names, loaded on first use (h11 and the CA bundle are not needed until
    a delivery: a server's start does not pay for them)."""
    if name in _SENDER:
        from parley.server.push import sender  # noqa: PLC0415

        return getattr(sender, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
