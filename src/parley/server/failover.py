"""What a replica does with a task whose replica died (its execution lease ran out, see
`parley.server.redis_leases`): if it is still active, fail it, as the restart policy
fails a task a stopped process left, through the runner (stored, then published: streams
on every replica end with it); or, for a resumable executor (`Agent(resumable=True)`),
run the agent again on it here."""

from __future__ import annotations

from parley.model import Message, Role, Task, TextPart
from parley.protocol import folding, lifecycle
from parley.server.broker import Broker
from parley.server.context import CallContext
from parley.server.execution import RequestContext
from parley.server.runner import TaskRunner
from parley.server.stores.base import TaskKey

REPLICA_LOST = "The replica running this task stopped"
"""The status message of a task failed because its replica died."""


async def recover(runner: TaskRunner, broker: Broker, key: TaskKey) -> None:
    """`broker.recover` of a service: the task `key`, whose lease this replica won."""
    live = runner.acquire(key)
    try:
        if live.run is not None and not live.run.done():
            await broker.claim(key)  # this replica's own run, renewed late: held again
            return
        async with live.lock:
            stored = await runner.load(live, key.scope)
        if stored is None or stored.task.status.state not in lifecycle.ACTIVE:
            return
        if getattr(runner.executor, "resumable", False):
            await broker.claim(key)  # the rerun holds a lease of its own
            live.settled.clear()
            runner.start_run(live, _again(stored.task))
        else:
            await runner.emit(live, folding.failure(stored.task, REPLICA_LOST, runner.ids()))
    finally:
        runner.release(live)


def _again(task: Task) -> RequestContext:
    """The run again of a task: its last user message, the task as stored, and no caller
    (who sent the message is not stored with the task)."""
    message = next((m for m in reversed(task.history) if m.role is Role.USER), None)
    if message is None:
        message = Message(message_id="", role=Role.USER, parts=(TextPart(text=""),))
    return RequestContext(message, task.id, task.context_id, CallContext(), task)
