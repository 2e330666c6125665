"""A command as an agent (`parley.adapters.command`), run for real (`python -c …`): its
stdout lines streamed as one artifact's chunks, stderr lines as status messages, its exit
status ending the task, a timeout and a cancel ending its process group, a cap on how
many run at once."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path

import pytest

from parley import AgentService, Client, Task
from parley.adapters.command import CommandSettings, command_agent, command_argv
from parley.model import TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent, TextPart
from parley.server.agent import Agent
from parley.testing import InMemoryTransport
from tests.contracts.support import run

PYTHON = sys.executable


def python(code: str) -> list[str]:
    return [PYTHON, "-c", code]


def service(agent: Agent) -> AgentService:
    return AgentService(agent.executor(), agent.card("memory://command"))


def text(parts: tuple[object, ...]) -> str:
    return "".join(part.text for part in parts if isinstance(part, TextPart))


async def streamed(agent: Agent, message: str) -> list[tuple[object, ...]]:
    seen: list[tuple[object, ...]] = []
    async with Client(InMemoryTransport(service(agent))) as client:
        async for event in client.stream(message):
            if isinstance(event, TaskArtifactUpdateEvent):
                chunk = event.artifact
                seen.append(("chunk", text(chunk.parts), event.append, event.last_chunk))
            elif isinstance(event, TaskStatusUpdateEvent):
                said = event.status.message
                seen.append((event.status.state.name, text(said.parts) if said else ""))
    return seen


def test_stdout_lines_are_streamed_as_chunks_of_one_artifact() -> None:
    """R-STREAM-3: the chunks of one artifact, the first without append, the last marked."""
    upper = python("import sys\nfor line in sys.stdin: print(line.upper(), end='', flush=True)")
    seen = run(streamed(command_agent(upper), "one\ntwo\nthree"))
    chunks = [event for event in seen if event[0] == "chunk"]
    assert chunks == [
        ("chunk", "ONE\n", False, False),
        ("chunk", "TWO\n", True, False),
        ("chunk", "THREE", True, False),
        ("chunk", "", True, True),
    ]
    assert seen[-1] == ("COMPLETED", "")


def test_stderr_lines_are_status_messages_and_a_nonzero_exit_fails_the_task() -> None:
    failing = python(
        "import sys\nprint('half done', file=sys.stderr, flush=True)\n"
        "print('disk full', file=sys.stderr)\nsys.exit(3)"
    )
    seen = run(streamed(command_agent(failing), ""))
    assert ("WORKING", "half done") in seen
    assert seen[-1] == ("FAILED", "the command exited with status 3: disk full")


def test_a_zero_exit_with_no_output_completes_with_no_artifact() -> None:
    async def scenario() -> Task:
        async with Client(InMemoryTransport(service(command_agent("true")))) as client:
            task = await client.send("ignored")
            assert isinstance(task, Task)
            return task

    task = run(scenario())
    assert (task.status.state, task.artifacts) == (TaskState.COMPLETED, ())


def test_the_message_text_reaches_stdin_and_the_task_ids_the_environment() -> None:
    echo = python("import os, sys\nprint(sys.stdin.read(), os.environ['PARLEY_TASK_ID'])")

    async def scenario() -> Task:
        async with Client(InMemoryTransport(service(command_agent(echo)))) as client:
            task = await client.send("hello")
            assert isinstance(task, Task)
            return task

    task = run(scenario())
    assert task.text == f"hello {task.id}\n"


def gone(pid: int) -> bool:
    """Whether the process has exited (waited for by its parent, or not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")


def wait_for(condition: object, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


# The command records its pid, starts a grandchild in its group, and ignores SIGTERM.
STUBBORN = (
    "import os, signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "open(sys.argv[1], 'w').write(f'{os.getpid()} {child.pid}')\n"
    "time.sleep(60)"
)


def pids(path: Path) -> list[int]:
    return [int(word) for word in path.read_text().split()] if path.exists() else []


def test_a_timeout_kills_the_process_group_and_fails_the_task(tmp_path: Path) -> None:
    record = tmp_path / "pids"
    agent = command_agent([*python(STUBBORN), str(record)], timeout=1, kill_grace=0.2)

    async def scenario() -> Task:
        async with Client(InMemoryTransport(service(agent))) as client:
            task = await client.send("")
            assert isinstance(task, Task)
            return task

    task = run(scenario())
    assert task.status.state == TaskState.FAILED
    assert task.status.message is not None
    assert text(task.status.message.parts) == "the command timed out after 1 s"
    assert len(pids(record)) == 2
    wait_for(lambda: all(gone(pid) for pid in pids(record)))  # the grandchild too


def test_canceling_the_task_kills_the_process(tmp_path: Path) -> None:
    record = tmp_path / "pids"
    agent = command_agent([*python(STUBBORN), str(record)], kill_grace=0.2)

    async def scenario() -> Task:
        async with Client(InMemoryTransport(service(agent))) as client:
            task = await client.send("", return_immediately=True)
            assert isinstance(task, Task)
            while len(pids(record)) < 2:
                await asyncio.sleep(0.02)
            return await client.cancel_task(task.id)

    task = run(scenario())
    assert task.status.state == TaskState.CANCELED
    wait_for(lambda: all(gone(pid) for pid in pids(record)))


def test_commands_beyond_the_concurrency_wait_their_turn(tmp_path: Path) -> None:
    log = tmp_path / "log"
    step = python(
        "import sys, time\nlog = open(sys.argv[1], 'a')\nlog.write('start\\n'); log.flush()\n"
        "time.sleep(0.1)\nlog.write('end\\n')"
    )
    agent = command_agent([*step, str(log)], concurrency=1)

    async def scenario() -> list[Task]:
        async with Client(InMemoryTransport(service(agent))) as client:
            sent = await asyncio.gather(*(client.send(str(n)) for n in range(3)))
            return [task for task in sent if isinstance(task, Task)]

    tasks = run(scenario())
    assert [task.status.state for task in tasks] == [TaskState.COMPLETED] * 3
    assert log.read_text().split() == ["start", "end"] * 3


def test_commands_are_split_as_a_shell_would_but_run_by_none() -> None:
    assert command_argv("grep -i 'two words' \"a b\"") == ("grep", "-i", "two words", "a b")
    assert command_argv("echo $HOME | wc") == ("echo", "$HOME", "|", "wc")
    with pytest.raises(ValueError, match="empty"):
        CommandSettings(())
    with pytest.raises(ValueError, match="concurrency"):
        CommandSettings(("true",), concurrency=0)
    assert command_agent("/usr/bin/wc -l").card("http://x").name == "wc"


def test_the_docs_example_runs() -> None:
    page = (Path(__file__).parents[2] / "docs" / "exec.md").read_text()
    (code,) = re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)
    namespace: dict[str, object] = {}
    exec(compile(code, "exec.md", "exec"), namespace)
    agent = namespace["agent"]
    assert isinstance(agent, Agent)

    async def scenario() -> Task:
        async with Client(InMemoryTransport(service(agent))) as client:
            task = await client.send("hello")
            assert isinstance(task, Task)
            return task

    assert run(scenario()).text == "HELLO"
