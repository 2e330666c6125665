"""The waits of `parley send` (blocking) and `parley get --wait`: until the end of the
task's turn (terminal, or input or authorization required), however long, with a progress
line on a terminal (time spent, task id). A send goes out as a stream when the agent
streams — its task's id comes with the first event, keep-alives keep proxies from cutting
it — and the task is then read once it ended, so the output is a blocking send's; else it
is a blocking send, followed if answered early. On Ctrl-C, or past `--timeout`, the task
is not lost: the command that picks it up again is printed with its id.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from parley.cli.spinner import Progress, spinning
from parley.client import Client, ClientProtocolError, ClientTimeoutError
from parley.client.waiting import deadline_of
from parley.model import Message, SendMessageConfiguration, SendMessageResult, Task

WAITING = "waiting for the agent"


def resume_command(url: str, task_id: str) -> str:
    return f"parley get {url} {task_id} --wait"


def still_running(url: str, task_id: str) -> str:
    return f"task {task_id} is still running: {resume_command(url, task_id)}"


@asynccontextmanager
async def resumable(url: str, progress: Progress) -> AsyncIterator[None]:
    """On Ctrl-C (the command's task cancelled) or a timeout, name the task and the
    command that resumes it, once the spinner's line is erased."""
    try:
        async with spinning(progress):
            yield
    except asyncio.CancelledError:
        if progress.task_id:
            sys.stderr.write(still_running(url, progress.task_id) + "\n")
            sys.stderr.flush()
        raise
    except ClientTimeoutError as error:
        task_id = error.task_id or progress.task_id
        if not task_id:
            raise
        if task_id in error.message:  # "…; task X is still running" (the client's)
            message = f"{error.message}: {resume_command(url, task_id)}"
        else:
            message = f"{error.message}; {still_running(url, task_id)}"
        raise ClientTimeoutError(message, task_id=task_id) from None


async def sent(
    client: Client,
    url: str,
    message: Message,
    *,
    task_id: str,
    context_id: str,
    configuration: SendMessageConfiguration | None,
    deadline: float | None,
) -> SendMessageResult:
    """A blocking send's answer: the task at the end of its turn, or a direct reply."""
    progress = Progress(WAITING, task_id=task_id)
    async with resumable(url, progress):
        if not client.card.capabilities.streaming:
            return await client.send(
                message,
                task_id=task_id,
                context_id=context_id,
                configuration=configuration,
                deadline=deadline,
            )
        async with deadline_of(deadline, lambda: progress.task_id):
            stream = client.stream(
                message, task_id=task_id, context_id=context_id, configuration=configuration
            )
            async with stream:
                async for item in stream:
                    progress.task_id = stream.task_id
                    if isinstance(item, Message) and not stream.task_id:
                        return item  # a direct reply
            if not stream.task_id:
                raise ClientProtocolError("The stream ended without an answer")
            return await client.get_task(stream.task_id)


async def waited(
    client: Client, url: str, task_id: str, *, history: int | None, deadline: float | None
) -> Task:
    """`parley get --wait`: the task at the end of its turn."""
    async with resumable(url, Progress(WAITING, task_id=task_id)):
        return await client.wait(task_id, history_length=history, deadline=deadline)
