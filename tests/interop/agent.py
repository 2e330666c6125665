"""The agent the interop tests talk to, and `Probe`: thread-safe handles on it.

The agent runs on the live server's event loop (another thread), so the tests steer it
with `threading.Event`s ("gates") keyed by the message text, and read what it did
through the probe. Skills are chosen by the message metadata key `skill`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

from parley.model import TextPart
from parley.server.agent import Agent
from parley.server.task_context import TaskContext

STREAM_CHUNKS = ("alpha ", "beta ", "gamma")
QUESTION = "What is your name?"


class Probe:
    """Gates the tests open, and what the agent reports back (all keyed by text)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gates: dict[str, threading.Event] = {}
        self._started: dict[str, threading.Event] = {}
        self.cancelled: set[str] = set()
        """Keys whose function saw CancelledError (the cancel really stopped it)."""
        self.ticks: dict[str, int] = {}
        """Loop iterations of the wait-until-cancelled skill, per key."""

    def gate(self, key: str) -> threading.Event:
        """Opened by the test to let a waiting skill continue."""
        with self._lock:
            return self._gates.setdefault(key, threading.Event())

    def started(self, key: str) -> threading.Event:
        """Set by a skill once it is running (and has reported WORKING)."""
        with self._lock:
            return self._started.setdefault(key, threading.Event())


async def wait_for(gate: threading.Event) -> None:
    """Wait for a thread-safe event without blocking the server's loop."""
    while not gate.is_set():
        await asyncio.sleep(0.005)


def build_agent(probe: Probe) -> Agent:
    agent = Agent("Interop", description="Skills for the official SDK client tests.")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        """Answer with the message's text (blocking send → COMPLETED)."""
        return task.text

    @agent.skill()
    async def slow(task: TaskContext) -> str:
        """Finish only when the test opens the gate (non-blocking send)."""
        probe.started(task.text).set()
        await wait_for(probe.gate(task.text))
        return f"done: {task.text}"

    @agent.skill()
    async def chunks(task: TaskContext) -> AsyncIterator[str]:
        """Stream one artifact in several chunks."""
        for chunk in STREAM_CHUNKS:
            yield chunk

    @agent.skill()
    async def until_cancelled(task: TaskContext) -> None:
        """Report WORKING, then tick until cancelled."""
        key = task.text
        await task.update("waiting to be cancelled")
        probe.started(key).set()
        try:
            while True:
                probe.ticks[key] = probe.ticks.get(key, 0) + 1
                await asyncio.sleep(0.005)
        except asyncio.CancelledError:
            probe.cancelled.add(key)
            raise

    @agent.skill()
    async def background(task: TaskContext) -> None:
        """Report WORKING, wait for the gate, then emit an artifact and complete."""
        key = task.text
        await task.update("started")
        probe.started(key).set()
        await wait_for(probe.gate(key))
        await task.artifact(f"result: {key}", name="result", last_chunk=True)

    @agent.skill()
    async def greet(task: TaskContext) -> str:
        """Ask for a name (INPUT_REQUIRED), then greet it."""
        reply = await task.ask(QUESTION)
        name = "".join(p.text for p in reply.parts if isinstance(p, TextPart))
        return f"Hello, {name}!"

    return agent
