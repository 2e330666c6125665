"""Any command as an agent (`parley serve --exec 'CMD ARGS'`): the message's text goes to
the command's stdin, each line it writes to stdout is streamed as a chunk of one artifact,
each line on stderr is a WORKING status message, and its exit status ends the task (0:
COMPLETED; else FAILED, with the status and the last stderr line).

Theory of operation: one skill function per task runs the command (split like a shell
would, but never run by one) in a process group of its own, under a semaphore that caps
how many run at once (tasks beyond it wait, SUBMITTED then WORKING). Three coroutines
feed stdin and read stdout and stderr side by side, so that no pipe fills up; their
events go out one at a time (a lock). A timeout, or the task's cancellation (the
executor cancels the function), ends the group: SIGTERM, then SIGKILL after a grace
period. POSIX only (process groups).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from parley.server.agent import Agent
from parley.server.task_context import TaskContext

LINE_LIMIT = 1 << 20
"""The longest line read at once (bytes); a longer one is streamed in pieces this long."""


@dataclass(frozen=True)
class CommandSettings:
    """How a command is run: `argv`, at most `concurrency` at once, each ended after
    `timeout` seconds (None: never), given `kill_grace` seconds between SIGTERM and
    SIGKILL."""

    argv: tuple[str, ...]
    timeout: float | None = None
    concurrency: int = 4
    kill_grace: float = 5.0

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("the command is empty")
        if self.concurrency < 1:
            raise ValueError("the concurrency is at least 1")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError("the timeout is a number of seconds above 0")


def command_argv(command: str | Sequence[str]) -> tuple[str, ...]:
    """A command line split into its words as a POSIX shell would (quotes, escapes), with
    no shell run: `sh -c '…'` for pipes and redirections."""
    if isinstance(command, str):
        return tuple(shlex.split(command))
    return tuple(command)


def command_agent(
    command: str | Sequence[str],
    *,
    timeout: float | None = None,
    concurrency: int = 4,
    kill_grace: float = 5.0,
    name: str | None = None,
) -> Agent:
    """An Agent with one skill, `run`, that runs `command` for each task (see the module's
    docstring); ValueError for an empty command or a bad setting."""
    settings = CommandSettings(command_argv(command), timeout, concurrency, kill_grace)
    shown = shlex.join(settings.argv)
    agent = Agent(
        name or PurePath(settings.argv[0]).name,
        description=f"Runs `{shown}`: the message's text on its standard input, its output "
        "streamed back line by line.",
    )
    runner = CommandRunner(settings)
    agent.skill("run", name="Run", description=f"Runs `{shown}` on the message's text.")(runner.run)
    return agent


class CommandRunner:
    """Runs the command for one task at a time per call of `run`, at most `concurrency`
    calls at once."""

    def __init__(self, settings: CommandSettings) -> None:
        self.settings = settings
        self._slots = asyncio.Semaphore(settings.concurrency)

    async def run(self, task: TaskContext) -> None:
        if self._slots.locked():
            await task.update("waiting: all command slots are busy")
        async with self._slots:
            await _Run(self.settings, task).run()


class _Run:
    """One run of the command for one task."""

    def __init__(self, settings: CommandSettings, task: TaskContext) -> None:
        self.settings = settings
        self.task = task
        self.lock = asyncio.Lock()
        self.artifact_id = ""
        self.last_error = ""

    async def run(self) -> None:
        task = self.task
        process = await asyncio.create_subprocess_exec(
            *self.settings.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group, ended as a whole
            limit=LINE_LIMIT,
            env=os.environ | {"PARLEY_TASK_ID": task.task_id, "PARLEY_CONTEXT_ID": task.context_id},
        )
        try:
            async with asyncio.timeout(self.settings.timeout):
                await self._communicate(process)
        except TimeoutError:
            await end_group(process, self.settings.kill_grace)
            await self._close_artifact()
            self.task.fail(f"the command timed out after {self.settings.timeout:g} s")
        finally:
            if process.returncode is None:  # canceled, or an error: the command must not stay
                await asyncio.shield(end_group(process, self.settings.kill_grace))
        await self._close_artifact()
        code = process.returncode
        if code != 0:
            self.task.fail(_failure(code, self.last_error))

    async def _communicate(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        async with asyncio.TaskGroup() as group:
            group.create_task(_feed(process.stdin, self.task.text.encode()))
            group.create_task(self._read(process.stdout, self._output))
            group.create_task(self._read(process.stderr, self._error))
        await process.wait()

    async def _read(
        self, stream: asyncio.StreamReader, emit: Callable[[str], Awaitable[None]]
    ) -> None:
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line longer than LINE_LIMIT: what has been read of it
                line = await stream.read(LINE_LIMIT)
            if not line:
                return
            async with self.lock:
                await emit(line.decode(errors="replace"))

    async def _output(self, line: str) -> None:
        self.artifact_id = await self.task.artifact(
            line, artifact_id=self.artifact_id, name="stdout", append=bool(self.artifact_id)
        )

    async def _error(self, line: str) -> None:
        line = line.rstrip("\r\n")
        if line:
            self.last_error = line
            await self.task.update(line)

    async def _close_artifact(self) -> None:
        """The streamed artifact's last chunk (empty: a line is sent as soon as it is
        read, before anyone knows whether another one follows)."""
        if self.artifact_id:
            await self.task.artifact(
                "", artifact_id=self.artifact_id, name="stdout", append=True, last_chunk=True
            )
            self.artifact_id = ""


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    """Write the text and close stdin, so that the command sees its end; a command that
    exits without reading it all is not an error."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
    stdin.close()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        await stdin.wait_closed()


async def end_group(process: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM to the command's process group, SIGKILL if it has not exited after `grace`
    seconds; returns once the command has exited."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            async with asyncio.timeout(grace if sig == signal.SIGTERM else None):
                await process.wait()
            return
        except TimeoutError:
            continue


def _failure(code: int | None, last_error: str) -> str:
    if code is not None and code < 0:
        said = f"the command was ended by signal {-code}"
    else:
        said = f"the command exited with status {code}"
    return f"{said}: {last_error}" if last_error else said
