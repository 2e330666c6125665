"""`parley serve`'s log lines: Parley's own at the level asked (where it serves, where
tasks are stored, an agent's failure with its traceback), time-stamped; `--log-format
json` one object a line with the task and context ids of the run in progress and the
trace id of a recording OpenTelemetry span; secrets redacted in either."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import httpx
from opentelemetry.sdk.trace import TracerProvider

from parley.cli.log_format import JsonFormatter
from parley.server.agent import Agent
from parley.server.log_context import TASK_IDS
from parley.server.task_context import TaskContext
from tests.cli.runner import start
from tests.cli.test_serve_hosts import _wait_until_up
from tests.ports import free_port

agent = Agent("Logger", description="Logs a line, then fails.")
KEY = "k-5ecret-value"


@agent.skill()
async def stumble(task: TaskContext) -> str:
    """Log a line, then fail."""
    logging.getLogger("tests.agent").info("looking at %s", task.text)
    raise RuntimeError("stumbled")


def _send(url: str) -> dict[str, Any]:
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "it"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    headers = {"A2A-Version": "1.0", "X-API-Key": KEY}
    answer: dict[str, Any] = httpx.post(
        url + f"/?api_key={KEY}", json=body, headers=headers, timeout=10
    ).json()
    return answer


def _serve_and_send(*options: str) -> tuple[dict[str, Any], str, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    target = "tests.cli.test_serve_logs:agent"
    process = start(
        "serve", target, "--port", str(port), "--store", "memory", "--api-key", f"{KEY}:ann",
        *options,
    )  # fmt: skip
    try:
        _wait_until_up(url, process)
        answer = _send(url)
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    return answer, out, err


def test_json_lines_carry_the_task_and_context_ids_and_no_secret() -> None:
    answer, out, err = _serve_and_send("--log-format", "json", "--log-level", "debug")
    task = answer["result"]["task"]
    lines = [json.loads(line) for line in err.splitlines()]  # every line is JSON
    messages = [line["message"] for line in lines]
    assert "tasks are stored in memory" in messages
    assert any(m.startswith("Parley ") and " serving tests.cli" in m for m in messages)
    ids = {"task_id": task["id"], "context_id": task["contextId"]}
    agent_line = next(line for line in lines if line["message"] == "looking at it")
    assert agent_line | ids == agent_line  # the agent's own line, inside its run
    failure = next(line for line in lines if line["message"].startswith("agent failed"))
    assert (failure["level"], failure["logger"]) == ("ERROR", "parley.server")
    assert failure | ids == failure
    assert failure["exception"].endswith("RuntimeError: stumbled")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", failure["time"])
    access = [json.loads(line) for line in out.splitlines()]
    assert access[-1] | {"method": "POST", "status": 200} == access[-1]
    assert access[-1]["path"] == "/?api_key=[redacted]"
    assert KEY not in out + err


def test_text_lines_are_time_stamped_and_follow_the_level() -> None:
    _, _, err = _serve_and_send()
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d "
    assert re.search(stamp + r"INFO: +tasks are stored in memory\n", err)
    assert re.search(stamp + r"ERROR: +agent failed on task [0-9a-f-]+\nTraceback", err)
    _, _, quiet = _serve_and_send("--log-level", "error")
    assert "tasks are stored" not in quiet
    assert "agent failed on task" in quiet
    assert KEY not in err + quiet


def _format(formatter: logging.Formatter, message: str) -> dict[str, Any]:
    record = logging.LogRecord("parley", logging.INFO, __file__, 1, message, None, None)
    line: dict[str, Any] = json.loads(formatter.format(record))
    return line


def test_the_trace_id_is_the_recording_spans_and_left_out_otherwise() -> None:
    formatter = JsonFormatter()
    tracer = TracerProvider().get_tracer("tests")
    outside = _format(formatter, "outside")
    with tracer.start_as_current_span("call") as span:
        inside = _format(formatter, "inside")
    context = span.get_span_context()
    assert "trace_id" not in outside
    assert "task_id" not in outside
    assert inside["trace_id"] == format(context.trace_id, "032x")
    assert inside["span_id"] == format(context.span_id, "016x")


def test_a_records_own_ids_win_over_the_runs() -> None:
    formatter = JsonFormatter()
    token = TASK_IDS.set(("t-run", "c-run"))
    try:
        record = logging.LogRecord("parley", logging.INFO, __file__, 1, "x", None, None)
        record.task_id = "t-own"
        line = json.loads(formatter.format(record))
        plain = _format(formatter, "y")
    finally:
        TASK_IDS.reset(token)
    assert (line["task_id"], line["context_id"]) == ("t-own", "c-run")
    assert (plain["task_id"], plain["context_id"]) == ("t-run", "c-run")
