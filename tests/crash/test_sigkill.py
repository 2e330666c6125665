"""Crash test (DESIGN 4, 6): a real `parley serve` with SQLite, then with PostgreSQL, is
killed with SIGKILL at random moments while clients send, stream and answer questions.
After each restart everything the server acknowledged is there and consistent, tasks
that were running are FAILED by the restart policy, and nothing is corrupt.

The moments are random; a failure names the seed (`PARLEY_CRASH_SEED` repeats it).
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.server.stores.recovery import RESTART_MESSAGE
from tests.contracts.conftest import require_postgres
from tests.contracts.support import POSTGRES_URL, create_schema, drop_schema, with_params
from tests.crash import agent
from tests.crash.load import ACTIVE, TERMINAL, Ledger, Seen, call, run_until_killed
from tests.ports import free_port
from tests.serving import wait_for_card

ROOT = Path(__file__).parents[2]
KILLS = 20
"""SIGKILLs per backend."""
SEED = int(os.environ.get("PARLEY_CRASH_SEED", str(time.time_ns() % 2**32)))


@contextmanager
def serving(store: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`parley serve` on a free port, ready when its card answers; killed on exit."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "parley.cli.main", "serve", "tests.crash.agent:agent"]
    command += ["--port", str(port), "--store", store, "--log-level", "warning"]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE)
    try:
        stderr = process.stderr
        assert stderr is not None
        wait_for_card(
            url, process, lambda: stderr.read().decode() if process.poll() is not None else ""
        )
        yield url, process
    finally:
        process.kill()
        process.wait(10)
        process.stderr.close()  # type: ignore[union-attr]


def _crash_rounds(store: str, check_files: Path | None) -> None:
    rng = random.Random(SEED)
    ledger = Ledger()
    for round_number in range(KILLS + 1):
        context = f"seed {SEED}, round {round_number}"
        with serving(store) as (url, process):
            asyncio.run(_verify(url, ledger, context))
            if round_number == KILLS:
                break
            asyncio.run(_round(url, process, ledger, rng.uniform(0.15, 1.2)))
        if check_files is not None:
            _check_sqlite(check_files, context)
    assert ledger.acknowledged_events > KILLS * 10, "the clients barely ran"
    assert {seen.kind for seen in ledger.tasks.values()} == {"quick", "stream", "ask"}


async def _round(url: str, process: subprocess.Popen[bytes], ledger: Ledger, delay: float) -> None:
    loop = asyncio.get_running_loop()
    kill: asyncio.Future[None] = loop.create_future()

    def sigkill() -> None:
        process.kill()
        kill.set_result(None)

    loop.call_later(delay, sigkill)
    await asyncio.wait_for(run_until_killed(url, ledger, kill), 60)


def _check_sqlite(path: Path, context: str) -> None:
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)], context
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == [], context
    connection.close()


# ----------------------------------------------------------------------------- checks


async def _verify(
    url: str, ledger: Ledger, context: str, failed_text: str = RESTART_MESSAGE
) -> None:
    """Everything acknowledged is stored and consistent; nothing is left running; a task
    failed by recovery says `failed_text`."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        listed = await _list_all(client)
        for task in listed.values():
            assert task["status"]["state"] not in ACTIVE, f"{context}: left running: {task}"
        for task_id, seen in ledger.tasks.items():
            assert task_id in listed, f"{context}: acknowledged task {task_id} lost"
            _check_task(listed[task_id], seen, f"{context}, task {task_id}", failed_text)
            seen.state = listed[task_id]["status"]["state"]
            seen.in_flight = ""
        # A read of one task gives what the listing gave.
        for task_id in random.Random(context).sample(sorted(listed), min(len(listed), 20)):
            assert await call(client, "GetTask", {"id": task_id}) == listed[task_id], context


async def _list_all(client: httpx.AsyncClient) -> dict[str, Any]:
    found: dict[str, Any] = {}
    token = ""
    while True:
        params: dict[str, Any] = {"pageSize": 100, "includeArtifacts": True}
        if token:
            params["pageToken"] = token
        page = await call(client, "ListTasks", params)
        for task in page.get("tasks", []):
            assert task["id"] not in found, f"listed twice: {task['id']}"
            found[task["id"]] = task
        token = page.get("nextPageToken", "")
        if not token:
            assert page.get("totalSize", 0) == len(found)
            return found


def _check_task(task: dict[str, Any], seen: Seen, context: str, failed_text: str) -> None:
    state = task["status"]["state"]
    history = [m["messageId"] for m in task.get("history", []) if m["role"] == "ROLE_USER"]
    positions = [history.index(i) for i in seen.user_ids if i in history]
    assert len(positions) == len(seen.user_ids), f"{context}: user messages lost: {history}"
    assert positions == sorted(positions), f"{context}: user messages out of order"
    if seen.state in TERMINAL:
        assert state == seen.state, f"{context}: acknowledged {seen.state}, stored {state}"
    elif seen.state == "TASK_STATE_INPUT_REQUIRED":
        allowed = {seen.state}
        if seen.in_flight:  # its answer may have been taken before the kill
            allowed |= {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED"}
        assert state in allowed, f"{context}: acknowledged {seen.state}, stored {state}"
    else:  # acknowledged running: finished before the kill, or failed by the restart policy
        assert state in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED"), f"{context}: {state}"
    if state == "TASK_STATE_FAILED":
        text = task["status"]["message"]["parts"][0]["text"]
        assert text == failed_text, f"{context}: failed for another reason: {text}"
    if seen.kind == "stream":
        _check_chunks(task, seen, state, context)
    elif seen.kind == "quick":
        assert task["artifacts"][0]["parts"][0]["text"].startswith("q"), context


def _check_chunks(task: dict[str, Any], seen: Seen, state: str, context: str) -> None:
    """The stored artifact is the first n chunks, in order, n >= those acknowledged."""
    artifacts = task.get("artifacts", [])
    text = "".join(part["text"] for part in artifacts[0]["parts"]) if artifacts else ""
    count = len(text) // 5
    assert text == "".join(f"c{n:03d} " for n in range(count)), f"{context}: {text!r}"
    assert count >= seen.chunks, f"{context}: {seen.chunks} chunks streamed, {count} stored"
    if state == "TASK_STATE_COMPLETED":
        assert count == agent.CHUNKS, f"{context}: completed with {count} chunks"


# ----------------------------------------------------------------------------- the tests


def test_sqlite_survives_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    _crash_rounds(f"sqlite:///{path}", path)


def test_postgres_survives_sigkill(postgres_url: str) -> None:
    _crash_rounds(postgres_url, None)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh schema on the real PostgreSQL server, dropped afterwards."""
    require_postgres()
    schema = asyncio.run(create_schema())
    try:
        yield with_params(POSTGRES_URL, schema=schema)
    finally:
        asyncio.run(drop_schema(schema))
