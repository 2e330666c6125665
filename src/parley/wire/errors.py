"""The one error table: every protocol error to its JSON-RPC code, HTTP status, gRPC
status and ErrorInfo reason, for both versions; and the error bodies of each binding.

1.0 statuses follow the v1.0.1 table (REFERENCE §6.2, D17); `WIRE_COMPAT` also holds the
v1.0.0 table, which differs in six cells, for a server told to emit it. 0.3 never
specified REST or gRPC errors: the 0.3 columns follow the official SDK 0.3.x (REFERENCE
§6.5). The JSON-RPC codes are the same in both versions and both tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from parley.protocol import errors as e
from parley.protocol.negotiation import Version

DOMAIN = "a2a-protocol.org"
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """How one error class appears on every binding."""

    jsonrpc_code: int
    http_status: int
    grpc_status: str
    reason: str
    http_status_v03: int
    grpc_status_v03: str


ErrorTable = Mapping[type[e.A2AError], ErrorSpec]
"""Every error class to its row; the functions below take one (default: v1.0.1's)."""

ERROR_TABLE: ErrorTable = {
    # JSON-RPC standard errors. Reasons follow the official SDK where it names them;
    # a malformed body is INVALID_ARGUMENT on REST/gRPC (REFERENCE §6.3).
    e.JSONParseError: ErrorSpec(-32700, 400, "INVALID_ARGUMENT", "JSON_PARSE", 400, "INTERNAL"),
    e.InvalidRequestError: ErrorSpec(
        -32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST", 400, "INVALID_ARGUMENT"
    ),
    e.MethodNotFoundError: ErrorSpec(
        -32601, 404, "UNIMPLEMENTED", "METHOD_NOT_FOUND", 404, "NOT_FOUND"
    ),
    e.InvalidParamsError: ErrorSpec(
        -32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS", 422, "INVALID_ARGUMENT"
    ),
    e.InternalError: ErrorSpec(-32603, 500, "INTERNAL", "INTERNAL_ERROR", 500, "INTERNAL"),
    # A2A errors (REFERENCE §6.2, v1.0.1 columns).
    e.TaskNotFoundError: ErrorSpec(-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND", 404, "NOT_FOUND"),
    e.TaskNotCancelableError: ErrorSpec(
        -32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", 409, "UNIMPLEMENTED"
    ),
    e.PushNotificationNotSupportedError: ErrorSpec(
        -32003,
        400,
        "FAILED_PRECONDITION",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        501,
        "UNIMPLEMENTED",
    ),
    e.UnsupportedOperationError: ErrorSpec(
        -32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", 501, "UNIMPLEMENTED"
    ),
    e.ContentTypeNotSupportedError: ErrorSpec(
        -32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", 415, "UNIMPLEMENTED"
    ),
    e.InvalidAgentResponseError: ErrorSpec(
        -32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE", 502, "INTERNAL"
    ),
    e.ExtendedAgentCardNotConfiguredError: ErrorSpec(
        -32007,
        400,
        "FAILED_PRECONDITION",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        404,
        "UNKNOWN",
    ),
    # New in 1.0; 0.3 has no name for them, so 0.3 peers get the generic 400 / UNKNOWN.
    e.ExtensionSupportRequiredError: ErrorSpec(
        -32008, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED", 400, "UNKNOWN"
    ),
    e.VersionNotSupportedError: ErrorSpec(
        -32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", 400, "UNKNOWN"
    ),
    # New in the 1.1 draft (its table); raised only for 1.1 requests, which alone carry
    # `ifGenerationMatch`. Both 1.0 tables list it as the draft does.
    e.TaskGenerationMismatchError: ErrorSpec(
        -32010, 409, "ABORTED", "TASK_GENERATION_MISMATCH", 409, "ABORTED"
    ),
    # Credentials (REFERENCE §6.3): the spec leaves JSON-RPC a "custom error"; the codes
    # and reasons are the official Go SDK's, and both HTTP bindings answer 401 / 403.
    e.UnauthenticatedError: ErrorSpec(
        -31401, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", 401, "UNAUTHENTICATED"
    ),
    e.PermissionDeniedError: ErrorSpec(
        -31403, 403, "PERMISSION_DENIED", "UNAUTHORIZED", 403, "PERMISSION_DENIED"
    ),
    # The task store unreachable for now (not an A2A error): retryable, nothing done. JSON-RPC
    # -32000, the first implementation-defined server error, which A2A's codes leave free.
    e.UnavailableError: ErrorSpec(-32000, 503, "UNAVAILABLE", "UNAVAILABLE", 503, "UNAVAILABLE"),
    # A rate limit or a cap (R-OPS-15: "proper errors"; the spec names none): HTTP 429 (RFC
    # 6585), gRPC RESOURCE_EXHAUSTED, JSON-RPC -31429 beside the credential errors' codes.
    e.RateLimitedError: ErrorSpec(
        -31429, 429, "RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED", 429, "RESOURCE_EXHAUSTED"
    ),
}

# v1.0.0's 1.0 HTTP and gRPC statuses where they differ from v1.0.1's (REFERENCE §6.2).
V1_0_0_CELLS: Mapping[type[e.A2AError], tuple[int, str]] = {
    e.TaskNotCancelableError: (409, "FAILED_PRECONDITION"),
    e.PushNotificationNotSupportedError: (400, "UNIMPLEMENTED"),
    e.UnsupportedOperationError: (400, "UNIMPLEMENTED"),
    e.ContentTypeNotSupportedError: (415, "INVALID_ARGUMENT"),
    e.InvalidAgentResponseError: (502, "INTERNAL"),
    e.VersionNotSupportedError: (400, "UNIMPLEMENTED"),
}

DEFAULT_WIRE_COMPAT = "1.0.1"
WIRE_COMPAT: Mapping[str, ErrorTable] = {
    DEFAULT_WIRE_COMPAT: ERROR_TABLE,
    "1.0.0": {
        **ERROR_TABLE,
        **{
            cls: replace(ERROR_TABLE[cls], http_status=http, grpc_status=grpc)
            for cls, (http, grpc) in V1_0_0_CELLS.items()
        },
    },
}
"""The error tables a server can emit for 1.0 requests, by the spec release that has them
(0.3 columns and JSON-RPC codes are the same in each)."""


def error_table(wire_compat: str) -> ErrorTable:
    """The table of a spec release named in `WIRE_COMPAT` (ValueError for another)."""
    table = WIRE_COMPAT.get(wire_compat)
    if table is None:
        raise ValueError(f"wire_compat must be one of {', '.join(WIRE_COMPAT)}")
    return table


BY_CODE: Mapping[int, type[e.A2AError]] = {s.jsonrpc_code: c for c, s in ERROR_TABLE.items()}
BY_REASON: Mapping[str, type[e.A2AError]] = {s.reason: c for c, s in ERROR_TABLE.items()}
# 0.3 REST errors carry only a status: the first class listed for a status wins.
BY_HTTP_STATUS_V03: Mapping[int, type[e.A2AError]] = {
    404: e.TaskNotFoundError,
    409: e.TaskNotCancelableError,
    415: e.ContentTypeNotSupportedError,
    422: e.InvalidParamsError,
    501: e.UnsupportedOperationError,
    502: e.InvalidAgentResponseError,
    400: e.InvalidRequestError,
    401: e.UnauthenticatedError,
    403: e.PermissionDeniedError,
    503: e.UnavailableError,
    429: e.RateLimitedError,
}


def spec_of(error: e.A2AError, table: ErrorTable = ERROR_TABLE) -> ErrorSpec:
    """The table row of an error (subclasses of a listed class share its row)."""
    for cls in type(error).__mro__:
        row = table.get(cls)
        if row is not None:
            return row
    return table[e.InternalError]


def details(error: e.A2AError) -> list[dict[str, Any]]:
    """google.rpc details: an ErrorInfo, then a BadRequest when fields are named."""
    info: dict[str, Any] = {"@type": ERROR_INFO_TYPE, "reason": spec_of(error).reason}
    info["domain"] = DOMAIN
    if error.metadata:
        info["metadata"] = dict(error.metadata)
    out = [info]
    if error.field_violations:
        violations = [
            {"field": v.field, "description": v.description} for v in error.field_violations
        ]
        out.append({"@type": BAD_REQUEST_TYPE, "fieldViolations": violations})
    return out


def jsonrpc_error(error: e.A2AError, version: Version) -> dict[str, Any]:
    """The `error` member of a JSON-RPC response.

    1.0: `data` is the typed details array (R-JSONRPC-4). 0.3: `data` is free-form:
    the error's own 0.3 data, else its metadata and field violations, else omitted.
    """
    body: dict[str, Any] = {"code": spec_of(error).jsonrpc_code, "message": error.message}
    if version is not Version.V0_3:
        body["data"] = details(error)
    elif error.data is not None:
        body["data"] = error.data
    elif error.metadata or error.field_violations:
        data: dict[str, Any] = dict(error.metadata)
        if error.field_violations:
            data["fieldViolations"] = details(error)[1]["fieldViolations"]
        body["data"] = data
    return body


def rest_error(
    error: e.A2AError,
    version: Version,
    http_status: int | None = None,
    table: ErrorTable = ERROR_TABLE,
) -> tuple[int, dict[str, Any]]:
    """HTTP status and body of a REST error.

    1.0: google.rpc.Status in AIP-193 form (REFERENCE §6.5, not RFC 9457: D3).
    0.3: the official SDK 0.3.x's status codes, and a body both official 0.3 REST
    clients decode into the error's class: the JSON-RPC error object (`code`, `message`,
    `data`; @a2a-js/sdk reads `code`) with the class name as `type` (a2a-sdk reads it).
    `http_status` overrides the table's (405 for a known path with another verb).
    """
    row = spec_of(error, table)
    if version is Version.V0_3:
        body = {**jsonrpc_error(error, version), "type": _listed_class(error).__name__}
        return http_status or row.http_status_v03, body
    code = http_status or row.http_status
    status = {
        "code": code,
        "status": row.grpc_status,
        "message": error.message,
        "details": details(error),
    }
    return code, {"error": status}


def grpc_status(
    error: e.A2AError, version: Version, table: ErrorTable = ERROR_TABLE
) -> tuple[str, str, list[dict[str, Any]]]:
    """gRPC status name, message and details (as ProtoJSON dicts) of an error.

    0.3 (official SDK 0.3.x): the message is prefixed with the error class name.
    """
    row = spec_of(error, table)
    if version is Version.V0_3:
        return row.grpc_status_v03, f"{type(error).__name__}: {error.message}", details(error)
    return row.grpc_status, error.message, details(error)


def from_details(
    cls: type[e.A2AError], message: str, items: object, data: object = None
) -> e.A2AError:
    """Rebuild an error from google.rpc details (ErrorInfo reason wins over `cls`)."""
    metadata: dict[str, str] = {}
    violations: list[e.FieldViolation] = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        kind = item.get("@type")
        if kind == ERROR_INFO_TYPE:
            cls = BY_REASON.get(str(item.get("reason")), cls)
            raw = item.get("metadata")
            if isinstance(raw, dict):
                metadata = {str(k): str(v) for k, v in raw.items()}
        elif kind == BAD_REQUEST_TYPE:
            violations.extend(_violations(item.get("fieldViolations")))
    return cls(
        message or None,
        metadata=metadata,
        field_violations=tuple(violations),
        data=data,  # type: ignore[arg-type]
    )


def _violations(raw: object) -> list[e.FieldViolation]:
    return [
        e.FieldViolation(field=str(v.get("field", "")), description=str(v.get("description", "")))
        for v in (raw if isinstance(raw, list) else ())
        if isinstance(v, dict)
    ]


def from_jsonrpc_error(raw: object) -> e.A2AError:
    """A JSON-RPC `error` member (either version) back into its error class."""
    if not isinstance(raw, dict):
        return e.InternalError("Malformed JSON-RPC error", data=raw)  # type: ignore[arg-type]
    code, message, data = raw.get("code"), raw.get("message"), raw.get("data")
    cls = BY_CODE.get(code, e.InternalError) if type(code) is int else e.InternalError
    text = message if isinstance(message, str) else ""
    if isinstance(data, list):  # 1.0 typed details
        return from_details(cls, text, data)
    return cls(text or None, data=data)


def _listed_class(error: e.A2AError) -> type[e.A2AError]:
    """The class of the error's table row (its own, or the listed class it derives from)."""
    return next((c for c in type(error).__mro__ if c in ERROR_TABLE), e.InternalError)


def from_rest_error(status: int, body: object) -> e.A2AError:
    """A REST error response back into its class: a 1.0 Status body; a 0.3 body by its
    JSON-RPC `code`, or by its status alone (`{"message": ...}`, older servers)."""
    if isinstance(body, dict) and type(body.get("code")) is int and body["code"] in BY_CODE:
        return from_jsonrpc_error(body)
    cls = BY_HTTP_STATUS_V03.get(status, e.InternalError)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        inner = body["error"]
        message = inner.get("message")
        return from_details(cls, message if isinstance(message, str) else "", inner.get("details"))
    message = body.get("message") if isinstance(body, dict) else None
    return cls(message if isinstance(message, str) else None)
