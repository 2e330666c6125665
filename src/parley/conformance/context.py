"""What a check is given: the card (as sent and as decoded), and for an interface check
the interface under check with the helpers most checks share — sending a message of the
checker's own, and judging an error answer against the error table."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, cast

import httpx

from parley.client.card import GRPC_BINDING, JSONRPC_BINDING
from parley.conformance.exchange import Answer, Exchange, StreamAnswer
from parley.conformance.results import CheckFailedError, CheckSkippedError
from parley.model import (
    AgentCard,
    CancelTaskRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TextPart,
)
from parley.protocol import errors as e
from parley.protocol import lifecycle
from parley.protocol.negotiation import DEFAULT_VERSION
from parley.protocol.operations import Operation
from parley.wire.cards import LEGACY, PRIMARY
from parley.wire.errors import DEFAULT_WIRE_COMPAT, ERROR_INFO_TYPE, ERROR_TABLE, V1_0_0_CELLS
from parley.wire.json_bytes import JSON

TEXT = "parley check: a conformance probe"


@dataclass(frozen=True, slots=True)
class CardContext:
    http: httpx.AsyncClient
    url: str
    """Where the card was read."""
    document: JSON
    card: AgentCard | None
    """The card decoded by Parley's codecs (None when it does not decode)."""
    decode_error: str = ""


@dataclass(frozen=True, slots=True)
class InterfaceContext:
    subject: Exchange
    card: AgentCard
    headers: dict[str, str]
    """The credentials given on the command line (sent with every call but the auth checks')."""

    def message(self, text: str = TEXT, task: Task | None = None) -> Message:
        """The checker's message; a follow-up of `task` when given."""
        return Message(
            message_id=f"parley-check-{uuid.uuid4().hex}",
            role=Role.USER,
            parts=(TextPart(text=text),),
            metadata={"parleyCheck": True},
            task_id=task.id if task else "",
            context_id=task.context_id if task else "",
        )

    def send_request(self, history_length: int | None = None) -> SendMessageRequest:
        configuration = (
            SendMessageConfiguration(history_length=history_length)
            if history_length is not None
            else None
        )
        return SendMessageRequest(message=self.message(), configuration=configuration)

    async def call(self, operation: Operation, request: Any, **options: Any) -> Answer:
        options["headers"] = self.headers | options.get("headers", {})
        return await self.subject.call(operation, request, **options)

    async def stream(self, operation: Operation, request: Any) -> StreamAnswer:
        return await self.subject.stream(operation, request, headers=self.headers)

    async def send(self) -> tuple[Answer, Task | Message]:
        """Send the checker's message; the answer and what it decodes to (CheckFailedError if it
        is an error or does not decode)."""
        answer = await self.call(Operation.SEND_MESSAGE, self.send_request())
        return answer, self.decoded(Operation.SEND_MESSAGE, answer)

    async def terminal_task(self) -> Task:
        """A task of the checker's own in a terminal state: cancelled when the agent leaves
        it live (CheckSkippedError when it still is not terminal, NoTaskError for a Message)."""
        task = await self.new_task()
        if lifecycle.is_terminal(task.status.state):
            return task
        answer = await self.call(Operation.CANCEL_TASK, CancelTaskRequest(id=task.id))
        canceled = self.decoded(Operation.CANCEL_TASK, answer)
        if not lifecycle.is_terminal(canceled.status.state):
            raise CheckSkippedError(
                f"the task is still {canceled.status.state.name} after a cancel"
            )
        return cast("Task", canceled)

    async def new_task(self) -> Task:
        """A task of the checker's own; NoTaskError when the agent answers with a Message."""
        _, result = await self.send()
        if not isinstance(result, Task):
            raise NoTaskError("the agent answered the checker's message with a Message, not a Task")
        return result

    def decoded(self, operation: Operation, answer: Answer) -> Any:
        if answer.result is None:
            raise CheckFailedError(f"{operation.value} answered {describe(answer)}")
        try:
            return self.subject.codec.decode_response(operation, answer.result)
        except Exception as exc:  # any decoding failure is the finding
            raise CheckFailedError(f"{operation.value} result does not decode: {exc}") from exc

    def expect_error(self, answer: Answer, error: type[e.A2AError]) -> str:
        """Judge an error answer against the v1.0.1 table (a v1.0.0 answer passes, noted)."""
        return expected_error(self.subject, answer, error)


class NoTaskError(Exception):
    """The agent answers the checker's message with a Message: task checks are skipped."""


