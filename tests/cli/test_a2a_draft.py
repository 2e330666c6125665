"""`parley serve --a2a-1.1-draft`, as a user runs it: the card lists 1.1 interfaces (HTTP
and gRPC) after the 1.0 ones, a 1.1 request gets a task generation on each binding, a
1.0 request none; without the option, 1.1 is refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import httpx

from parley.wire.v1_1._pb import a2a_pb2 as draft_pb
from tests.ports import free_port

ROOT = Path(__file__).parents[2]


@contextmanager
def served(*options: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """`parley serve examples.echo:agent` with `options`: its URL and card; stopped after."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "parley.cli.main", "serve", "examples.echo:agent"]
    command += ["--port", str(port), "--store", "memory", *options]
    with subprocess.Popen(
        command, cwd=ROOT, stderr=subprocess.PIPE, env=os.environ.copy()
    ) as process:
        try:
            deadline = time.monotonic() + 20
            while True:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                try:
                    card = httpx.get(url + "/.well-known/agent-card.json", timeout=1).json()
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "the server did not start"
                    time.sleep(0.1)
            yield url, card
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=20)


def send(url: str, version: str) -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    answer: dict[str, Any] = httpx.post(
        url, json=body, headers={"A2A-Version": version}, timeout=10
    ).json()
    return answer


def test_the_option_serves_the_draft_on_every_binding() -> None:
    grpc_port = free_port()
    with served("--a2a-1.1-draft", "--grpc-port", str(grpc_port)) as (url, card):
        draft = send(url, "1.1")["result"]["task"]
        released = send(url, "1.0")["result"]["task"]
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            call = channel.unary_unary(
                "/lf.a2a.v1.A2AService/SendMessage",
                request_serializer=draft_pb.SendMessageRequest.SerializeToString,
                response_deserializer=draft_pb.SendMessageResponse.FromString,
            )
            request = draft_pb.SendMessageRequest()
            request.message.message_id = str(uuid.uuid4())
            request.message.role = 1
            request.message.parts.add(text="hi")
            over_grpc = call(request, metadata=(("a2a-version", "1.1"),), timeout=10)
    listed = [(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]]
    assert [v for _, v in listed] == ["1.0"] * 3 + ["1.1"] * 3 + ["0.3"] * 3
    assert int(draft["generation"]) >= 1
    assert "generation" not in released
    assert over_grpc.task.generation >= 1


def test_without_the_option_1_1_is_refused() -> None:
    with served() as (url, card):
        answer = send(url, "1.1")
    assert answer["error"]["code"] == -32009
    assert {i["protocolVersion"] for i in card["supportedInterfaces"]} == {"1.0", "0.3"}
