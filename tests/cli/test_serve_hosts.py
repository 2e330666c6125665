"""`parley serve` on a loopback address answers its own host names only (DNS rebinding:
a page's name resolving to 127.0.0.1 reaches the server with `Host: evil.example`), and
`--allowed-host` says which names to answer."""

from __future__ import annotations

import signal
import subprocess
import time

import httpx
import pytest

from parley.cli.hosts import allowed_hosts, is_loopback
from tests.cli.runner import start
from tests.ports import free_port

SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}
V1 = {"A2A-Version": "1.0"}


def _wait_until_up(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            httpx.get(url + "/healthz", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


def _serve(port: int, *options: str) -> subprocess.Popen[str]:
    """`parley serve` of the echo agent on 127.0.0.1 (the default `--host`)."""
    common = ("--port", str(port), "--store", "memory", "--log-level", "warning")
    process: subprocess.Popen[str] = start("serve", "examples.echo:agent", *common, *options)
    try:
        _wait_until_up(f"http://127.0.0.1:{port}", process)
    except BaseException:
        process.kill()
        process.communicate(timeout=20)
        raise
    return process


def test_serve_on_loopback_refuses_a_foreign_host() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = _serve(port)
    try:
        for host in ("evil.example", f"evil.example:{port}"):
            refused = httpx.post(url, json=SEND, headers={**V1, "Host": host}, timeout=5)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == -32600
            assert host in refused.json()["error"]["message"]
            card = httpx.get(url + "/.well-known/agent-card.json", headers={"Host": host})
            assert card.status_code == 400
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "[::1]"):
            answer = httpx.post(url, json=SEND, headers={**V1, "Host": host}, timeout=5)
            assert answer.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)


def test_allowed_host_names_another_host() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = _serve(port, "--allowed-host", "agent.test")
    try:
        named = httpx.post(url, json=SEND, headers={**V1, "Host": f"agent.test:{port}"})
        assert named.status_code == 200
        assert httpx.get(url + "/.well-known/agent-card.json").status_code == 200  # --url's
        assert httpx.post(url, json=SEND, headers={**V1, "Host": "localhost"}).status_code == 400
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)


@pytest.mark.parametrize(
    ("bind", "url", "given", "expected"),
    [
        ("127.0.0.1", "http://127.0.0.1:8000", None, ["localhost", "127.0.0.1", "[::1]"]),
        (
            "localhost",
            "http://agent.test:80",
            None,
            ["localhost", "127.0.0.1", "[::1]", "agent.test"],
        ),
        ("::1", "http://[::1]:8000", None, ["localhost", "127.0.0.1", "[::1]", "::1"]),
        ("127.0.0.1", "http://127.0.0.1:8000", ["a.test"], ["a.test", "127.0.0.1"]),
        ("127.0.0.1", "http://127.0.0.1:8000", ["*"], None),
        ("0.0.0.0", "http://agent.test", None, None),
        ("0.0.0.0", "http://agent.test", ["agent.test"], ["agent.test"]),
    ],
)
def test_allowed_hosts(bind: str, url: str, given: list[str] | None, expected: object) -> None:
    assert allowed_hosts(bind, url, given) == expected


def test_loopback_addresses() -> None:
    assert [is_loopback(h) for h in ("localhost", "127.0.0.2", "::1", "[::1]")] == [True] * 4
    assert [is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.2", "agent.test")] == [False] * 4
