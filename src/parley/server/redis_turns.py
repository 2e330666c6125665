"""Follow-ups across replicas (DESIGN 7): a task waiting for input (`task.ask`) waits in
the replica where its agent function is suspended; a follow-up that lands on another
replica is handed to that one, so the function resumes where it paused (`RedisBus` uses
this).

Theory of operation. Before a run's task is committed INPUT_REQUIRED or AUTH_REQUIRED
with the agent's function suspended here, the replica records itself as the task's turn
holder (a key per task, expiring with the bus's idle retention): no client can see the
question before the record is there. A follow-up landing on another replica reads the
key; when another replica holds it, the request (1.0 JSON) and the call's context go to
that replica's channel, and the sender waits for the answer on a list of its own
(BLPOP). The holder takes the record away, begins the follow-up's run as if the request
had come to it, and answers with the task as the message left it (version and snapshot)
or with the error; the sending replica then follows the task on the bus, as any
subscriber does. PUBLISH tells how many listened: none means the holder is gone (its
process died), and the follow-up runs where it landed, starting the agent again, as after
a restart of a single server.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from typing import Any

from parley.model import SendMessageRequest, Task
from parley.protocol.errors import A2AError, InternalError, UnavailableError
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.server.broker import Takes, Turn
from parley.server.context import CallContext, Caller
from parley.server.stores.base import TaskKey
from parley.wire import json_bytes as wire_json
from parley.wire.errors import from_jsonrpc_error, jsonrpc_error
from parley.wire.v1_0.protojson_codec import CODEC

log = logging.getLogger("parley.bus")

_SECRET = re.compile(r"authorization|cookie|key|token|secret|signature", re.IGNORECASE)
"""Headers not carried to the holder: the caller was authenticated where it landed."""
ANSWER_WAIT = 30
"""Seconds a follow-up waits for the replica holding its task to take it."""


class RedisTurns:
    """The turn records of one replica (`replica`: its id) in `client`, under `prefix`."""

    def __init__(self, client: Any, prefix: str, replica: str, *, expiry: int) -> None:
        self.client = client
        self.prefix = prefix
        self.replica = replica
        self.expiry = expiry
        self.channel = f"{prefix}:turn:{replica}"
        """Where follow-ups for the tasks this replica holds arrive."""
        self.takes: Takes | None = None
        self._taking: set[asyncio.Task[None]] = set()

    def _record(self, task: TaskKey) -> str:
        return f"{self.prefix}:turns:" + wire_json.dumps(list(task)).decode()

    async def waiting(self, task: TaskKey) -> None:
        """Follow-ups of `task` should come here (its function is suspended here)."""
        try:
            await self.client.set(self._record(task), self.replica, ex=self.expiry)
        except Exception as exc:  # a follow-up elsewhere then starts the agent again
            log.warning("turns: task %s waits here unrecorded (%s)", task[2], exc)

    async def hand_off(
        self, task: TaskKey, request: SendMessageRequest, ctx: CallContext
    ) -> Turn | None:
        """Have the replica holding `task` take the follow-up: None when it is this one or
        none (the run begins here)."""
        record = self._record(task)
        holder = await self.client.get(record)
        if holder is None or holder.decode() == self.replica:
            return None
        answer = f"{self.prefix}:answer:{uuid.uuid4().hex}"
        payload = {
            "task": list(task),
            "request": CODEC.encode_request(Operation.SEND_MESSAGE, request),
            "context": _context(ctx),
            "answer": answer,
        }
        heard = await self.client.publish(
            f"{self.prefix}:turn:{holder.decode()}", wire_json.dumps(payload)
        )
        if not heard:  # the holder is gone
            await self.client.delete(record)
            return None
        reply = await self.client.blpop([answer], timeout=ANSWER_WAIT)
        if reply is None:
            raise UnavailableError("The replica holding this task did not answer; try again")
        body = wire_json.loads(reply[1])
        if "error" in body:
            raise from_jsonrpc_error(body["error"])
        version, snapshot = body["turn"]
        return version, CODEC.decode(Task, snapshot)

    def heard(self, data: bytes) -> None:
        """A follow-up handed here (from the bus's listener): taken in a task of its own."""
        taking = asyncio.get_running_loop().create_task(self._take(data))
        self._taking.add(taking)
        taking.add_done_callback(self._taking.discard)

    async def _take(self, data: bytes) -> None:
        body = wire_json.loads(data)
        task = TaskKey(body["task"][0], body["task"][1], body["task"][2])
        answer: dict[str, Any]
        try:
            assert self.takes is not None
            await self.client.delete(self._record(task))
            request = CODEC.decode_request(Operation.SEND_MESSAGE, body["request"])
            assert isinstance(request, SendMessageRequest)
            version, snapshot = await self.takes(task, request, _call(body["context"]))
            answer = {"turn": [version, CODEC.encode(snapshot)]}
        except A2AError as exc:
            answer = {"error": jsonrpc_error(exc, Version.V1_0)}
        except Exception:
            log.exception("turns: a follow-up of task %s was not taken", task[2])
            answer = {"error": jsonrpc_error(InternalError(), Version.V1_0)}
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.rpush(body["answer"], wire_json.dumps(answer))
                pipe.expire(body["answer"], ANSWER_WAIT * 2)
                await pipe.execute()
        except Exception as exc:  # the sender's wait runs out: it answers 503
            log.warning("turns: a follow-up's answer was not sent (%s)", exc)

    async def close(self) -> None:
        for taking in list(self._taking):
            taking.cancel()
        await asyncio.gather(*self._taking, return_exceptions=True)


def _context(ctx: CallContext) -> dict[str, Any]:
    caller = ctx.caller
    try:
        claims = wire_json.loads(wire_json.dumps(dict(caller.claims)))
    except Exception:
        claims = {}  # not JSON (e.g. an authenticator's own objects): not carried
    headers = {k: v for k, v in ctx.headers.items() if not _SECRET.search(k)}
    return {
        "caller": [caller.id, sorted(caller.scopes), claims],
        "tenant": ctx.tenant,
        "version": ctx.version.value,
        "extensions": [list(ctx.requested_extensions), list(ctx.activated_extensions)],
        "headers": headers,  # credentials stay where they were checked
        "client": ctx.client,  # where an anonymous caller's runs are counted (caps)
    }


def _call(body: dict[str, Any]) -> CallContext:
    caller_id, scopes, claims = body["caller"]
    requested, activated = body["extensions"]
    return CallContext(
        caller=Caller(id=caller_id, scopes=frozenset(scopes), claims=claims),
        tenant=body["tenant"],
        version=Version(body["version"]),
        requested_extensions=tuple(requested),
        activated_extensions=tuple(activated),
        headers=body["headers"],
        client=body.get("client"),
    )


__all__ = ["RedisTurns"]
