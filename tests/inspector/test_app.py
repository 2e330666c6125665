"""The inspector's routes (`parley.inspector`) and the server root as a browser sees it
(`parley.asgi.root`), in process: the page and its files, the redirect from `/`, a mount
path, credentials, the push deliveries API; and an app without the inspector unchanged."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator

import httpx
import pytest

from parley.asgi import build_app
from parley.asgi.mount import mount_agents
from parley.asgi.root import prefers_html
from parley.cli.inspector import add_inspector_option, inspected
from parley.inspector import with_inspector
from tests.inspector.agents import inspected_app, service

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
URL = "http://testserver"
HOOK = "http://127.0.0.1:9/hook"

pytestmark = pytest.mark.anyio


def client_of(app: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL)  # type: ignore[arg-type]


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with client_of(inspected_app(URL)) as c:
        yield c


@pytest.mark.parametrize(
    ("accept", "html"),
    [
        (BROWSER, True),
        ("text/html", True),
        (None, False),
        ("*/*", False),
        ("application/json", False),
        ("application/json, text/html;q=0.5", False),
        ("text/html;q=0.5, application/json", False),
        ("text/html, application/json;q=0.9", True),
        ("text/html;q=bad, */*", False),
    ],
)
def test_a_request_prefers_html_when_accept_ranks_it_above_json(
    accept: str | None, html: bool
) -> None:
    assert prefers_html(accept) is html


async def test_without_the_inspector_a_browser_at_the_root_gets_a_page_linking_the_card() -> None:
    async with client_of(build_app(service(URL))) as c:
        page = await c.get("/", headers={"Accept": BROWSER})
        card = await c.get("/")
        inspector = await c.get("/inspector/", headers={"Accept": BROWSER})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["vary"] == "Accept"
    assert '<a href="/.well-known/agent-card.json">' in page.text
    assert "Chunky" in page.text
    assert card.json()["name"] == "Chunky"  # other clients: the card, as before
    assert inspector.status_code == 404  # not served: the REST binding answers


async def test_a_browser_at_the_root_goes_to_the_inspector(client: httpx.AsyncClient) -> None:
    root = await client.get("/", headers={"Accept": BROWSER})
    bare = await client.get("/inspector")
    card = await client.get("/", headers={"Accept": "application/json"})
    assert root.status_code == 303
    assert root.headers["location"] == "/inspector/"
    assert bare.status_code == 303
    assert bare.headers["location"] == "/inspector/"
    assert card.json()["name"] == "Chunky"


async def test_the_page_and_its_files_are_served_from_the_package(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/inspector/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert '<script type="module" src="inspector.js">' in page.text
    for name in ("inspector.js", "a2a.js", "checks.js"):
        asset = await client.get(f"/inspector/{name}")
        assert asset.status_code == 200, name
        assert asset.headers["content-type"].startswith("text/javascript")
    css = await client.get("/inspector/inspector.css")
    assert css.headers["content-type"].startswith("text/css")
    missing = await client.get("/inspector/nothing.js")
    assert missing.status_code == 404
    posted = await client.post("/inspector/", json={})
    assert posted.status_code == 405
    assert posted.headers["allow"] == "GET"


async def test_the_inspector_works_under_a_mount_path() -> None:
    apps = {"chunky": inspected_app(f"{URL}/chunky"), "plain": build_app(service(f"{URL}/plain"))}
    async with client_of(mount_agents(apps, URL)) as c:
        root = await c.get("/chunky/", headers={"Accept": BROWSER})
        page = await c.get("/chunky/inspector/")
        script = await c.get("/chunky/inspector/a2a.js")
        plain = await c.get("/plain/", headers={"Accept": BROWSER})
    assert root.status_code == 303
    assert root.headers["location"] == "/chunky/inspector/"
    assert page.status_code == 200
    assert 'href="inspector.css"' in page.text  # relative: the mount path is kept
    assert script.status_code == 200
    assert '<a href="/plain/.well-known/agent-card.json">' in plain.text


async def test_a_browser_at_the_mounted_servers_root_gets_a_page_of_its_agents() -> None:
    apps = {"chunky": inspected_app(f"{URL}/chunky"), "plain": build_app(service(f"{URL}/plain"))}
    async with client_of(mount_agents(apps, URL)) as c:
        page = await c.get("/", headers={"Accept": BROWSER})
        index = await c.get("/")
    assert page.headers["content-type"].startswith("text/html")
    assert '<a href="/chunky/">Chunky</a>' in page.text
    assert f'<a href="{URL}/plain/.well-known/agent-card.json">agent card</a>' in page.text
    assert [agent["name"] for agent in index.json()["agents"]] == ["chunky", "plain"]


async def test_the_host_guard_covers_the_inspector() -> None:
    app = with_inspector(build_app(service(URL), allowed_hosts=["localhost"]))
    async with client_of(app) as c:
        refused = await c.get("/inspector/", headers={"Host": "evil.example"})
        allowed = await c.get("/inspector/", headers={"Host": "localhost:8000"})
    assert refused.status_code == 400
    assert allowed.status_code == 200


async def test_with_security_the_api_needs_credentials() -> None:
    async with client_of(inspected_app(URL, secured=True)) as c:
        anonymous = await c.get("/inspector/api/whoami")
        wrong = await c.get("/inspector/api/deliveries", headers={"X-API-Key": "nope"})
        alice = await c.get("/inspector/api/whoami", headers={"X-API-Key": "k-alice"})
        page = await c.get("/inspector/")  # the same files for everyone: no data in them
    assert anonymous.status_code == 401
    assert "www-authenticate" in anonymous.headers or anonymous.json()["error"]
    assert wrong.status_code == 401
    assert alice.status_code == 200
    assert alice.json() == {"caller": "alice"}
    assert alice.headers["cache-control"] == "no-store"
    assert page.status_code == 200


def _send_with_push(text: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": f"m-{text}", "role": "ROLE_USER", "parts": [{"text": text}]},
            "configuration": {"taskPushNotificationConfig": {"url": HOOK}},
        },
    }


async def test_deliveries_are_the_callers_own_pending_notifications() -> None:
    """The delivery worker is not started here (no lifespan): notifications stay pending."""
    async with client_of(inspected_app(URL, secured=True)) as c:
        sent = await c.post(
            "/",
            json=_send_with_push("hello"),
            headers={"X-API-Key": "k-alice", "A2A-Version": "1.0"},
        )
        assert "result" in sent.json(), sent.text
        task_id = sent.json()["result"]["task"]["id"]
        alice = (await c.get("/inspector/api/deliveries", headers={"X-API-Key": "k-alice"})).json()
        bob = (await c.get("/inspector/api/deliveries", headers={"X-API-Key": "k-bob"})).json()
    assert alice["deliveries"], alice
    assert {row["taskId"] for row in alice["deliveries"]} == {task_id}
    assert {row["state"] for row in alice["deliveries"]} == {"pending"}
    assert all(row["attempts"] == 0 for row in alice["deliveries"])
    assert bob == {"deliveries": []}


async def test_an_agent_without_push_has_no_deliveries() -> None:
    async with client_of(inspected_app(URL, push=False)) as c:
        answer = await c.get("/inspector/api/deliveries")
    assert answer.json() == {"deliveries": None}


def test_the_serve_option_is_off_by_default_and_needs_an_a2a_app() -> None:
    parser = argparse.ArgumentParser()
    add_inspector_option(parser)
    off = parser.parse_args([])
    on = parser.parse_args(["--inspector"])
    app = build_app(service(URL))
    assert inspected(app, off) is app
    assert type(inspected(app, on)).__name__ == "InspectedApp"
    with pytest.raises(SystemExit, match="--inspector needs an agent"):
        inspected(object(), on)
