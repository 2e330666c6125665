"""`from_executor`'s agent as a target: `parley serve` serves it (its card, both versions),
the card keeps the SDK card's content with Parley's interfaces, an SDK error fails the task
with its message, and importing Parley imports no a2a-sdk."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import (
    AgentProvider,
    APIKeySecurityScheme,
    SecurityRequirement,
    SecurityScheme,
)
from a2a.utils.errors import UnsupportedOperationError as SdkUnsupportedOperationError

from parley.adapters.a2a_sdk import from_executor
from parley.cli.serve import make_handler
from parley.client import Client, user_message
from parley.model import APIKeySecurityScheme as ApiKey
from parley.model import Task, TaskState, TextPart
from parley.server.agent import STREAM_RESUME_URI, Agent
from parley.server.auth import ApiKeys, Security
from parley.server.servable import is_servable
from parley.server.service import AgentService
from tests.adapters.sdk_agent import ScenarioExecutor, on_parley, sdk_card
from tests.ports import free_port
from tests.serving import wait_for_card

ROOT = Path(__file__).parents[2]


def test_parley_serve_serves_it() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "parley.cli.main", "serve", "tests.adapters.sdk_agent:agent"]
    command += ["--port", str(port), "--store", "memory", "--log-level", "warning"]
    with subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, env=os.environ.copy()) as run:
        try:
            wait_for_card(url, run, lambda: run.stderr.read().decode() if run.stderr else "")
            card = httpx.get(url + "/.well-known/agent-card.json", timeout=5).json()
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {
                        "messageId": "m",
                        "role": "ROLE_USER",
                        "parts": [{"text": "echo served"}],
                    }
                },
            }
            answer = httpx.post(url, json=body, headers={"A2A-Version": "1.0"}, timeout=5)
        finally:
            run.send_signal(signal.SIGTERM)
            run.wait(timeout=20)
    assert card["name"] == "Scenario agent"
    assert card["version"] == "2.1.0"
    assert card["url"] == url  # the legacy members a 0.3 client reads
    assert {i["url"] for i in card["supportedInterfaces"]} == {url}
    task = answer.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "served"}]


def test_the_card_is_the_sdk_cards_with_parleys_interfaces() -> None:
    declared = sdk_card("http://elsewhere.example")
    declared.provider.CopyFrom(AgentProvider(organization="Acme", url="https://acme.example"))
    declared.icon_url = "https://acme.example/icon.png"
    declared.security_schemes["key"].CopyFrom(
        SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-Key")
        )
    )
    declared.security_requirements.append(SecurityRequirement(schemes={"key": {"list": []}}))
    agent = from_executor(ScenarioExecutor(), card=declared)
    card = agent.card("https://agent.example", grpc_address="agent.example:50051")

    assert (card.name, card.description, card.version) == (
        "Scenario agent",
        "Echoes, streams, asks and waits.",
        "2.1.0",
    )
    assert [skill.id for skill in card.skills] == ["scenarios"]
    assert card.default_input_modes == card.default_output_modes == ("text/plain",)
    assert card.provider is not None
    assert card.provider.organization == "Acme"
    assert card.icon_url == "https://acme.example/icon.png"
    assert card.capabilities.streaming
    assert STREAM_RESUME_URI in {extension.uri for extension in card.capabilities.extensions}
    served = [(i.protocol_version, i.protocol_binding) for i in card.supported_interfaces]
    assert served == [
        (version, binding)
        for version in ("1.0", "0.3")
        for binding in ("JSONRPC", "HTTP+JSON", "GRPC")
    ]
    assert all("elsewhere" not in i.url for i in card.supported_interfaces)
    scheme = card.security_schemes["key"]  # declared as the SDK's server declares it
    assert isinstance(scheme, ApiKey)
    assert scheme.name == "X-Key"
    assert [dict(r.schemes) for r in card.security_requirements] == [{"key": ()}]


def test_parley_security_replaces_the_declared_one() -> None:
    security = Security(ApiKeys({"secret": "alice"}, name="X-Token", scheme_name="token"))
    agent = from_executor(ScenarioExecutor(), card=sdk_card("http://x"), security=security)
    card = agent.card("http://agent")
    assert list(card.security_schemes) == ["token"]
    service = make_handler(agent, "http://agent")
    assert isinstance(service, AgentService)
    assert list(service.card.security_schemes) == ["token"]


def test_hosts_take_it_as_an_agent() -> None:
    agent = from_executor(ScenarioExecutor(), card=sdk_card("http://x"))
    assert is_servable(agent)
    assert is_servable(Agent("plain"))
    assert not is_servable(Agent)  # the class, not an agent
    assert isinstance(make_handler(agent, "http://agent"), AgentService)


def test_importing_parley_imports_no_a2a_sdk() -> None:
    code = (
        "import sys, parley, parley.server.service, parley.cli.serve, parley.adapters; "
        "print(sorted(m for m in sys.modules if m == 'a2a' or m.startswith('a2a.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, text=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


class Refusing(AgentExecutor):  # type: ignore[misc]  # the SDK is untyped here
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise SdkUnsupportedOperationError("Only on Tuesdays")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise SdkUnsupportedOperationError("Never")


@pytest.mark.anyio
async def test_an_sdk_error_fails_the_task_with_its_message() -> None:
    """Unlike the SDK's server, which answers an error raised before any event as the
    error, Parley records the task as FAILED with the error's message (docs/migrating.md)."""
    async with on_parley(Refusing()) as url, Client.connect(url) as client:
        task = await client.send(user_message("echo x"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert task.status.message.parts == (TextPart(text="Only on Tuesdays"),)
