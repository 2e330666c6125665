"""Checks of the unary operations on one interface: reachability, SendMessage's shape,
GetTask's errors and history, cancel of a terminal task, ListTasks paging and version
negotiation (REFERENCE R-SEND, R-TASK, R-CTX, R-VER, R-ERR)."""

from __future__ import annotations

import uuid

from parley.conformance.context import InterfaceContext, NoTaskError, describe
from parley.conformance.results import CheckFailedError, CheckSkippedError, Level, Registry
from parley.model import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    SendMessageRequest,
    Task,
    TaskState,
)
from parley.protocol import errors as e
from parley.protocol.negotiation import DEFAULT_VERSION
from parley.protocol.operations import OPERATIONS, Operation

checks = Registry()

UNSUPPORTED_VERSION = "9.9"


def _unknown_id() -> str:
    return f"parley-check-missing-{uuid.uuid4().hex}"


@checks.interface(
    "interface.reachable", "R-CARD-4", Level.MUST, "the interface answers in its binding"
)
async def reachable(context: InterfaceContext) -> str:
    answer = await context.call(Operation.GET_TASK, GetTaskRequest(id=_unknown_id()))
    if not answer.is_json:
        raise CheckFailedError(f"not a JSON answer: {describe(answer)}")
    if answer.result is None and answer.error is None:
        raise CheckFailedError(f"neither a result nor an error: {describe(answer)}")
    if answer.grpc_code:
        return f"gRPC {answer.grpc_code}"
    return f"HTTP {answer.status} {answer.content_type}"


@checks.interface("send.shape", "R-SEND-1", Level.MUST, "SendMessage answers a Task or a Message")
async def send_shape(context: InterfaceContext) -> str:
    _, result = await context.send()
    if isinstance(result, Message):
        if result.role.name != "AGENT" or not result.parts:
            raise CheckFailedError("the Message is not the agent's or has no parts")
        return "a Message"
    if not isinstance(result, Task):
        raise CheckFailedError(f"neither a Task nor a Message: {type(result).__name__}")
    if not result.id or not result.context_id:
        raise CheckFailedError("the Task lacks its id or contextId (R-CTX-9, R-CTX-1)")
    if result.status.state is TaskState.UNSPECIFIED:
        raise CheckFailedError("the Task's state is unspecified")
    return f"a Task, {result.status.state.name}"


@checks.interface(
    "get.not-found", "R-CTX-11", Level.MUST, "GetTask of an unknown id is TaskNotFoundError"
)
async def get_not_found(context: InterfaceContext) -> str:
    answer = await context.call(Operation.GET_TASK, GetTaskRequest(id=_unknown_id()))
    return context.expect_error(answer, e.TaskNotFoundError)


@checks.interface("get.history-length", "R-TASK-2", Level.MUST, "GetTask honours historyLength")
async def get_history_length(context: InterfaceContext) -> str:
    task = await _task(context)
    full = context.decoded(
        Operation.GET_TASK, await context.call(Operation.GET_TASK, GetTaskRequest(id=task.id))
    )
    one = context.decoded(
        Operation.GET_TASK,
        await context.call(Operation.GET_TASK, GetTaskRequest(id=task.id, history_length=1)),
    )
    if len(one.history) > 1:
        raise CheckFailedError(f"historyLength 1 gave {len(one.history)} messages")
    if len(full.history) < 2:
        return f"at most 1 message (the task holds {len(full.history)}: the limit is not exercised)"
    return f"1 of {len(full.history)} messages"


@checks.interface(
    "send.history-length", "R-SEND-5", Level.MUST, "SendMessage honours historyLength"
)
async def send_history_length(context: InterfaceContext) -> str:
    answer = await context.call(Operation.SEND_MESSAGE, context.send_request(history_length=1))
    result = context.decoded(Operation.SEND_MESSAGE, answer)
    if not isinstance(result, Task):
        raise CheckSkippedError("the agent answered the checker's message with a Message")
    if len(result.history) > 1:
        raise CheckFailedError(f"historyLength 1 gave {len(result.history)} messages")
    return f"{len(result.history)} message (of at least the checker's one)"


@checks.interface(
    "cancel.terminal",
    "R-TASK-10",
    Level.MUST,
    "cancel of a terminal task is TaskNotCancelableError",
)
async def cancel_terminal(context: InterfaceContext) -> str:
    task = await _terminal_task(context)
    answer = await context.call(Operation.CANCEL_TASK, CancelTaskRequest(id=task.id))
    return context.expect_error(answer, e.TaskNotCancelableError)


@checks.interface(
    "list.paging", "R-TASK-4", Level.MUST, "ListTasks pages with pageSize and nextPageToken"
)
async def list_paging(context: InterfaceContext) -> str:
    if context.subject.version not in OPERATIONS[Operation.LIST_TASKS].bindings:
        raise CheckSkippedError(f"no ListTasks in {context.subject.version.value}")
    for _ in range(2):
        await _task(context)
    answer = await context.call(Operation.LIST_TASKS, ListTasksRequest(page_size=1))
    raw = answer.result  # gRPC: a message, whose nextPageToken is always there
    if not answer.grpc_code and (not isinstance(raw, dict) or "nextPageToken" not in raw):
        raise CheckFailedError(f"the page lacks nextPageToken (R-TASK-12): {describe(answer)}")
    page = context.decoded(Operation.LIST_TASKS, answer)
    if len(page.tasks) != 1:
        raise CheckFailedError(f"pageSize 1 gave {len(page.tasks)} tasks")
    if not page.next_page_token:
        raise CheckFailedError("two tasks exist but the first page of one has no nextPageToken")
    following = context.decoded(
        Operation.LIST_TASKS,
        await context.call(
            Operation.LIST_TASKS, ListTasksRequest(page_size=1, page_token=page.next_page_token)
        ),
    )
    if [t.id for t in following.tasks] == [t.id for t in page.tasks]:
        raise CheckFailedError("the next page repeats the first")
    return "two pages of one task each"


@checks.interface(
    "version.unsupported", "R-VER-5", Level.MUST, "an unsupported A2A-Version is refused"
)
async def version_unsupported(context: InterfaceContext) -> str:
    if context.subject.version is DEFAULT_VERSION:
        raise CheckSkippedError(f"{DEFAULT_VERSION.value} requests carry no A2A-Version")
    answer = await context.call(
        Operation.GET_TASK, GetTaskRequest(id=_unknown_id()), version_header=UNSUPPORTED_VERSION
    )
    return f"A2A-Version {UNSUPPORTED_VERSION}: " + context.expect_error(
        answer, e.VersionNotSupportedError
    )


@checks.interface(
    "send.terminal",
    "R-SEND-8",
    Level.MUST,
    "a message to a terminal task is UnsupportedOperationError",
)
async def send_terminal(context: InterfaceContext) -> str:
    task = await _terminal_task(context)
    request = SendMessageRequest(message=context.message(task=task))
    answer = await context.call(Operation.SEND_MESSAGE, request)
    return context.expect_error(answer, e.UnsupportedOperationError)


async def _terminal_task(context: InterfaceContext) -> Task:
    try:
        return await context.terminal_task()
    except NoTaskError as exc:
        raise CheckSkippedError(str(exc)) from exc


async def _task(context: InterfaceContext) -> Task:
    try:
        return await context.new_task()
    except NoTaskError as exc:
        raise CheckSkippedError(str(exc)) from exc
