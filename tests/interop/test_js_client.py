"""The official @a2a-js/sdk client (1.3, run by Node) against a live Parley server on
127.0.0.1: every scenario (send, stream, get, cancel, subscribe, errors) on every
(version, binding) interface the hybrid card lists — JSON-RPC, HTTP+JSON and gRPC, in
1.0 and through the SDK's 0.3 compat layer.

The Node project is `tests/interop/js` (its lock file pins the SDK); it is installed once
per session with `npm ci` into its `node_modules` (git-ignored). Node 20+ and npm are
required: without them these tests fail, they are never skipped. One Node process runs
all scenarios of one (version, binding) (`scenarios.mjs`); the tests below check what
it observed, scenario by scenario.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.interop.agent import QUESTION, STREAM_CHUNKS
from tests.interop.live import Live

JS_DIR = Path(__file__).parent / "js"
MODES = [(v, b) for v in ("1.0", "0.3") for b in ("JSONRPC", "HTTP+JSON", "GRPC")]
TRANSPORTS = {
    "JSONRPC": ("JsonRpcTransport", "LegacyJsonRpcTransport"),
    "HTTP+JSON": ("RestTransport", "LegacyRestTransport"),
    "GRPC": ("GrpcTransport", "LegacyGrpcTransport"),
}
RUN_TIMEOUT_S = 120


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"the @a2a-js/sdk interop tests need Node.js 20+ and npm; {name!r} is not on PATH",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def node() -> str:
    """Node, with the project's locked packages installed (`npm ci`, once per session
    and only when the lock file is newer than the installed tree)."""
    node = _tool("node")
    major = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    if int(major.stdout.strip().lstrip("v").split(".")[0]) < 20:
        pytest.fail(f"the @a2a-js/sdk interop tests need Node.js 20+, not {major.stdout}")
    installed = JS_DIR / "node_modules" / ".package-lock.json"
    lock = JS_DIR / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        npm = _tool("npm")
        done = subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=JS_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci in {JS_DIR.name} failed:\n{done.stderr}", pytrace=False)
    return node


def run_scenarios(node: str, live: Live, version: str, binding: str) -> dict[str, Any]:
    """Run `scenarios.mjs` on one interface, opening the gates it asks for; its report."""
    report: dict[str, Any] = {}
    gates: list[str] = []
    with subprocess.Popen(
        [node, "scenarios.mjs", live.url, version, binding],
        cwd=JS_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        watchdog = threading.Timer(RUN_TIMEOUT_S, process.kill)
        watchdog.start()
        try:
            assert process.stdin is not None
            assert process.stdout is not None
            for line in process.stdout:
                message = json.loads(line)
                if "gate" in message:
                    gates.append(message["gate"])
                    live.probe.gate(message["gate"]).set()
                    process.stdin.write(f"{message['gate']}\n")
                    process.stdin.flush()
                else:
                    report = message
            stderr = process.stderr.read() if process.stderr else ""
            process.wait()
        finally:
            watchdog.cancel()
            for name in gates:
                live.probe.gate(name).set()
    assert "fatal" not in report, f"{report['fatal']}\n{stderr}"
    assert process.returncode == 0, stderr
    return report


@pytest.fixture(scope="module", params=MODES, ids=["-".join(mode) for mode in MODES])
def js(request: pytest.FixtureRequest, node: str, live: Live) -> dict[str, Any]:
    """What the JS client observed on one (version, binding): one Node run per mode."""
    version, binding = request.param
    report = run_scenarios(node, live, version, binding)
    return {"version": version, "binding": binding, **report}


def result(js: dict[str, Any], scenario: str) -> dict[str, Any]:
    observed: dict[str, Any] = js["results"][scenario]
    assert "failed" not in observed, observed["failed"]
    return observed


def test_the_sdk_dials_the_interface_under_test(js: dict[str, Any], live: Live) -> None:
    """The SDK builds the binding's transport of the version (0.3: its compat layer's
    `Legacy…Transport`) on the card's URL as given (gRPC: the bare `host:port`)."""
    current, legacy = TRANSPORTS[js["binding"]]
    assert js["transport"] == (legacy if js["version"] == "0.3" else current)
    if js["binding"] == "GRPC":
        assert "://" not in js["url"]
    else:
        assert js["url"] == live.url


