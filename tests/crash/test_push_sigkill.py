"""Crash test of push delivery (DESIGN 10): a real `parley serve` with SQLite, then with
PostgreSQL, records notifications for webhooks that answer 503, and is killed with SIGKILL
while they are pending — one of them in the middle of an attempt, its lease held by the
dead process. Restarted on the same store with the webhooks up again, it delivers every
notification recorded before the kill, at least once, in order per (task, config), and
each task's last one (COMPLETED) arrives: nothing the server acknowledged is lost.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.contracts.conftest import require_postgres
from tests.contracts.support import POSTGRES_URL, create_schema, drop_schema, with_params
from tests.crash import push_agent
from tests.ports import free_port
from tests.serving import wait_for_card

ROOT = Path(__file__).parents[2]
HEADERS = {"A2A-Version": "1.0"}
TOKEN = "crash-token"
STEPS_TASKS = 3
"""Tasks of the `steps` skill, one inline config each (the first one's webhook hangs)."""
ASK_TASKS = 2
"""Tasks of the `ask` skill: an inline config, and a second one made while they wait."""
PUSH_TIMEOUT = 1.0
LEASE = PUSH_TIMEOUT + 5.0
"""How long a claimed notification stays held (the worker's lease)."""
DEADLINE = 30.0
"""Seconds for the restarted server to deliver everything (the lease and the retry
delays of the first attempts are at most about 10 s)."""

OutboxRow = tuple[str, str, str, int, int]
"""(task id, config id, notification id, state, lease_until µs) of a `push_outbox` row."""


# ----------------------------------------------------------------------------- the receiver


@dataclass(frozen=True)
class Hit:
    """One request the receiver answered (status 0: held, never answered)."""

    path: str
    notification_id: str
    status: int
    token: str
    body: dict[str, Any]

    @property
    def task_id(self) -> str:
        return self.notification_id.split(".")[0]

    @property
    def position(self) -> tuple[int, int]:
        """(version, index) of the notification id TASKID.VERSION.INDEX."""
        _, version, index = self.notification_id.rsplit(".", 2)
        return int(version), int(index)

    @property
    def queue(self) -> tuple[str, str]:
        """(task id, config): "second" for the config made later, else "inline"."""
        return self.task_id, "second" if self.path == "/hook/second" else "inline"


@dataclass
class Receiver:
    """Webhooks on 127.0.0.1, served by threads: every request is recorded and answered
    `status`; while `hold` is set, requests to /hook/held are kept unanswered (until
    `release`), so the server is killed in the middle of an attempt."""

    status: int = 503
    hold: bool = True
    hits: list[Hit] = field(default_factory=list)
    held_since: float = 0.0
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, path: str, headers: Any, body: bytes) -> int:
        notification_id = headers.get("webhook-id", "")
        token = headers.get("X-A2A-Notification-Token", "")
        with self.lock:
            held = self.hold and path == "/hook/held"
            status = 0 if held else self.status
            self.hits.append(Hit(path, notification_id, status, token, json.loads(body)))
            if held:
                self.held_since = time.monotonic()
        if held:
            self.release.wait(60)
            return 503
        return status

    def snapshot(self) -> list[Hit]:
        with self.lock:
            return list(self.hits)

    def go_up(self) -> None:
        """From now on, every request is answered 200."""
        with self.lock:
            self.status, self.hold = 200, False
        self.release.set()


@contextmanager
def receiving() -> Iterator[tuple[Receiver, str]]:
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status = receiver.answer(self.path, self.headers, body)
            with suppress(OSError):  # a held request's client is long gone
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        receiver.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


# ----------------------------------------------------------------------------- the server


@contextmanager
def serving(store: str, log: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`parley serve` of the push agent on a free port, delivering to 127.0.0.1, ready
    when its card answers; killed on exit. Its stderr goes to `log` (appended)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "parley.cli.main", "serve", "tests.crash.push_agent:agent"]
    command += ["--port", str(port), "--store", store, "--log-level", "warning"]
    command += ["--push-allow", "127.0.0.1", "--push-timeout", str(PUSH_TIMEOUT)]
    with log.open("ab") as errors:
        process = subprocess.Popen(command, cwd=ROOT, stderr=errors)
    try:
        wait_for_card(url, process, log.read_text)
        yield url, process
    finally:
        process.kill()
        process.wait(10)


