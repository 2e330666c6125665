"""A producer that never awaits must not overrun its own stream's buffer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from parley import model as m
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.service import AgentService
from parley.server.task_context import TaskContext

CHUNKS = 2_000  # more than a subscription buffers (1,024)


def test_a_fast_generator_streams_every_chunk() -> None:
    """R-STREAM-5/6: a stream gets every event in order, however fast the agent yields."""
    agent = Agent("Fast")

    @agent.skill()
    async def burst(task: TaskContext) -> AsyncIterator[str]:
        for number in range(CHUNKS):
            yield f"{number} "

    async def main() -> list[m.StreamEvent]:
        service = AgentService(agent.executor(), agent.card("http://127.0.0.1"))
        message = m.Message(message_id="m", role=m.Role.USER, parts=(m.TextPart(text="go"),))
        events = [
            event
            async for event in service.send_streaming_message(
                CallContext(), m.SendMessageRequest(message=message)
            )
        ]
        assert service.broker.subscriber_count() == 0
        return events

    events = asyncio.run(main())
    chunks = [e for e in events if isinstance(e, m.TaskArtifactUpdateEvent)]
    assert len(chunks) == CHUNKS
    assert [c.artifact.parts[0] for c in chunks] == [
        m.TextPart(text=f"{n} ") for n in range(CHUNKS)
    ]
    last = events[-1]
    assert isinstance(last, m.TaskStatusUpdateEvent)
    assert last.status.state is m.TaskState.COMPLETED
