"""`parley mcp URL`: a Parley agent served on 127.0.0.1, its skills listed and called as
MCP tools by the `mcp` SDK's own client, over stdio (the command run as a subprocess, as
an MCP host runs it) and over Streamable HTTP; a streaming agent and one that is not."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from parley.model import RawPart
from parley.server.agent import Agent
from parley.server.task_context import TaskContext
from tests.adapters.served import on_parley
from tests.ports import free_port

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).parents[2]


def make_agent(*, streaming: bool = True) -> Agent:
    agent = Agent("Bridged", description="Skills for the MCP bridge.", streaming=streaming)

    @agent.skill(examples=["hello"])
    async def shout(task: TaskContext) -> str:
        """Says it louder."""
        return task.text.upper()

    @agent.skill("count.words")
    async def count(task: TaskContext) -> dict[str, int]:
        """Counts the words."""
        await task.update("counting")
        return {"words": len(task.text.split())}

    @agent.skill()
    async def chunks(task: TaskContext) -> AsyncIterator[str]:
        """Streams three chunks."""
        for chunk in ("al", "pha", "bet"):
            yield chunk

    @agent.skill()
    async def greet(task: TaskContext) -> str:
        """Asks a name."""
        reply = await task.ask("What is your name?")
        return f"Hello, {reply.text}!"

    @agent.skill()
    async def fail(task: TaskContext) -> None:
        """Fails."""
        task.fail("boom")

    @agent.skill()
    async def report(task: TaskContext) -> RawPart:
        """Sends a file."""
        return RawPart(raw=b"a,b\n", media_type="text/csv", filename="r.csv")

    return agent


@asynccontextmanager
async def over_stdio(url: str) -> AsyncIterator[ClientSession]:
    command = StdioServerParameters(  # the whole environment: coverage follows the child
        command=sys.executable,
        args=["-m", "parley.cli", "mcp", url],
        cwd=str(ROOT),
        env=dict(os.environ),
    )
    async with stdio_client(command) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


async def exercise(session: ClientSession) -> None:
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert list(tools) == ["shout", "count.words", "chunks", "greet", "fail", "report"]
    assert tools["shout"].description == "Says it louder.\nExamples: hello"
    assert tools["shout"].input_schema["required"] == ["message"]

    shouted = await session.call_tool("shout", {"message": "hi there"})
    assert (texts(shouted), shouted.is_error) == (["HI THERE"], False)
    assert shouted.structured_content is not None
    assert shouted.structured_content["state"] == "completed"

    counted = await session.call_tool("count.words", {"message": "one two three"})
    assert [json.loads(text) for text in texts(counted)] == [{"words": 3}]
    assert texts(await session.call_tool("chunks", {"message": ""})) == ["alphabet"]

    asked = await session.call_tool("greet", {"message": "hello"})
    assert asked.structured_content is not None
    assert asked.structured_content["state"] == "input-required"
    assert texts(asked)[0] == "What is your name?"
    ids = {key: asked.structured_content[key] for key in ("task_id", "context_id")}
    answered = await session.call_tool("greet", {"message": "Ada", **ids})
    assert texts(answered) == ["Hello, Ada!"]

    failed = await session.call_tool("fail", {"message": ""})
    assert (failed.is_error, texts(failed)) == (True, ["The task ended failed: boom"])

    (block,) = (await session.call_tool("report", {"message": ""})).content
    assert isinstance(block, types.EmbeddedResource)
    assert isinstance(block.resource, types.BlobResourceContents)
    assert (block.resource.mime_type, block.resource.uri.endswith("/r.csv")) == ("text/csv", True)
    assert base64.b64decode(block.resource.blob) == b"a,b\n"

    wrong = await session.call_tool("shout", {"text": "no message"})
    assert wrong.is_error


@pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "polling"])
async def test_an_agents_skills_are_mcp_tools_over_stdio(streaming: bool) -> None:
    async with on_parley(make_agent(streaming=streaming)) as url, over_stdio(url) as session:
        await exercise(session)


async def test_a_streamed_tasks_status_messages_are_progress() -> None:
    seen: list[str | None] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    async with on_parley(make_agent()) as url, over_stdio(url) as session:
        await session.call_tool("count.words", {"message": "a b"}, progress_callback=progress)
    assert seen == ["counting"]


def _wait_until_listening(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("parley mcp --http did not start")


async def test_the_tools_over_streamable_http() -> None:
    port = free_port()
    async with on_parley(make_agent()) as url:
        command = [sys.executable, "-m", "parley.cli", "mcp", url, "--http", "--port", str(port)]
        process = subprocess.Popen(
            command, cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        try:
            await asyncio.to_thread(_wait_until_listening, port, process)
            endpoint = f"http://127.0.0.1:{port}/mcp"
            async with (
                streamable_http_client(endpoint) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result: Any = await session.call_tool("shout", {"message": "over http"})
        finally:
            process.terminate()
            process.communicate(timeout=30)
    assert texts(result) == ["OVER HTTP"]


async def test_an_unreachable_agent_stops_the_command_in_one_line() -> None:
    port = free_port()
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "parley.cli", "mcp", f"http://127.0.0.1:{port}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""