def _call(client: httpx.Client, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params}
    answer = client.post("/", json=body, headers=HEADERS).json()
    assert "error" not in answer, f"{method}: {answer['error']}"
    return answer["result"]


def _message(skill: str, text: str, task_id: str = "") -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "metadata": {"skill": skill},
    }
    if task_id:
        message["taskId"] = task_id
    return message


def _send(client: httpx.Client, message: dict[str, Any], hook: str = "") -> dict[str, Any]:
    params: dict[str, Any] = {"message": message}
    if hook:
        config = {"url": hook, "token": TOKEN}
        params["configuration"] = {"taskPushNotificationConfig": config}
    task: dict[str, Any] = _call(client, "SendMessage", params)["task"]
    return task


def _make_tasks(client: httpx.Client, hooks: str) -> dict[str, str]:
    """The tasks, all finished (acknowledged COMPLETED): task id -> skill."""
    made: dict[str, str] = {}
    for number in range(STEPS_TASKS):
        path = "/hook/held" if number == 0 else "/hook/inline"
        task = _send(client, _message("steps", f"t{number}"), hooks + path)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        made[task["id"]] = "steps"
    for number in range(ASK_TASKS):
        task = _send(client, _message("ask", "hi"), hooks + "/hook/inline")
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
        second = {"taskId": task["id"], "id": "second", "url": hooks + "/hook/second"}
        _call(client, "CreateTaskPushNotificationConfig", {**second, "token": TOKEN})
        task = _send(client, _message("ask", f"ada{number}", task["id"]))
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        made[task["id"]] = "ask"
    return made


def _queues(made: dict[str, str]) -> set[tuple[str, str]]:
    """Every (task id, config) that has notifications."""
    found = {(task_id, "inline") for task_id in made}
    return found | {(task_id, "second") for task_id, skill in made.items() if skill == "ask"}


# ----------------------------------------------------------------------------- the test


def _crash(store: str, read_outbox: Callable[[], list[OutboxRow]], log: Path) -> None:
    with receiving() as (receiver, hooks):
        with serving(store, log) as (url, process):
            with httpx.Client(base_url=url, timeout=30) as client:
                made = _make_tasks(client, hooks)
            killed_at = _kill_mid_attempt(receiver, process, _queues(made), log)
        before = receiver.snapshot()
        rows = read_outbox()
        _check_pending(before, rows, made, killed_at)
        receiver.go_up()
        with serving(store, log):
            recorded = {
                (task_id, _config(task_id, config), event) for task_id, config, event, *_ in rows
            }
            _await_delivery(receiver, recorded, read_outbox, log)
        _check_delivered(receiver.snapshot()[len(before) :], made)


def _config(task_id: str, config_id: str) -> str:
    return "inline" if config_id == task_id else config_id


def _kill_mid_attempt(
    receiver: Receiver, process: subprocess.Popen[bytes], queues: set[tuple[str, str]], log: Path
) -> float:
    """SIGKILL once every queue's head was tried (and refused), while an attempt to the
    hanging webhook is in flight (well within its 1 s timeout); when (epoch seconds)."""
    deadline = time.monotonic() + 20
    while True:
        tried = {hit.queue for hit in receiver.snapshot()}
        with receiver.lock:
            in_flight = time.monotonic() - receiver.held_since < 0.5 * PUSH_TIMEOUT
            if tried >= queues and in_flight:
                process.kill()
                killed_at = time.time()
                break
        assert time.monotonic() < deadline, f"not tried: {queues - tried}\n{log.read_text()}"
        time.sleep(0.005)
    process.wait(10)
    return killed_at


def _check_pending(
    before: list[Hit], rows: list[OutboxRow], made: dict[str, str], killed_at: float
) -> None:
    """What the killed server left: nothing delivered, every notification pending, the
    one it was sending held by its lease."""
    assert all(hit.status in (0, 503) for hit in before)
    assert {hit.token for hit in before} == {TOKEN}
    assert all(state == 0 for *_, state, _ in rows), rows
    recorded = {(task_id, _config(task_id, config), event) for task_id, config, event, *_ in rows}
    tried = {(*hit.queue, hit.notification_id) for hit in before}
    assert tried <= recorded, f"tried but not in the outbox: {tried - recorded}"
    assert {(task_id, config) for task_id, config, *_ in recorded} == _queues(made)
    per_queue = [sum(1 for *queue, _ in recorded if tuple(queue) == each) for each in _queues(made)]
    assert min(per_queue) >= 3, f"too few notifications per config: {per_queue}"
    held_task = next(hit.task_id for hit in before if hit.path == "/hook/held")
    head = next(row for row in rows if row[0] == held_task)
    # Its attempt was in flight: the lease outlives the process (a failed attempt has none).
    assert killed_at * 1e6 < head[4] <= (killed_at + LEASE) * 1e6, f"no lease held: {head}"


