"""The closed hierarchy of protocol errors: one class per spec error and per JSON-RPC error.

    A2AError
    ├── JSONParseError                       the payload is not JSON (or too big / too deep)
    ├── InvalidRequestError                  JSON, but not a valid request envelope
    ├── MethodNotFoundError                  unknown method or route
    ├── InvalidParamsError                   a request that breaks the schema or the rules
    ├── InternalError                        anything the server did wrong
    ├── TaskNotFoundError                    unknown task, or one the caller may not see
    ├── TaskNotCancelableError               cancel of a task that is already terminal
    ├── PushNotificationNotSupportedError    push configs without the capability
    ├── UnsupportedOperationError            an operation the agent or the task cannot do now
    ├── ContentTypeNotSupportedError         a part's media type is not accepted
    ├── InvalidAgentResponseError            the agent produced a non-conforming response
    ├── ExtendedAgentCardNotConfiguredError  the capability is declared, no card is configured
    ├── ExtensionSupportRequiredError        a required extension was not requested
    ├── VersionNotSupportedError             the requested `A2A-Version` is not served
    ├── TaskGenerationMismatchError          `ifGenerationMatch` is not the task's (1.1 draft)
    ├── UnauthenticatedError                 no valid credentials (HTTP 401)
    ├── PermissionDeniedError                authenticated, but not allowed (HTTP 403)
    ├── UnavailableError                     a service the agent needs is down for now (503)
    └── RateLimitedError                     the caller's rate limit or a cap is reached (429)

Server and client raise and catch the same classes; `parley.wire.errors` maps each
to its JSON-RPC code, HTTP status and gRPC status. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from parley.model import JSONValue, Model


class FieldViolation(Model, frozen=True, kw_only=True):
    """One invalid field of a request (google.rpc.BadRequest.FieldViolation)."""

    field: str
    description: str


class A2AError(Exception):
    """Base of every protocol error.

    `metadata` becomes google.rpc.ErrorInfo metadata (string to string);
    `field_violations` become google.rpc.BadRequest; `data` keeps a peer's free-form
    0.3 error data when a client decodes one.
    """

    default_message: ClassVar[str] = "Error"

    def __init__(
        self,
        message: str | None = None,
        *,
        metadata: Mapping[str, str] | None = None,
        field_violations: tuple[FieldViolation, ...] = (),
        data: JSONValue = None,
    ) -> None:
        self.message = message or self.default_message
        self.metadata: Mapping[str, str] = dict(metadata or {})
        self.field_violations = field_violations
        self.data = data
        super().__init__(self.message)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, A2AError)
            and (other.message, other.metadata, other.field_violations, other.data)
            == (self.message, self.metadata, self.field_violations, self.data)
        )

    def __hash__(self) -> int:
        return hash((type(self), self.message))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class JSONParseError(A2AError):
    default_message = "Invalid JSON payload"


class InvalidRequestError(A2AError):
    default_message = "Request payload validation error"


class MethodNotFoundError(A2AError):
    default_message = "Method not found"


class InvalidParamsError(A2AError):
    default_message = "Invalid parameters"


class InternalError(A2AError):
    default_message = "Internal error"


class UnavailableError(A2AError):
    """A service the agent depends on (its task store) cannot be reached for now: nothing
    was done, the same request may be retried (HTTP 503, gRPC UNAVAILABLE)."""

    default_message = "Service unavailable: try again shortly"


class TaskNotFoundError(A2AError):
    default_message = "Task not found"


class TaskNotCancelableError(A2AError):
    default_message = "Task cannot be canceled"


class PushNotificationNotSupportedError(A2AError):
    default_message = "Push Notification is not supported"


class UnsupportedOperationError(A2AError):
    default_message = "This operation is not supported"


class ContentTypeNotSupportedError(A2AError):
    default_message = "Incompatible content types"


class InvalidAgentResponseError(A2AError):
    default_message = "Invalid agent response"


class ExtendedAgentCardNotConfiguredError(A2AError):
    default_message = "Extended agent card is not configured"


class ExtensionSupportRequiredError(A2AError):
    default_message = "A required extension was not requested"


class VersionNotSupportedError(A2AError):
    default_message = "Protocol version not supported"


class TaskGenerationMismatchError(A2AError):
    """A follow-up's `ifGenerationMatch` is not the task's current generation (A2A 1.1
    draft). The ErrorInfo metadata names `taskId`, `expectedGeneration` and
    `currentGeneration`."""

    default_message = "Task generation mismatch"


class UnauthenticatedError(A2AError):
    """The request carries no credentials the agent accepts. `challenges` are the
    `WWW-Authenticate` challenges of the schemes that would be accepted (RFC 9110 §11.6.1)."""

    default_message = "Authentication required"

    def __init__(
        self,
        message: str | None = None,
        *,
        challenges: tuple[str, ...] = (),
        metadata: Mapping[str, str] | None = None,
        field_violations: tuple[FieldViolation, ...] = (),
        data: JSONValue = None,
    ) -> None:
        super().__init__(message, metadata=metadata, field_violations=field_violations, data=data)
        self.challenges = challenges


class PermissionDeniedError(A2AError):
    """The caller is authenticated but may not do this (a skill's scopes, the extended card).
    Never used for another caller's task: that one is TaskNotFoundError (DESIGN 8)."""

    default_message = "Permission denied"


class RateLimitedError(A2AError):
    """The caller has used up its rate limit, or has as many streams or running tasks open
    as it may (HTTP 429, gRPC RESOURCE_EXHAUSTED; R-OPS-14, R-OPS-15). `retry_after`: the
    whole seconds after which the same request may succeed; `limit` and `reset` (Unix time,
    seconds) describe the exhausted rate limit, when one is. The ErrorInfo metadata carries
    `retryAfterSeconds`, so a client rebuilds `retry_after` from any binding's error."""

    default_message = "Rate limit exceeded: try again later"

    def __init__(
        self,
        message: str | None = None,
        *,
        retry_after: int | None = None,
        limit: int | None = None,
        reset: int | None = None,
        metadata: Mapping[str, str] | None = None,
        field_violations: tuple[FieldViolation, ...] = (),
        data: JSONValue = None,
    ) -> None:
        given = dict(metadata or {})
        if retry_after is not None:
            given.setdefault("retryAfterSeconds", str(retry_after))
        elif given.get("retryAfterSeconds", "").isdigit():
            retry_after = int(given["retryAfterSeconds"])
        super().__init__(message, metadata=given, field_violations=field_violations, data=data)
        self.retry_after = retry_after
        self.limit = limit
        self.reset = reset


ALL_ERRORS: tuple[type[A2AError], ...] = (
    JSONParseError,
    InvalidRequestError,
    MethodNotFoundError,
    InvalidParamsError,
    InternalError,
    TaskNotFoundError,
    TaskNotCancelableError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    ContentTypeNotSupportedError,
    InvalidAgentResponseError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    VersionNotSupportedError,
    TaskGenerationMismatchError,
    UnauthenticatedError,
    PermissionDeniedError,
    UnavailableError,
    RateLimitedError,
)
"""Every concrete error class; the error table must cover each one."""


def invalid_field(field: str, description: str) -> InvalidParamsError:
    """An InvalidParamsError naming one field."""
    return InvalidParamsError(
        f"{field}: {description}" if field else description,
        field_violations=(FieldViolation(field=field, description=description),),
    )
