"""`parley card | send | get | list | cancel | subscribe URL …`: talk to any A2A agent, in
either protocol version, over JSON-RPC or HTTP+JSON, through `parley.client`. Failures
become one line on stderr and an exit status by kind (`parley.cli.errors`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import httpx

from parley.cli import chat, files, waiting
from parley.cli.a2a_cli import error_line
from parley.cli.errors import EXIT_CODES, ExitCode, UsageError, classify, message_of, report
from parley.cli.options import (
    common_options,
    connected,
    count,
    credentials,
    file_part,
    http_client,
    json_value,
    positive_count,
)
from parley.cli.output import Output, state_name
from parley.cli.spinner import spinning
from parley.client import ClientStream, Reconnected, StreamItem, fetch_card, user_message
from parley.model import (
    AgentCard,
    DataPart,
    Message,
    Part,
    SendMessageConfiguration,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import lifecycle
from parley.protocol.operations import Operation
from parley.server.agent import SKILL_METADATA_KEY

Command = Callable[[argparse.Namespace, Output], Coroutine[Any, Any, int]]

STATES = {state_name(state): state for state in TaskState if state is not TaskState.UNSPECIFIED}
"""The `--state` choices: `working`, `input-required`, …"""

WAITING = waiting.WAITING


def add_talk_commands(commands: Any) -> None:
    common = common_options()

    def command(name: str, run: Command, summary: str, description: str) -> Any:
        parser = commands.add_parser(
            name,
            parents=[common],
            help=summary,
            description=description,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        parser.set_defaults(run=lambda arguments: execute(run, arguments))
        return parser

    card = command("card", _card, "show an agent's card", "Show the agent card at URL.")
    card.add_argument(
        "--verify",
        metavar="KEYS",
        help="check the card's signature with these public keys: a PEM or JWKS file, or a "
        "JWKS URL (exit status 5 unless a signature verifies)",
    )
    _send_arguments(command("send", _send, "send a message", "Send a message to the agent at URL."))
    get = command("get", _get, "show a task", "Show a task: its artifacts and state.")
    get.add_argument("task_id", metavar="TASK_ID")
    get.add_argument("--history", metavar="N", type=count, help="show the last N messages")
    _output_argument(get)
    get.add_argument(
        "--wait",
        "--watch",
        action="store_true",
        help="wait until the task ends or asks for input (as a blocking send does)",
    )
    listing = command("list", _list, "list tasks", "List the tasks the agent keeps for you.")
    listing.add_argument(
        "--context", "--context-id", metavar="ID", default="", help="only this context's"
    )
    listing.add_argument("--state", choices=list(STATES), help="only tasks in this state")
    listing.add_argument("--page-size", metavar="N", type=positive_count, help="tasks a page")
    listing.add_argument("--page-token", metavar="T", default="", help="the page to show")
    cancel = command("cancel", _cancel, "cancel a task", "Cancel a task.")
    cancel.add_argument("task_id", metavar="TASK_ID")
    subscribe = command(
        "subscribe", _subscribe, "follow a task", "Follow a running task's updates to its end."
    )
    subscribe.add_argument("task_id", metavar="TASK_ID")
    chat.add_arguments(
        command(
            "chat",
            chat.chat,
            "talk with an agent",
            "Talk with the agent at URL, a line of input per message: while a task asks for "
            "input the next line answers it; Ctrl-D or /quit ends.",
        )
    )


def _output_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        type=files.directory,
        help="save the files the agent sends into DIR, under their names",
    )


def _send_arguments(send: argparse.ArgumentParser) -> None:
    _output_argument(send)
    send.add_argument("text", metavar="TEXT", nargs="?", default="", help="the message's text")
    send.add_argument(
        "--file",
        metavar="PATH",
        type=file_part,
        action="append",
        default=[],
        help="attach a file (repeatable; its media type is guessed from its name)",
    )
    send.add_argument(
        "--data",
        metavar="JSON",
        type=json_value,
        action="append",
        default=[],
        help="attach structured data (repeatable)",
    )
    waiting = send.add_mutually_exclusive_group()
    waiting.add_argument("--stream", action="store_true", help="print events as they come")
    waiting.add_argument(
        "--no-wait",
        "--async",
        "--return-immediately",
        dest="no_wait",
        action="store_true",
        help="return at once, while the task runs",
    )
    send.add_argument("--task", "--task-id", metavar="ID", default="", help="continue this task")
    send.add_argument(
        "--context", "--context-id", metavar="ID", default="", help="send in this context"
    )
    send.add_argument("--skill", metavar="NAME", help="ask for this skill (message metadata)")
    send.add_argument(
        "--push-url",
        metavar="URL",
        help="have the task's updates POSTed to this webhook (e.g. `parley webhook listen`)",
    )
    send.add_argument(
        "--push-token",
        metavar="TOKEN",
        default="",
        help="the webhook's token: sent as X-A2A-Notification-Token, and the key each "
        "notification is signed with (a whsec_ secret or any text)",
    )


def execute(command: Command, arguments: argparse.Namespace, output: Output | None = None) -> int:
    """Run a command; report a failure as one line and its exit status."""
    history = getattr(arguments, "history", None) is not None
    output = output or Output(as_json=arguments.json, history=history)
    try:
        return asyncio.run(command(arguments, output))
    except KeyboardInterrupt:
        output.end_line()
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        output.abandon()
        return ExitCode.PIPE_CLOSED
    except Exception as exc:
        found = classify(exc)
        if found is None:
            raise
        output.end_line()
        code, kind = found
        report(kind, message_of(exc))
        if output.as_json:  # and the a2a-cli error object, for programs
            output.out.write(error_line(exc))
        return code


def outcome(state: TaskState | None) -> int:
    """1 for a task that ended without success (failed, rejected, canceled), else 0."""
    if state is not None and lifecycle.is_terminal(state) and state is not TaskState.COMPLETED:
        return ExitCode.TASK_UNSUCCESSFUL
    return ExitCode.OK


# ---------------------------------------------------------------------- commands


async def _card(arguments: argparse.Namespace, output: Output) -> int:
    """The public card; the extended one when credentials are given and it is offered."""
    async with http_client(arguments) as http, spinning(f"fetching the card of {arguments.url}"):
        if arguments.timeout is None:
            card = await fetch_card(arguments.url, http=http)
        else:
            card = await fetch_card(arguments.url, http=http, timeout=arguments.timeout)
        verified = await _verified(card, arguments.verify, http) if arguments.verify else None
    if verified is False:
        return ExitCode.PROTOCOL
    if credentials(arguments) is not None and card.capabilities.extended_agent_card:
        async with connected(arguments, extended_card=True) as client:
            card = client.card or card
    output.card(card)
    return ExitCode.OK


async def _verified(card: AgentCard, keys: str, http: httpx.AsyncClient) -> bool:
    """Whether a signature of the card verifies with `keys` (reported on stderr)."""
    from parley.wire.card_signatures import (  # noqa: PLC0415 - the auth extra
        CardSignatureError,
        protected_header,
        verify_card,
    )

    source: object = keys
    if keys.startswith(("https://", "http://")):
        answer = await http.get(keys)
        answer.raise_for_status()
        source = answer.json()
    try:
        signature = verify_card(card, source)
    except OSError as exc:
        raise UsageError(f"--verify: {exc.strerror or exc}: {keys}") from None
    except CardSignatureError as exc:
        report("signature", str(exc))
        return False
    header = protected_header(signature)
    sys.stderr.write(f"signature verified: kid {header.get('kid')}, {header.get('alg')}\n")
    return True


def _message(arguments: argparse.Namespace) -> Message:
    parts: list[Part] = [TextPart(text=arguments.text)] if arguments.text else []
    parts += arguments.file
    parts += [DataPart(data=value) for value in arguments.data]
    if not parts:
        raise UsageError("nothing to send: give TEXT, --file or --data")
    metadata = {SKILL_METADATA_KEY: arguments.skill} if arguments.skill else None
    return user_message(parts, metadata=metadata)


def _push(arguments: argparse.Namespace) -> SendMessageConfiguration | None:
    if not arguments.push_url:
        if arguments.push_token:
            raise UsageError("--push-token goes with --push-url")
        return None
    hook = TaskPushNotificationConfig(url=arguments.push_url, token=arguments.push_token)
    return SendMessageConfiguration(push_notification_config=hook)


async def _send(arguments: argparse.Namespace, output: Output) -> int:
    message = _message(arguments)
    task_id, context_id, push = arguments.task, arguments.context, _push(arguments)
    async with connected(arguments) as client:
        if arguments.stream:
            stream = client.stream(
                message, task_id=task_id, context_id=context_id, configuration=push
            )
            return await _follow(stream, output, arguments.output)
        if arguments.no_wait:
            async with spinning(WAITING):
                result = await client.send(
                    message,
                    task_id=task_id,
                    context_id=context_id,
                    return_immediately=True,
                    configuration=push,
                )
        else:  # to the end of the task's turn, however long (`parley.cli.waiting`)
            result = await waiting.sent(
                client,
                arguments.url,
                message,
                task_id=task_id,
                context_id=context_id,
                configuration=push,
                deadline=arguments.timeout,
            )
    output.result(Operation.SEND_MESSAGE, result)
    if arguments.output is not None:
        files.Saver(arguments.output).save(result)
    return outcome(result.status.state) if isinstance(result, Task) else ExitCode.OK


async def _get(arguments: argparse.Namespace, output: Output) -> int:
    async with connected(arguments) as client:
        if arguments.wait:
            task = await waiting.waited(
                client,
                arguments.url,
                arguments.task_id,
                history=arguments.history,
                deadline=arguments.timeout,
            )
        else:
            async with spinning(WAITING):
                task = await client.get_task(arguments.task_id, history_length=arguments.history)
    output.result(Operation.GET_TASK, task)
    if arguments.output is not None:
        files.Saver(arguments.output).save(task)
    return outcome(task.status.state)


async def _list(arguments: argparse.Namespace, output: Output) -> int:
    async with connected(arguments) as client, spinning(WAITING):
        page = await client.list_tasks(
            context_id=arguments.context,
            status=STATES[arguments.state] if arguments.state else None,
            page_size=arguments.page_size,
            page_token=arguments.page_token,
        )
    output.result(Operation.LIST_TASKS, page)
    return ExitCode.OK


async def _cancel(arguments: argparse.Namespace, output: Output) -> int:
    """Success is the cancel's: a canceled task is what was asked for (exit status 0)."""
    async with connected(arguments) as client, spinning(WAITING):
        task = await client.cancel_task(arguments.task_id)
    output.result(Operation.CANCEL_TASK, task)
    return ExitCode.OK


async def _subscribe(arguments: argparse.Namespace, output: Output) -> int:
    async with connected(arguments) as client:
        return await _follow(client.subscribe(arguments.task_id), output)


async def _follow(stream: ClientStream, output: Output, folder: Path | None = None) -> int:
    """Print a stream's items as they arrive (and save the files of its artifacts and
    replies into `folder`); the exit status of the task's last state."""
    state: TaskState | None = None
    saver = files.Saver(folder) if folder is not None else None
    async with stream:
        async for item in stream:
            output.event(item)
            if saver is not None and isinstance(item, TaskArtifactUpdateEvent | Message):
                output.end_line()
                saver.save(item)
            found = _state_of(item)
            state = state if found is None else found
    output.end_line()
    return outcome(state)


def _state_of(item: StreamItem) -> TaskState | None:
    match item:
        case Task() | TaskStatusUpdateEvent():
            return item.status.state
        case Reconnected(task=Task() as task):
            return task.status.state
    return None
