"""An agent mounted under a path of a FastAPI app (`agent.asgi()`, `mount_into`), served
by a real uvicorn: the card names the URLs under the mount (R-CARD-5..8: a client that
follows it reaches the agent), send and stream work through the mount in both bindings,
and a durable store is opened though the host never runs a mounted app's lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from parley import Agent, AgentApp, Client, Task, TaskContext, TaskState, mount_into
from parley.model import TaskArtifactUpdateEvent
from parley.protocol.negotiation import Version
from parley.server.stores.base import StoreClosedError
from tests.asgi.live import running
from tests.contracts.support import run


def make_agent() -> Agent:
    agent = Agent("Mounted", description="Answers from under /agent")

    @agent.skill()
    async def answer(task: TaskContext) -> str:
        return f"answered: {task.text}"

    @agent.skill("count")
    async def count(task: TaskContext) -> AsyncIterator[str]:
        for number in range(1, 4):
            yield f"{number} "

    return agent


def sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'embedded.db'}"


def closed(agent_app: AgentApp) -> bool:
    """Whether the agent's store refuses to be read (closed), as after a shutdown."""
    try:
        run(agent_app.service.store.get(("", ""), "nothing"))
    except StoreClosedError:
        return True
    return False


async def use_through_mount(base: str, bindings: tuple[str, ...]) -> tuple[str, str, str]:
    """The card's JSON-RPC URL, a send's answer and a stream's text, through `base`."""
    async with Client.connect(base, bindings=bindings) as client:
        answered = await client.send("hi")
        streamed = ""
        async with client.stream("go", skill="count") as stream:
            async for item in stream:
                if isinstance(item, TaskArtifactUpdateEvent):
                    streamed += item.artifact.text
        assert isinstance(answered, Task)
        assert answered.status.state is TaskState.COMPLETED
        return client.interface.url if client.interface else "", answered.text, streamed


@pytest.mark.parametrize("bindings", [("JSONRPC",), ("HTTP+JSON",)])
def test_a_mounted_agent_names_its_mount_in_its_card_and_answers_through_it(
    tmp_path: Path, bindings: tuple[str, ...]
) -> None:
    app = FastAPI()
    app.mount("/agent", make_agent().asgi(store=sqlite(tmp_path)))

    @app.get("/hello")
    async def hello() -> dict[str, str]:
        return {"hello": "world"}

    with running(app) as url:
        interface, answered, streamed = run(use_through_mount(f"{url}/agent", bindings))
        own = httpx.get(f"{url}/hello").json()
    assert interface == f"{url}/agent/"
    assert answered == "answered: hi"
    assert streamed == "1 2 3 "
    assert own == {"hello": "world"}  # the host's own routes are untouched


def test_every_interface_of_the_card_is_under_the_mount(tmp_path: Path) -> None:
    app = FastAPI()
    app.mount("/agent", make_agent().asgi())
    with running(app) as url:
        card = httpx.get(f"{url}/agent/.well-known/agent-card.json").json()
        v03 = httpx.get(f"{url}/agent/.well-known/agent-card.json", headers={"A2A-Version": "0.3"})
    urls = {interface["url"] for interface in card["supportedInterfaces"]}
    assert urls == {f"{url}/agent/"}
    assert v03.json()["url"] == f"{url}/agent/"


def test_the_card_follows_the_host_a_client_used(tmp_path: Path) -> None:
    app = FastAPI()
    app.mount("/agent", make_agent().asgi())
    with running(app) as url:
        port = url.rsplit(":", 1)[1]
        card = httpx.get(f"http://localhost:{port}/agent/.well-known/agent-card.json").json()
        spoofed = httpx.get(
            f"{url}/agent/.well-known/agent-card.json", headers={"Host": "x/<y>"}
        ).json()
    assert card["supportedInterfaces"][0]["url"] == f"http://localhost:{port}/agent/"
    assert spoofed["supportedInterfaces"][0]["url"] == f"http://127.0.0.1:{port}/agent/"