def _await_delivery(
    receiver: Receiver,
    recorded: set[tuple[str, str, str]],
    read_outbox: Callable[[], list[OutboxRow]],
    log: Path,
) -> None:
    """Wait until every recorded notification was answered 200 and the outbox is empty."""
    deadline = time.monotonic() + DEADLINE
    while True:
        delivered = {
            (*hit.queue, hit.notification_id) for hit in receiver.snapshot() if hit.status == 200
        }
        if recorded <= delivered and not read_outbox():
            return
        missing = sorted(recorded - delivered)
        assert time.monotonic() < deadline, f"not delivered: {missing}\n{log.read_text()}"
        time.sleep(0.1)


def _check_delivered(after: list[Hit], made: dict[str, str]) -> None:
    """Per (task, config): first deliveries in notification order, ending COMPLETED;
    a steps task's inline config heard every chunk, an ask task's both configs the answer."""
    first: dict[tuple[str, str], list[Hit]] = {}
    seen: set[tuple[str, str, str]] = set()
    for hit in after:
        assert hit.status == 200, hit
        assert hit.token == TOKEN, hit
        key = (*hit.queue, hit.notification_id)
        if key not in seen:
            seen.add(key)
            first.setdefault(hit.queue, []).append(hit)
    assert set(first) == _queues(made)
    for queue, hits in first.items():
        positions = [hit.position for hit in hits]
        assert positions == sorted(positions), f"{queue}: out of order: {positions}"
        last = hits[-1].body.get("statusUpdate", {})
        assert last.get("status", {}).get("state") == "TASK_STATE_COMPLETED", (queue, hits[-1])
        chunks = [hit for hit in hits if "artifactUpdate" in hit.body]
        states = [
            hit.body["statusUpdate"]["status"]["state"]
            for hit in hits
            if "statusUpdate" in hit.body
        ]
        task_id, config = queue
        if made[task_id] == "steps":
            assert len(chunks) == push_agent.STEPS, (queue, positions)
            assert "task" in hits[0].body, f"{queue}: the task's creation was not sent first"
        elif config == "inline":
            assert "TASK_STATE_INPUT_REQUIRED" in states, (queue, states)
            assert len(chunks) == 1, (queue, positions)
        else:  # made while the task waited: it hears the answer only
            assert "TASK_STATE_INPUT_REQUIRED" not in states, (queue, states)
            assert len(chunks) == 1, (queue, positions)


# ----------------------------------------------------------------------------- backends


def test_sqlite_push_survives_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "push.db"

    def read_outbox() -> list[OutboxRow]:
        with sqlite3.connect(path) as connection:
            found = connection.execute(
                "SELECT task_id, config_id, event_id, state, lease_until FROM push_outbox"
                " ORDER BY id"
            ).fetchall()
        connection.close()
        return [(row[0], row[1], row[2], row[3], row[4]) for row in found]

    _crash(f"sqlite:///{path}", read_outbox, tmp_path / "server.log")


def test_postgres_push_survives_sigkill(postgres_schema: str, tmp_path: Path) -> None:
    async def fetch() -> list[OutboxRow]:
        import asyncpg  # noqa: PLC0415 - the postgres extra

        connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
        try:
            found = await connection.fetch(
                "SELECT task_id, config_id, event_id, state, lease_until"
                f' FROM "{postgres_schema}".push_outbox ORDER BY id'
            )
        finally:
            await connection.close()
        return [(row[0], row[1], row[2], row[3], row[4]) for row in found]

    def read_outbox() -> list[OutboxRow]:
        return asyncio.run(fetch())

    store = with_params(POSTGRES_URL, schema=postgres_schema)
    _crash(store, read_outbox, tmp_path / "server.log")


@pytest.fixture
def postgres_schema() -> Iterator[str]:
    """A fresh schema on the real PostgreSQL server, dropped afterwards."""
    require_postgres()
    schema = asyncio.run(create_schema())
    try:
        yield schema
    finally:
        asyncio.run(drop_schema(schema))