def test_send(js: dict[str, Any]) -> None:
    """A blocking send returns the finished Task with its artifact and the user's message."""
    sent = result(js, "send")
    assert sent["state"] == "COMPLETED"
    assert sent["hasIds"]
    assert sent["artifacts"] == [sent["text"]]
    assert sent["firstMessage"] == [True, True, True]


def test_stream(js: dict[str, Any]) -> None:
    """The Task first, WORKING, the chunks in order (append after the first, the last one
    marked), then COMPLETED; GetTask then shows the whole artifact."""
    streamed = result(js, "stream")
    events = streamed["events"]
    chunks = len(STREAM_CHUNKS)
    assert [e["kind"] for e in events] == ["task", "statusUpdate"] + ["artifactUpdate"] * chunks + [
        "statusUpdate"
    ]
    assert (events[0]["state"], events[1]["state"], events[-1]["state"]) == (
        "SUBMITTED",
        "WORKING",
        "COMPLETED",
    )
    updates = events[2:-1]
    assert [u["text"] for u in updates] == list(STREAM_CHUNKS)
    # The SDK's 0.3 REST and gRPC transports drop `append` when they turn the 0.3 proto
    # event into their 1.0 type (`FromProto.taskArtifactUpdateEvent` in its compat
    # client copies `lastChunk` only); Parley sends it (the a2a-sdk tests read it).
    lost = js["version"] == "0.3" and js["binding"] != "JSONRPC"
    assert [u["append"] for u in updates] == ([False] * 3 if lost else [False, True, True])
    assert [u["lastChunk"] for u in updates] == [False, False, True]
    assert len({u["artifactId"] for u in updates}) == 1
    assert all(
        (e["taskId"], e["contextId"]) == (events[0]["id"], events[0]["contextId"])
        for e in events[1:]
    )
    assert streamed["stored"] == {"state": "COMPLETED", "artifacts": ["".join(STREAM_CHUNKS)]}


def test_get(js: dict[str, Any]) -> None:
    """A multi-turn task read back whole and with historyLength 1."""
    got = result(js, "get")
    assert got["asked"] == "INPUT_REQUIRED"
    assert got["same"] == [True, True]
    assert got["state"] == "COMPLETED"
    assert got["artifacts"] == ["Hello, Grace!"]
    assert got["history"] == [QUESTION, "Grace"]
    assert got["lastOne"] == got["lastOfFull"]


def test_cancel(js: dict[str, Any], live: Live) -> None:
    """Cancel of a working task answers it CANCELED, and the agent function was stopped."""
    cancelled = result(js, "cancel")
    assert cancelled["same"]
    assert (cancelled["state"], cancelled["stored"]) == ("CANCELED", "CANCELED")
    assert cancelled["key"] in live.probe.cancelled


def test_subscribe(js: dict[str, Any]) -> None:
    """The current Task (WORKING) first, then the artifact and COMPLETED."""
    subscribed = result(js, "subscribe")
    first, rest = subscribed["first"], subscribed["rest"]
    assert (first["kind"], first["id"], first["state"]) == (
        "task",
        subscribed["taskId"],
        "WORKING",
    )
    assert [e["kind"] for e in rest] == ["artifactUpdate", "statusUpdate"]
    assert rest[0]["text"] == f"result: {subscribed['key']}"
    assert rest[1]["state"] == "COMPLETED"
    assert {e["taskId"] for e in rest} == {subscribed["taskId"]}


JS_ERRORS = {
    "get-unknown": "TaskNotFoundError",
    "cancel-terminal": "TaskNotCancelableError",
    "subscribe-terminal": "UnsupportedOperationError",
    "send-terminal": "UnsupportedOperationError",
}


@pytest.mark.parametrize("case", list(JS_ERRORS))
def test_errors(js: dict[str, Any], case: str) -> None:
    """Parley's errors reach the JS client as the SDK's own error classes. One is wrapped:
    0.3 JSON-RPC answers an error found before a stream's first event inside the stream
    (as the official 0.3 SDK does, `JSONRPC_ERRORS_IN_STREAM`), and the SDK throws an
    error read from an SSE event as a plain Error whose `cause` is the decoded class."""
    raised = result(js, "errors")[case]
    in_stream = (js["version"], js["binding"], case) == ("0.3", "JSONRPC", "subscribe-terminal")
    if in_stream:
        assert (raised["thrown"], raised["cause"]) == ("Error", JS_ERRORS[case])
    else:
        assert raised["thrown"] == JS_ERRORS[case], raised["message"]
