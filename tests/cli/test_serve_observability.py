"""`parley serve --otel --metrics`: the real command, its spans printed by the console
exporter, its metrics scraped at `/metrics`; `/readyz` with and without the options."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.ports import free_port

ROOT = Path(__file__).parents[2]
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}


def _wait_for_card(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            httpx.get(url + "/.well-known/agent-card.json", timeout=1).raise_for_status()
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


def _grpc_send(address: str, text: str) -> Any:
    """A blocking SendMessage over gRPC with the official SDK's 1.0 stub."""
    import grpc  # noqa: PLC0415
    from a2a.types import a2a_pb2 as pb  # noqa: PLC0415
    from a2a.types import a2a_pb2_grpc  # noqa: PLC0415

    with grpc.insecure_channel(address) as channel:
        request = pb.SendMessageRequest(
            message=pb.Message(message_id="g", role=pb.ROLE_USER, parts=[pb.Part(text=text)])
        )
        return a2a_pb2_grpc.A2AServiceStub(channel).SendMessage(request, timeout=10)


def _serve(port: int, *options: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "parley.cli.main", "serve", "examples.echo:agent"]
    command += ["--port", str(port), "--store", "memory", *options]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def test_otel_and_metrics_on_every_binding() -> None:
    port, grpc_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_SERVICE_NAME": "echo-under-test",
    }
    options = ("--otel", "--metrics", "--grpc-port", str(grpc_port))
    with _serve(port, *options, env=env) as process:
        try:
            _wait_for_card(url, process)
            headers = {"A2A-Version": "1.0", "traceparent": TRACEPARENT}
            answer = httpx.post(url, json=SEND, headers=headers, timeout=5).json()
            assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            _grpc_send(f"127.0.0.1:{grpc_port}", "over grpc")
            scrape = httpx.get(f"{url}/metrics", timeout=5)
            ready = httpx.get(f"{url}/readyz", timeout=5)
        finally:
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=20)
    assert process.returncode in (0, -signal.SIGTERM), err.decode()
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"store": "ok"}}
    assert scrape.status_code == 200
    metrics = scrape.text
    assert 'a2a_binding="JSONRPC"' in metrics
    assert 'a2a_binding="GRPC"' in metrics
    spans = out.decode()
    assert '"name": "A2AService/SendMessage"' in spans
    assert f'"trace_id": "0x{TRACE_ID}"' in spans  # the caller's trace continued
    assert '"rpc.system": "grpc"' in spans
    assert '"service.name": "echo-under-test"' in spans


def test_without_the_options_nothing_is_observed_but_readiness() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with _serve(port) as process:
        try:
            _wait_for_card(url, process)
            scrape = httpx.get(f"{url}/metrics", timeout=5)
            ready = httpx.get(f"{url}/readyz", timeout=5)
        finally:
            process.send_signal(signal.SIGTERM)
            out, _ = process.communicate(timeout=20)
    assert scrape.status_code == 404
    assert ready.status_code == 200
    assert b"trace_id" not in out  # no span printed (the log may go to stdout)


def test_an_unknown_exporter_is_one_clear_line() -> None:
    port = free_port()
    env = {"OTEL_TRACES_EXPORTER": "zipkin"}
    with _serve(port, "--otel", env=env) as process:
        _, err = process.communicate(timeout=20)
    assert process.returncode != 0
    assert "OTEL_TRACES_EXPORTER: 'zipkin' is not otlp, console or none" in err.decode()
