"""`parley serve`: the real command in a subprocess, from start to a graceful stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from msgspec.structs import replace

from parley.cli.main import build_parser
from parley.cli.serve import make_app, make_handler, run_serve
from parley.cli.serve_grpc import with_grpc
from parley.cli.targets import load_target
from parley.model import AgentSkill, GetExtendedAgentCardRequest
from parley.server.agent import Agent
from parley.server.task_context import TaskContext
from tests.ports import free_port
from tests.server.support import ALICE, run

ROOT = Path(__file__).parents[2]


def _wait_for_card(url: str, process: subprocess.Popen[bytes]) -> httpx.Response:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            return httpx.get(url + "/.well-known/agent-card.json", timeout=1)
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


def test_serve_answers_and_stops_gracefully() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "parley.cli.main", "serve", "examples.echo:agent"]
    command += ["--port", str(port), "--log-level", "info", "--store", "memory"]
    with subprocess.Popen(
        command, cwd=ROOT, stderr=subprocess.PIPE, env=os.environ.copy()
    ) as process:
        code = _exercise(url, process)
        log = process.stderr.read().decode() if process.stderr else ""
    # uvicorn shuts down gracefully, then re-raises the signal as its exit status.
    assert code in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in log


def _exercise(url: str, process: subprocess.Popen[bytes]) -> int:
    try:
        card = _wait_for_card(url, process).json()
        assert card["name"] == "Echo"
        assert card["supportedInterfaces"][0]["url"] == url
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            },
        }
        answer = httpx.post(url, json=body, headers={"A2A-Version": "1.0"}, timeout=5).json()
        task = answer["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [{"text": "hi"}]
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=20)
    return code


@pytest.mark.parametrize("spec", ["nocolon", "examples.echo:missing", "no_such_module:agent"])
def test_bad_targets_give_one_clear_line(spec: str) -> None:
    with pytest.raises(SystemExit) as raised:
        load_target(spec)
    assert str(raised.value).startswith("parley serve:")


def test_an_asgi_app_is_served_as_is() -> None:
    async def app(scope: object, receive: object, send: object) -> None:
        return None

    assert make_app(app, "http://x", "hybrid") is app


# ---------------------------------------------------------------- gRPC beside HTTP


def _grpc_send(address: str, text: str, *, wait: bool = True) -> Any:
    """A blocking SendMessage over gRPC with the official SDK's 1.0 stub (by default
    waiting for the server to be up)."""
    import grpc  # noqa: PLC0415
    from a2a.types import a2a_pb2 as pb  # noqa: PLC0415
    from a2a.types import a2a_pb2_grpc  # noqa: PLC0415

    with grpc.insecure_channel(address) as channel:
        request = pb.SendMessageRequest(
            message=pb.Message(message_id="g", role=pb.ROLE_USER, parts=[pb.Part(text=text)])
        )
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        return stub.SendMessage(request, timeout=10, wait_for_ready=wait)


def test_serve_with_grpc_beside_http() -> None:
    port, grpc_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "parley.cli.main", "serve", "examples.echo:agent"]
    command += ["--port", str(port), "--grpc-port", str(grpc_port), "--store", "memory"]
    with subprocess.Popen(
        command, cwd=ROOT, stderr=subprocess.PIPE, env=os.environ.copy()
    ) as process:
        try:
            card = _wait_for_card(url, process).json()
            answer = _grpc_send(f"127.0.0.1:{grpc_port}", "over grpc")
        finally:
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=20)
    assert code in (0, -signal.SIGTERM)
    grpc_interfaces = [
        (i["url"], i["protocolVersion"])
        for i in card["supportedInterfaces"]
        if i["protocolBinding"] == "GRPC"
    ]
    assert grpc_interfaces == [
        (f"127.0.0.1:{grpc_port}", "1.0"),
        (f"127.0.0.1:{grpc_port}", "0.3"),
    ]
    assert {"url": f"127.0.0.1:{grpc_port}", "transport": "GRPC"} in card["additionalInterfaces"]
    assert answer.task.artifacts[0].parts[0].text == "over grpc"


def _run_in_thread(server: Any, sock: socket.socket) -> threading.Thread:
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive():
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    return thread


def _listening_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


def test_grpc_starts_after_the_app_and_stops_before_it() -> None:
    import grpc  # noqa: PLC0415
    import uvicorn  # noqa: PLC0415

    from parley.grpc import GrpcServer  # noqa: PLC0415

    handler = make_handler(load_target("examples.echo:agent"), "http://127.0.0.1:1")
    grpc_server = GrpcServer(handler, port=free_port())
    config = uvicorn.Config(make_app(handler, "http://x", "hybrid"), log_config=None)
    server, failures = with_grpc(config, grpc_server)
    with _listening_socket() as sock:
        thread = _run_in_thread(server, sock)
        address = grpc_server.address
        assert _grpc_send(address, "up").task.artifacts[0].parts[0].text == "up"
        server.should_exit = True
        thread.join(10)
    assert not failures
    with pytest.raises(grpc.RpcError):
        _grpc_send(address, "down", wait=False)


def test_a_grpc_port_in_use_stops_the_server() -> None:
    import uvicorn  # noqa: PLC0415

    from parley.grpc import GrpcServer  # noqa: PLC0415

    handler = make_handler(load_target("examples.echo:agent"), "http://127.0.0.1:1")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        grpc_server = GrpcServer(handler, port=taken.getsockname()[1])
        config = uvicorn.Config(make_app(handler, "http://x", "hybrid"), log_config=None)
        server, failures = with_grpc(config, grpc_server)
        with _listening_socket() as sock:
            server.run(sockets=[sock])
    assert len(failures) == 1


def test_grpc_needs_an_agent_or_a_handler() -> None:
    arguments = build_parser().parse_args(
        [
            "serve",
            "tests.cli.test_serve:asgi_app",
            "--port",
            str(free_port()),
            "--grpc-port",
            str(free_port()),
            "--log-level",
            "warning",
        ]
    )
    with pytest.raises(SystemExit) as raised:
        run_serve(arguments)
    assert str(raised.value) == "parley serve: --grpc-port needs an agent or a request handler"


async def asgi_app(scope: object, receive: object, send: object) -> None:
    """An ASGI app target (gRPC cannot serve it)."""


def test_an_agent_declares_and_serves_its_extended_card() -> None:
    """`Agent(extended_card=...)`: the public card declares it, the service serves the card
    the function makes of the public one, with the same push capability."""
    agent = Agent("Extended", push_notifications=True)
    agent.skill()(_noop)
    skill = AgentSkill(id="admin", name="Admin", description="More", tags=("admin",))
    agent.extended_card = lambda card: replace(card, skills=(*card.skills, skill))
    handler = make_handler(agent, "http://127.0.0.1:1", push=False)
    assert handler.card.capabilities.extended_agent_card
    request = GetExtendedAgentCardRequest()
    extended = run(handler.get_extended_agent_card(ALICE, request))
    assert [s.id for s in extended.skills] == ["_noop", "admin"]
    assert extended.capabilities.extended_agent_card
    assert not extended.capabilities.push_notifications
    assert not Agent("Plain").card("http://x").capabilities.extended_agent_card


async def _noop(task: TaskContext) -> str:
    return "ok"