def test_a_given_public_url_is_the_cards(tmp_path: Path) -> None:
    app = FastAPI()
    app.mount("/agent", make_agent().asgi("https://agents.example/agent/"))
    with running(app) as url:
        card = httpx.get(f"{url}/agent/.well-known/agent-card.json").json()
    assert card["supportedInterfaces"][0]["url"] == "https://agents.example/agent/"


def test_mount_into_answers_the_mount_path_without_a_slash_and_wires_the_lifespan(
    tmp_path: Path,
) -> None:
    app = FastAPI()
    agent_app = mount_into(app, "/agent", make_agent().asgi(store=sqlite(tmp_path)))
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "x"}]}},
    }
    headers = {"A2A-Version": "1.0"}
    with running(app) as url:
        opened_at_start = agent_app.started and (tmp_path / "embedded.db").exists()
        bare = httpx.post(f"{url}/agent", json=body, headers=headers)
        slashed = httpx.post(f"{url}/agent/", json=body, headers=headers)
        card = httpx.get(f"{url}/agent/.well-known/agent-card.json").json()
    assert opened_at_start
    assert closed(agent_app)
    assert bare.status_code == 200, bare.text
    assert bare.json()["result"]["task"]["artifacts"][0]["parts"][0]["text"] == "answered: x"
    assert slashed.status_code == 200
    assert card["supportedInterfaces"][0]["url"] == f"{url}/agent/"


def test_without_mount_into_the_mount_path_without_a_slash_is_redirected(
    tmp_path: Path,
) -> None:
    """What the card's final `/` avoids: the host's own redirect (documented)."""
    app = FastAPI()
    app.mount("/agent", make_agent().asgi())
    with running(app) as url:
        bare = httpx.post(f"{url}/agent", json={})
    assert bare.status_code == 307


def test_the_lifespan_of_the_host_opens_and_closes_the_store(tmp_path: Path) -> None:
    agent_app = make_agent().asgi(store=sqlite(tmp_path))
    app = FastAPI(lifespan=agent_app.lifespan)
    app.mount("/agent", agent_app)
    assert closed(agent_app)
    with running(app) as url:
        opened = agent_app.started and (tmp_path / "embedded.db").exists()
        _, answered, _ = run(use_through_mount(f"{url}/agent", ("JSONRPC",)))
    assert opened
    assert answered == "answered: hi"
    assert closed(agent_app)


def test_served_on_its_own_with_a_root_path(tmp_path: Path) -> None:
    """`uvicorn --root-path /agents/one`: the card names the root path."""
    agent_app = make_agent().asgi(store=sqlite(tmp_path))

    async def behind_proxy(scope: dict[str, object], receive: object, send: object) -> None:
        await agent_app({**scope, "root_path": "/agents/one"}, receive, send)  # type: ignore[arg-type]

    async def scenario() -> tuple[str, str]:
        transport = httpx.ASGITransport(app=behind_proxy)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="https://a.example") as http:
            card = (await http.get("/agents/one/.well-known/agent-card.json")).json()
            async with Client.connect(
                "https://a.example/agents/one", http=http, versions=(Version.V0_3,)
            ) as client:
                answered = await client.send("ho")
        await agent_app.shutdown()
        return card["supportedInterfaces"][0]["url"], answered.text

    interface, answered = run(scenario())
    assert interface == "https://a.example/agents/one/"
    assert answered == "answered: ho"


def test_a_store_that_cannot_open_answers_503(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    app = FastAPI()
    app.mount("/agent", make_agent().asgi(store=f"sqlite:///{blocker}/x.db"))
    with running(app) as url:
        answer = httpx.post(
            f"{url}/agent/message:send",
            json={"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}},
            headers={"A2A-Version": "1.0"},
        )
    assert answer.status_code == 503
    assert answer.json()["error"]["status"] == "INTERNAL"


def test_an_agent_app_is_an_agent_app() -> None:
    assert isinstance(make_agent().asgi(), AgentApp)
