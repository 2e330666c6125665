"""Several agents on one server (`mount_agents`), one SQLite store between them: each
agent is reached through its own card at `/NAME/.well-known/agent-card.json` by a client
that only follows the card, answers only for its own tasks, and starts and stops with the
server (DESIGN 15)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from parley.asgi import build_app
from parley.asgi.mount import Mounted, check_name, mount_agents
from parley.client import Client
from parley.client.errors import ClientProtocolError
from parley.model import Task, TaskState
from parley.protocol.errors import TaskNotFoundError
from parley.protocol.negotiation import Version
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.stores import open_store
from parley.server.task_context import TaskContext
from tests.asgi.live import running
from tests.contracts.support import run
from tests.ports import free_port


def agent(name: str, reply: str) -> Agent:
    made = Agent(name)

    @made.skill()
    async def answer(task: TaskContext) -> str:
        if task.text == "wait":
            await task.ask("and then?")
            return "never"
        return f"{reply}: {task.text}"

    return made


def mounted(tmp_path: Path, base_url: str) -> Mounted:
    store = f"sqlite:///{tmp_path / 'shared.db'}"
    apps = {}
    for name, reply in (("echo", "echoed"), ("shout", "SHOUTED")):
        made = agent(name.title(), reply)
        tasks, push = open_store(store)
        service = AgentService(
            made.executor(), made.card(f"{base_url}/{name}"), store=tasks, push_store=push
        )
        apps[name] = build_app(service)
    return mount_agents(apps, base_url)


def test_each_agent_is_found_through_its_own_card_and_keeps_its_own_tasks(
    tmp_path: Path,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"

    async def scenario() -> None:
        async with (
            Client.connect(f"{url}/echo") as echo,
            Client.connect(f"{url}/shout", versions=(Version.V0_3,)) as shout,
            Client.connect(f"{url}/shout") as shout_v1,
        ):
            assert (echo.card.name, shout.card.name) == ("Echo", "Shout")
            done, shouted, waiting = (
                await echo.send("hi"),
                await shout.send("hey"),
                await echo.send("wait"),
            )
            assert isinstance(done, Task)
            assert isinstance(shouted, Task)
            assert isinstance(waiting, Task)
            assert done.status.state is TaskState.COMPLETED
            assert "echoed: hi" in str(done.artifacts)
            assert "SHOUTED: hey" in str(shouted.artifacts)
            assert waiting.status.state is TaskState.INPUT_REQUIRED
            for other in (shout, shout_v1):
                with pytest.raises(TaskNotFoundError):
                    await other.get_task(done.id)
                with pytest.raises(TaskNotFoundError):  # a follow-up to the other's task
                    await other.send("go on", task_id=waiting.id)
            listed = await shout_v1.list_tasks()
            assert all(t.id not in (done.id, waiting.id) for t in listed.tasks)
            assert (await echo.get_task(waiting.id)).status.state is TaskState.INPUT_REQUIRED

    with running(mounted(tmp_path, url), port):
        run(scenario())


def test_the_server_root_lists_the_agents_and_refuses_the_rest(tmp_path: Path) -> None:
    async def scenario(url: str) -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=url) as http:
            return [
                await http.get("/"),
                await http.get("/healthz"),
                await http.get("/echo/.well-known/agent-card.json"),
                await http.get("/nobody/.well-known/agent-card.json"),
                await http.get("/.well-known/agent-card.json"),
            ]

    with running(mounted(tmp_path, "http://srv")) as url:
        index, health, card, nobody, root_card = run(scenario(url))
    assert index.json() == {
        "agents": [
            {
                "name": "echo",
                "agentName": "Echo",
                "card": "http://srv/echo/.well-known/agent-card.json",
            },
            {
                "name": "shout",
                "agentName": "Shout",
                "card": "http://srv/shout/.well-known/agent-card.json",
            },
        ]
    }
    assert health.json() == {"status": "ok"}
    assert card.json()["supportedInterfaces"][0]["url"] == "http://srv/echo"
    assert [nobody.status_code, root_card.status_code] == [404, 404]
    assert "/echo, /shout" in nobody.json()["error"]["message"]


@pytest.mark.parametrize("name", ["", "Echo", "a/b", "..", "-x", "x" * 64, "é"])
def test_names_that_cannot_be_a_path_segment_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="lower-case letters"):
        check_name(name)


def test_a_client_that_ignores_the_sub_path_finds_no_agent(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        with pytest.raises((ClientProtocolError, httpx.HTTPError, TaskNotFoundError)):
            async with Client.connect(url) as client:
                await client.send("hi")

    with running(mounted(tmp_path, "http://srv")) as url:
        run(scenario(url))
