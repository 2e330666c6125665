"""The dispatch table: every operation reaches its handler method, typed, and the table
agrees with the operations table (mypy checks each entry against `RequestHandler`)."""

from __future__ import annotations

import asyncio

import pytest

from parley.model import CancelTaskRequest, GetTaskRequest, Task, TaskState, TaskStatus
from parley.protocol.operations import OPERATIONS, Operation
from parley.server.context import CallContext
from parley.server.handler import STREAMING, UNARY, RequestHandler, _call


def test_every_operation_has_one_handler_call_of_its_kind() -> None:
    assert set(UNARY) | set(STREAMING) == set(Operation)
    assert not set(UNARY) & set(STREAMING)
    for operation, spec in OPERATIONS.items():
        table = STREAMING if spec.streaming else UNARY
        assert table[operation].spec is spec


def test_a_request_type_the_operations_table_does_not_name_is_refused() -> None:
    def cancel(handler: RequestHandler, ctx: CallContext, request: CancelTaskRequest) -> object:
        return handler.cancel_task(ctx, request)

    with pytest.raises(TypeError, match="GetTask takes GetTaskRequest"):
        _call(Operation.GET_TASK, CancelTaskRequest, cancel)


class _Tasks:
    """Just enough of a handler to see which method a call reaches."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        self.asked.append(request.id)
        return Task(id=request.id, context_id="c", status=TaskStatus(state=TaskState.WORKING))


def test_a_unary_call_reaches_the_handler_method_of_its_operation() -> None:
    tasks = _Tasks()
    handler: RequestHandler = tasks  # type: ignore[assignment]  # only get_task is called

    async def get() -> Task:
        task: Task = await UNARY[Operation.GET_TASK].call(handler, CallContext(), request)
        return task

    request = GetTaskRequest(id="t1")
    task = asyncio.run(get())
    assert (task.id, tasks.asked) == ("t1", ["t1"])
