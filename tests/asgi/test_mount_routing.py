"""How `Mounted` (`parley.asgi.mount`) routes raw ASGI events, in process over memory
stores: a sub-path reaches its agent with `/NAME` added to the root path (under an outer
root path too, and from `path` when the server gives no `raw_path`), the root lists the
agents (as a page to a browser), `/healthz` always answers, a foreign host and an unknown
path get errors, lifespan starts and stops every agent, a websocket is closed. The
end-to-end behaviour is tests/asgi/test_mount."""

from __future__ import annotations

import json
from typing import Any

import pytest

from parley.asgi import build_app
from parley.asgi.http import Message
from parley.asgi.mount import Mounted, mount_agents
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.server.support import run

BROWSER = "text/html,application/xhtml+xml,*/*;q=0.8"


def service(name: str) -> AgentService:
    agent = Agent(name)

    @agent.skill()
    async def answer(task: TaskContext) -> str:
        return f"{name}: {task.text}"

    return AgentService(agent.executor(), agent.card(f"http://test/{name.lower()}"))


def mounted(**options: Any) -> Mounted:
    apps = {name: build_app(service(name.title())) for name in ("echo", "shout")}
    return mount_agents(apps, **options)


class Recorder:
    """An app standing in for an agent's: records the scope it was called with."""

    def __init__(self) -> None:
        self.scopes: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: object, send: Any) -> None:
        self.scopes.append(scope)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def http(
    path: str,
    *,
    method: str = "GET",
    headers: list[tuple[bytes, bytes]] | None = None,
    **scope: Any,
) -> dict[str, Any]:
    base: dict[str, Any] = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers or [(b"host", b"test")],
    }
    return base | scope


async def call(app: Any, scope: dict[str, Any], *incoming: Message) -> list[Message]:
    sent: list[Message] = []
    queue = list(incoming) or [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> Message:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def answer(sent: list[Message]) -> tuple[int, dict[bytes, bytes], bytes]:
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body


def with_recorder(**options: Any) -> tuple[Mounted, Recorder]:
    app = mounted(**options)
    recorder = Recorder()
    app.apps["echo"] = recorder  # type: ignore[assignment]
    return app, recorder


@pytest.mark.parametrize(
    ("scope", "root"),
    [
        ({}, "/echo"),
        ({"root_path": "/outer", "raw_path": b"/outer/echo/tasks/t"}, "/outer/echo"),
        ({"raw_path": None}, "/echo"),
        ({"raw_path": b"/echo/tasks/t?x=1"}, "/echo"),
    ],
    ids=["plain", "outer-root", "no-raw-path", "query-in-raw-path"],
)
def test_a_sub_path_goes_to_its_agent_with_its_root_path(scope: dict[str, Any], root: str) -> None:
    app, recorder = with_recorder()
    status, _, _ = answer(run(call(app, http("/echo/tasks/t", **scope))))
    assert status == 204
    [seen] = recorder.scopes
    assert seen["root_path"] == root


def test_an_agents_card_is_served_under_its_name() -> None:
    status, _, body = answer(run(call(mounted(), http("/shout/.well-known/agent-card.json"))))
    assert status == 200
    assert json.loads(body)["name"] == "Shout"


def test_the_root_lists_the_agents_with_their_cards() -> None:
    status, headers, body = answer(run(call(mounted(base_url="https://a.example/"), http("/"))))
    assert status == 200
    assert headers[b"content-type"].startswith(b"application/json")
    assert json.loads(body) == {
        "agents": [
            {
                "name": "echo",
                "agentName": "Echo",
                "card": "https://a.example/echo/.well-known/agent-card.json",
            },
            {
                "name": "shout",
                "agentName": "Shout",
                "card": "https://a.example/shout/.well-known/agent-card.json",
            },
        ]
    }


def test_a_browser_at_the_root_gets_a_page_linking_each_agent() -> None:
    headers = [(b"host", b"test"), (b"accept", BROWSER.encode())]
    status, sent_headers, body = answer(
        run(call(mounted(), http("/", headers=headers, root_path="/r", raw_path=b"/r/")))
    )
    assert status == 200
    assert sent_headers[b"content-type"].startswith(b"text/html")
    assert sent_headers[b"vary"] == b"Accept"
    assert int(sent_headers[b"content-length"]) == len(body)
    assert b'<a href="/r/echo/">Echo</a>' in body


def test_health_answers_whatever_the_host() -> None:
    app = mounted(allowed_hosts=["agents.example"])
    scope = http("/healthz", headers=[(b"host", b"evil.example")])
    status, _, body = answer(run(call(app, scope)))
    assert (status, json.loads(body)) == (200, {"status": "ok"})


def test_a_foreign_host_gets_no_index() -> None:
    app = mounted(allowed_hosts=["agents.example"])
    status, _, body = answer(run(call(app, http("/", headers=[(b"host", b"evil.example")]))))
    assert status == 400
    assert json.loads(body)["error"]["status"] == "INVALID_ARGUMENT"
    allowed = http("/", headers=[(b"host", b"agents.example:8080")])
    assert answer(run(call(app, allowed)))[0] == 200


@pytest.mark.parametrize(("path", "method"), [("/nobody/x", "GET"), ("/", "POST"), ("/x", "GET")])
def test_anything_else_is_not_found_naming_the_agents(path: str, method: str) -> None:
    status, _, body = answer(run(call(mounted(), http(path, method=method))))
    assert status == 404
    error = json.loads(body)["error"]
    assert error["status"] == "NOT_FOUND"
    assert "/echo, /shout" in error["message"]


def test_a_websocket_is_closed() -> None:
    sent = run(call(mounted(), {"type": "websocket", "path": "/echo/"}))
    assert sent == [{"type": "websocket.close", "code": 1000}]


def test_other_scope_types_are_ignored() -> None:
    assert run(call(mounted(), {"type": "unknown"})) == []


def test_lifespan_starts_and_stops_every_agent() -> None:
    app = mounted()
    events = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent = run(call(app, {"type": "lifespan"}, *events))
    assert [m["type"] for m in sent] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]


def test_mounting_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one agent"):
        Mounted({})


def test_names_are_checked_when_mounting() -> None:
    with pytest.raises(ValueError, match="agent name"):
        Mounted({"Bad Name": build_app(service("X"))})
