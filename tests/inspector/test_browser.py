"""The inspector in a real headless Chromium (the Debian `chromium` package, driven by
Playwright through `executable_path`; no browser is ever downloaded): the page reads and
checks the card, streams an answer over JSON-RPC 1.0 and over HTTP+JSON 0.3 (with a file
and data), lists tasks and shows one's history, and asks a secured agent's user for
credentials. Screenshots land in `test-artifacts/inspector/` (git-ignored).

Chromium missing is a failure, never a skip: run as root (as CI does), the module installs
it with apt-get; otherwise the failure says how to.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.asgi.live import running
from tests.inspector.agents import inspected_app
from tests.ports import free_port

ARTIFACTS = Path(__file__).parents[2] / "test-artifacts" / "inspector"
TIMEOUT_MS = 15_000


def _installed() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def chromium() -> str:
    """The system Chromium; installed with apt-get when missing and running as root."""
    path = _installed()
    if path is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "-q", "chromium"],
        ):
            subprocess.run(command, env=env, capture_output=True, timeout=900, check=False)
        path = _installed()
    if path is None:
        pytest.fail(
            "the inspector's browser tests need Chromium: apt-get install -y chromium "
            "(run as root, the tests install it themselves)",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module."""
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415
    except ImportError:
        pytest.fail("the browser tests need Playwright: pip install -e '.[test]'", pytrace=False)
    path = chromium()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        launched = playwright.chromium.launch(executable_path=path, headless=True, args=args)
        try:
            yield launched
        finally:
            launched.close()


def _serve(secured: bool) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with running(inspected_app(url, secured=secured), port) as served:
        yield served


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    yield from _serve(secured=False)


@pytest.fixture(scope="module")
def secured_url() -> Iterator[str]:
    yield from _serve(secured=True)


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh tab (its own session storage); its last state kept as a screenshot."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield tab
        assert not errors, errors
    finally:
        tab.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
        context.close()


def ready(tab: Any, url: str) -> None:
    """Open the agent's root, as a user would: the browser is sent to the inspector."""
    tab.goto(url + "/")
    tab.wait_for_selector("body[data-ready=true]")
    assert tab.url == url + "/inspector/"


def test_the_page_reads_the_card_and_checks_it(page: Any, agent_url: str) -> None:
    ready(page, agent_url)
    assert page.inner_text("#agent-name") == "Chunky"
    assert "Streams back what it was told" in page.inner_text("#card")
    assert page.inner_text("#who") == "as anonymous"
    page.wait_for_selector("#checks[data-done=true]")
    checks = page.locator("#checks li")
    passed = page.locator("#checks li.ok")
    failed = page.locator("#checks li.bad").all_inner_texts()
    assert failed == []
    assert passed.count() >= 7  # members, interfaces, skills, 4 interfaces, 2 capabilities
    texts = " ".join(checks.all_inner_texts())
    assert "JSONRPC 0.3" in texts
    assert "HTTP+JSON 1.0" in texts
    assert "streaming: declared" in texts
    assert "pushNotifications: declared" in texts


def _send(tab: Any, interface: str, text: str) -> str:
    """Send `text` on `interface` (e.g. "JSONRPC 1.0"); the answer's text once it ended."""
    tab.select_option("#interface", label=interface)
    tab.fill("#message", text)
    before = tab.locator(".bubble.agent[data-done=true]").count()
    tab.click("#send")
    done = tab.locator(".bubble.agent[data-done=true]").nth(before)
    done.wait_for()
    answer: str = done.inner_text()
    return answer


def test_a_message_gets_a_streamed_answer_on_the_timeline(page: Any, agent_url: str) -> None:
    ready(page, agent_url)
    answer = _send(page, "JSONRPC 1.0", "hello streaming world")
    assert "hello streaming world" in answer
    assert "completed" in answer
    events = page.locator("#timeline [data-stream='1'] li").all_inner_texts()
    assert any("artifact-update" in event and "(append)" in event for event in events)
    assert any("status-update completed" in event for event in events)
    assert events[-1].endswith("end")
    assert all(event.startswith("+") and " ms" in event for event in events)


def test_files_and_data_travel_in_the_older_version(page: Any, agent_url: str) -> None:
    ready(page, agent_url)
    page.click("summary:has-text('Attach a file or data')")
    page.set_input_files(
        "#file", files=[{"name": "note.txt", "mimeType": "text/plain", "buffer": b"hi"}]
    )
    page.fill("#data", '{"n": 1}')
    answer = _send(page, "JSONRPC 0.3", "with attachments")
    assert "with attachments [file note.txt] [data {'n': 1}]" in answer
    assert page.locator(".bubble.user .file").inner_text().startswith("file note.txt")
    page.fill("#data", '{"n": 2}')
    answer = _send(page, "HTTP+JSON 0.3", "over rest")  # ProtoJSON parts
    assert "over rest [data {'n': 2}]" in answer


def test_the_task_list_filters_and_shows_a_tasks_history(page: Any, agent_url: str) -> None:
    sent = httpx.post(
        agent_url + "/",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "m-list",
                    "role": "ROLE_USER",
                    "parts": [{"text": "listed"}],
                }
            },
        },
        headers={"A2A-Version": "1.0"},
        timeout=10,
    ).json()["result"]["task"]
    ready(page, agent_url)
    page.fill("#filter-context", sent["contextId"])
    page.click("#task-filters button[type=submit]")
    row = page.locator(f"#tasks tr[data-task='{sent['id']}']")
    row.wait_for()
    # the unfiltered list may still be on the page: wait for the filtered one
    page.wait_for_function(
        "() => document.querySelectorAll('#tasks tbody tr').length === 1", timeout=TIMEOUT_MS
    )
    assert page.locator("#tasks tbody tr").count() == 1
    assert "completed" in row.inner_text()
    row.click()
    detail = page.locator("#task-detail")
    detail.locator("h3", has_text="Artifacts (1)").wait_for()
    assert "listed" in detail.inner_text()
    assert f"Task {sent['id']}" in detail.inner_text()


def test_a_secured_agent_asks_for_credentials(page: Any, secured_url: str) -> None:
    page.goto(secured_url + "/inspector/")
    page.wait_for_selector("#credentials:not([hidden])")
    assert page.inner_text("#who") == "no credentials"
    assert page.input_value("#credential-header") == "X-API-Key"  # from the card's scheme
    page.fill("#credential-value", "k-alice")
    page.click("#credentials button[type=submit]")
    page.wait_for_selector("body[data-ready=true]")
    assert page.inner_text("#who") == "as alice"
    page.wait_for_selector("#checks[data-done=true]")
    assert page.locator("#checks li.bad").count() == 0
    assert "hello alice" in _send(page, "HTTP+JSON 1.0", "hello alice")


def test_a_page_opened_at_another_name_calls_the_agent_at_its_own_address(
    page: Any, agent_url: str
) -> None:
    """The card names 127.0.0.1; the page, opened at localhost, may not call another origin:
    it calls the card's paths at its own."""
    other = agent_url.replace("127.0.0.1", "localhost")
    page.goto(other + "/inspector/")
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector("#checks[data-done=true]")
    assert page.locator("#checks li.bad").count() == 0
    assert f"called at {other}" in page.inner_text("#checks")
    assert "over there" in _send(page, "HTTP+JSON 1.0", "over there")