def describe(answer: Answer) -> str:
    if answer.grpc_code:
        what = _short(answer.error) if answer.error is not None else "a result"
        return f"gRPC {answer.grpc_code}: {what}"
    if answer.error is not None:
        return f"HTTP {answer.status} with error {_short(answer.error)}"
    content_type = answer.content_type or "without content type"
    return f"HTTP {answer.status} {content_type}: {_short(answer.text)}"


def _short(value: object, limit: int = 160) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def expected_error(subject: Exchange, answer: Answer, error: type[e.A2AError]) -> str:
    row = ERROR_TABLE[error]
    name = error.__name__
    if subject.binding == JSONRPC_BINDING:
        code = answer.error.get("code") if isinstance(answer.error, dict) else None
        if code != row.jsonrpc_code:
            raise CheckFailedError(
                f"expected {name} (code {row.jsonrpc_code}), got {describe(answer)}"
            )
        return f"{name}: code {code}"
    if subject.binding == GRPC_BINDING:
        return _grpc_error(subject, answer, error)
    if subject.version is DEFAULT_VERSION:
        return _legacy_rest_error(answer, error)
    reason = _reason(answer.error)
    if reason is None:
        raise CheckFailedError(
            f"expected {name} with an ErrorInfo (R-ERR-24), got {describe(answer)}"
        )
    if reason != row.reason:
        raise CheckFailedError(
            f"expected ErrorInfo reason {row.reason}, got {reason} ({describe(answer)})"
        )
    if answer.status == row.http_status:
        return f"{name}: HTTP {answer.status}, reason {reason} (v{DEFAULT_WIRE_COMPAT} table)"
    old = V1_0_0_CELLS.get(error)
    if old is not None and answer.status == old[0]:
        return f"{name}: HTTP {answer.status}, reason {reason} — the v1.0.0 table's status"
    raise CheckFailedError(f"expected {name} (HTTP {row.http_status}), got {describe(answer)}")


def _grpc_error(subject: Exchange, answer: Answer, error: type[e.A2AError]) -> str:
    """1.0: the v1.0.1 table's status with an ErrorInfo (R-ERR-23; a v1.0.0 status passes,
    noted); 0.3: the 0.3 column (1.0's passes, noted), details optional."""
    row, name, code = ERROR_TABLE[error], error.__name__, answer.grpc_code
    if subject.version is DEFAULT_VERSION:
        if code == row.grpc_status_v03:
            return f"{name}: gRPC {code}"
        if code == row.grpc_status:
            return f"{name}: gRPC {code} — the {PRIMARY.value} table's status"
        raise CheckFailedError(
            f"expected {name} (gRPC {row.grpc_status_v03}), got {describe(answer)}"
        )
    reason = _reason(answer.error)
    if reason is None:
        raise CheckFailedError(
            f"expected {name} with an ErrorInfo (R-ERR-23), got {describe(answer)}"
        )
    if reason != row.reason:
        raise CheckFailedError(
            f"expected ErrorInfo reason {row.reason}, got {reason} ({describe(answer)})"
        )
    if code == row.grpc_status:
        return f"{name}: gRPC {code}, reason {reason} (v{DEFAULT_WIRE_COMPAT} table)"
    old = V1_0_0_CELLS.get(error)
    if old is not None and code == old[1]:
        return f"{name}: gRPC {code}, reason {reason} — the v1.0.0 table's status"
    raise CheckFailedError(f"expected {name} (gRPC {row.grpc_status}), got {describe(answer)}")


def _legacy_rest_error(answer: Answer, error: type[e.A2AError]) -> str:
    """0.3 specified no HTTP+JSON error statuses: the official 0.3 SDK's pass, and so does
    the 1.0 table's (what the SDK's 1.x compatibility layer sends), noted."""
    row, name = ERROR_TABLE[error], error.__name__
    if answer.status == row.http_status_v03:
        return f"{name}: HTTP {answer.status}"
    if answer.status == row.http_status and _reason(answer.error) in (None, row.reason):
        table = f"the {PRIMARY.value} table's status ({LEGACY.value} specifies none)"
        return f"{name}: HTTP {answer.status} — {table}"
    raise CheckFailedError(f"expected {name} (HTTP {row.http_status_v03}), got {describe(answer)}")


def _reason(body: JSON) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and detail.get("@type") == ERROR_INFO_TYPE:
            reason = detail.get("reason")
            return reason if isinstance(reason, str) else None
    return None
