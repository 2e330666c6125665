"""`parley chat URL`: a conversation with an agent, one line of stdin per message. While
the task asks for input, the next line answers it (the same task); after a task ends, the
next line starts a new task in the same context. Each answer is waited for as `parley
send` waits for one (`parley.cli.waiting`). Ends at end of input (Ctrl-D) or `/quit`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from parley.cli import waiting
from parley.cli.errors import ExitCode
from parley.cli.options import connected
from parley.cli.output import Output, parts_text, status_line
from parley.client import user_message
from parley.model import Message, SendMessageResult, Task, TaskState
from parley.protocol import lifecycle
from parley.protocol.operations import Operation
from parley.server.agent import SKILL_METADATA_KEY

PROMPT = "you> "
QUIT = "/quit"


def add_arguments(chat: argparse.ArgumentParser) -> None:
    chat.add_argument(
        "--context", "--context-id", metavar="ID", default="", help="talk in this context"
    )
    chat.add_argument("--skill", metavar="NAME", help="ask for this skill (message metadata)")


async def _line() -> str | None:
    """The next line of stdin (None at its end); the prompt only on a terminal."""
    if sys.stdin.isatty():
        sys.stderr.write(PROMPT)
        sys.stderr.flush()
    line = await asyncio.to_thread(sys.stdin.readline)
    return line.rstrip("\n") if line else None


def _show(output: Output, result: SendMessageResult) -> None:
    if output.as_json:
        output.result(Operation.SEND_MESSAGE, result)
        return
    if isinstance(result, Message):
        output.event(result)
        return
    lines = [parts_text(artifact.parts) for artifact in result.artifacts]
    output.out.write("\n".join([*lines, status_line(result.status)]) + "\n")
    output.out.flush()


async def chat(arguments: argparse.Namespace, output: Output) -> int:
    """The conversation; the exit status of its last task (0 after a direct reply)."""
    task_id, context_id = "", arguments.context
    metadata = {SKILL_METADATA_KEY: arguments.skill} if arguments.skill else None
    last: Task | None = None
    async with connected(arguments) as client:
        while (line := await _line()) is not None and line.strip() != QUIT:
            if not line.strip():
                continue
            result = await waiting.sent(
                client,
                arguments.url,
                user_message(line, metadata=metadata),
                task_id=task_id,
                context_id=context_id,
                configuration=None,
                deadline=arguments.timeout,
            )
            _show(output, result)
            context_id = result.context_id or context_id
            last = result if isinstance(result, Task) else None
            interrupted = last is not None and lifecycle.is_interrupted(last.status.state)
            task_id = last.id if last is not None and interrupted else ""
    state = last.status.state if last is not None else None
    if state is not None and lifecycle.is_terminal(state) and state is not TaskState.COMPLETED:
        return ExitCode.TASK_UNSUCCESSFUL
    return ExitCode.OK
