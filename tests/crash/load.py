"""The crash test's clients and ledger: JSON-RPC 1.0 senders, streamers and askers that
record what the server acknowledged (a response or a streamed event), until it dies.

Acknowledged means durable (DESIGN 4): everything in the ledger must be found after a
restart. The clients speak raw JSON-RPC over httpx, so the test depends on no client code.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from parley.wire import json_bytes
from parley.wire.sse import SSEParser

HEADERS = {"A2A-Version": "1.0"}
ACTIVE = {"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"}
TERMINAL = {
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
}
_ids = itertools.count()


@dataclass
class Seen:
    """What the server acknowledged about one task."""

    kind: str
    """"quick", "stream" or "ask"."""
    user_ids: list[str] = field(default_factory=list)
    state: str = ""
    chunks: int = 0
    in_flight: str = ""
    """A follow-up sent without an answer yet (the kill may have cut it)."""
    answered: bool = False


@dataclass
class Ledger:
    """Every task the server acknowledged, across all its lives."""

    tasks: dict[str, Seen] = field(default_factory=dict)
    acknowledged_events: int = 0

    def waiting(self) -> list[str]:
        """Tasks acknowledged INPUT_REQUIRED and not answered yet."""
        return [
            task_id
            for task_id, seen in self.tasks.items()
            if seen.kind == "ask"
            and seen.state == "TASK_STATE_INPUT_REQUIRED"
            and not seen.answered
        ]


def message(text: str, skill: str, task_id: str = "") -> dict[str, Any]:
    body: dict[str, Any] = {
        "messageId": f"m-{next(_ids)}-{uuid.uuid4().hex[:8]}",
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "metadata": {"skill": skill},
    }
    if task_id:
        body["taskId"] = task_id
    return body


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}


async def call(client: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    """One JSON-RPC call; its `result`, or AssertionError with the error."""
    response = await client.post("/", json=rpc(method, params), headers=HEADERS)
    answer = response.json()
    assert "error" not in answer, f"{method}: {answer['error']}"
    return answer["result"]


async def sender(client: httpx.AsyncClient, ledger: Ledger) -> None:
    """Blocking sends to the quick skill, one after another."""
    while True:
        sent = message(f"q{next(_ids)}", "quick")
        result = await call(client, "SendMessage", {"message": sent})
        task = result["task"]
        seen = Seen("quick", user_ids=[sent["messageId"]], state=task["status"]["state"])
        ledger.tasks[task["id"]] = seen
        ledger.acknowledged_events += 1


async def streamer(client: httpx.AsyncClient, ledger: Ledger) -> None:
    """Streaming sends to the stream skill; every event is recorded as it arrives."""
    while True:
        sent = message("go", "stream")
        body = rpc("SendStreamingMessage", {"message": sent})
        async with client.stream("POST", "/", json=body, headers=HEADERS) as response:
            parser = SSEParser()
            seen: Seen | None = None
            async for chunk in response.aiter_bytes():
                for event in parser.feed(chunk):
                    seen = _record(
                        ledger, seen, sent, json_bytes.loads(event.data.encode())["result"]
                    )


def _record(ledger: Ledger, seen: Seen | None, sent: dict[str, Any], result: Any) -> Seen:
    if "task" in result:
        task = result["task"]
        seen = ledger.tasks.setdefault(task["id"], Seen("stream", user_ids=[sent["messageId"]]))
        seen.state = task["status"]["state"]
    elif "statusUpdate" in result:
        assert seen is not None, "a status update before the task"
        seen.state = result["statusUpdate"]["status"]["state"]
    else:
        assert seen is not None, "an artifact update before the task"
        assert "artifactUpdate" in result, result
        seen.chunks += 1
    ledger.acknowledged_events += 1
    return seen


async def asker(client: httpx.AsyncClient, ledger: Ledger) -> None:
    """Questions asked and answered: a new one, then the oldest waiting one, in turn.
    Questions asked before a crash are answered after it."""
    while True:
        sent = message("hi", "ask")
        task = (await call(client, "SendMessage", {"message": sent}))["task"]
        ledger.tasks[task["id"]] = Seen("ask", [sent["messageId"]], task["status"]["state"])
        ledger.acknowledged_events += 1
        for task_id in ledger.waiting()[:2]:
            await answer(client, ledger, task_id)


async def answer(client: httpx.AsyncClient, ledger: Ledger, task_id: str) -> None:
    seen = ledger.tasks[task_id]
    reply = message(f"ada{next(_ids)}", "ask", task_id)
    seen.in_flight = reply["messageId"]
    result = (await call(client, "SendMessage", {"message": reply}))["task"]
    seen.user_ids.append(reply["messageId"])
    seen.in_flight = ""
    seen.answered = True
    seen.state = result["status"]["state"]
    ledger.acknowledged_events += 1


async def run_until_killed(url: str, ledger: Ledger, kill: asyncio.Future[None]) -> None:
    """Run every client until the server dies (`kill` done and connections refused)."""
    timeout = httpx.Timeout(30, connect=5)
    async with httpx.AsyncClient(base_url=url, timeout=timeout) as client:
        workers = [sender, sender, sender, streamer, streamer, asker]
        tasks = [asyncio.create_task(work(client, ledger)) for work in workers]
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        # The only way a worker ends is an error: the server's death, after the kill.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await kill
        for task in done:
            error = task.exception()
            assert isinstance(error, httpx.TransportError), f"not a crash: {error!r}"
