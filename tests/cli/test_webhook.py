"""`parley webhook listen`'s receiver in-process (`parley.cli.webhook.Listener` through httpx's
ASGITransport, its output in a buffer): what each kind of notification is said to be, in
either protocol version's form (REFERENCE §9.2: the StreamResponse a notification carries);
credentials never printed; a body read in pieces, and refused past the limit even without
a Content-Length; the command's options. The real command, over a socket, is in
test_webhook_listen.py."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from parley.cli.main import build_parser
from parley.cli.webhook import (
    DEFAULT_MAX_BODY,
    REDACTED,
    Listener,
    Settings,
    describe,
    settings_from,
)
from parley.server.push.signing import secret_key, signed_headers

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def post(
    settings: Settings,
    *bodies: bytes | AsyncIterator[bytes],
    headers: dict[str, str] | None = None,
    path: str = "/",
    method: str = "POST",
) -> tuple[list[httpx.Response], str]:
    """Send each body to a Listener; its answers and what it printed."""
    out = io.StringIO()
    listener = Listener(settings, out)

    async def scenario() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=listener)
        async with httpx.AsyncClient(transport=transport, base_url="http://hook") as http:
            return [
                await http.request(method, path, content=body, headers=headers) for body in bodies
            ]

    return asyncio.run(scenario()), out.getvalue()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}},
            "statusUpdate task=t state=TASK_STATE_WORKING",
        ),
        (
            {"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a", "parts": [{}]}}},
            "artifactUpdate task=t artifact=a (1 part)",
        ),
        (
            {"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a"}}},
            "artifactUpdate task=t artifact=a (0 parts)",
        ),
        ({"artifactUpdate": {"taskId": "t"}}, "artifactUpdate task=t artifact=None (0 parts)"),
        ({"task": {"id": "t", "status": {"state": "x"}}}, "task task=t state=x"),
        ({"task": {"id": "t", "status": "odd"}}, "task task=t state=None"),
        (
            {"message": {"taskId": "t", "messageId": "m"}},
            "message task=t message=m",
        ),
        (
            {"kind": "task", "id": "t", "status": {"state": "completed"}},
            "task task=t state=completed",
        ),
        (
            {"kind": "status-update", "taskId": "t", "status": {"state": "working"}},
            "statusUpdate task=t state=working",
        ),
        (
            {
                "kind": "artifact-update",
                "taskId": "t",
                "artifact": {"artifactId": "a", "parts": []},
            },
            "artifactUpdate task=t artifact=a (0 parts)",
        ),
        ({"kind": "message", "taskId": "t", "messageId": "m"}, "message task=t message=m"),
    ],
)
def test_each_kind_of_notification_is_named(body: dict[str, Any], said: str) -> None:
    assert describe(body) == said


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("plain text", "not JSON"),
        ([1, 2], "JSON, not an A2A notification"),
        (None, "JSON, not an A2A notification"),
        ({}, "JSON, not an A2A notification"),
        ({"task": {}, "message": {}}, "JSON, not an A2A notification"),
        ({"task": "not an object"}, "JSON, not an A2A notification"),
        ({"kind": "unknown"}, "JSON, not an A2A notification"),
    ],
)
def test_anything_else_is_said_not_to_be_one(body: Any, said: str) -> None:
    assert describe(body) == said


@pytest.mark.parametrize(
    ("authorization", "shown"),
    [
        ("Bearer sekrit", f"Bearer {REDACTED}"),
        ("Basic c2Vrcml0", f"Basic {REDACTED}"),
        ("sekrit", REDACTED),
        ("  Bearer   sekrit  ", f"Bearer {REDACTED}"),
    ],
)
def test_the_authorization_scheme_is_shown_never_the_credential(
    authorization: str, shown: str
) -> None:
    [answer], out = post(Settings(), b"{}", headers={"Authorization": authorization})
    assert answer.status_code == 200
    assert f"  Authorization: {shown}\n" in out
    assert "sekrit" not in out
    assert "c2Vrcml0" not in out


def test_an_unchecked_token_is_redacted() -> None:
    [_], out = post(Settings(), b"{}", headers={"X-A2A-Notification-Token": "sekrit"})
    assert f"X-A2A-Notification-Token: {REDACTED} (not checked)" in out
    assert "sekrit" not in out


def test_an_empty_body_says_so() -> None:
    [answer], out = post(Settings(), b"")
    assert answer.status_code == 200
    assert "  (empty body)" in out
    assert "notification (no webhook-id)  not JSON" in out


async def _pieces(*chunks: bytes) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def test_a_body_sent_in_pieces_is_read_whole() -> None:
    body = json.dumps({"statusUpdate": {"taskId": "t", "status": {"state": "S"}}}).encode()
    [answer], out = post(Settings(as_json=True), _pieces(body[:10], body[10:20], body[20:]))
    assert answer.status_code == 200
    assert json.loads(out)["body"] == json.loads(body)


def test_a_body_in_pieces_past_the_limit_is_refused_without_reading_on() -> None:
    """No Content-Length to go by: the limit is counted as the pieces come."""
    settings = Settings(max_body=8)
    [answer], out = post(settings, _pieces(b"12345", b"67890", b"never printed"))
    assert answer.status_code == 413
    assert answer.text == "the body is over --max-body 8 bytes\n"
    assert "body not read" in out
    assert "never printed" not in out


def test_a_refused_notification_does_not_use_up_a_status() -> None:
    settings = Settings(token="right", statuses=(503, 202))
    answers, _ = post(settings, b"{}", b"{}", headers={"X-A2A-Notification-Token": "wrong"})
    assert [a.status_code for a in answers] == [401, 401]
    answers, _ = post(settings, b"{}", b"{}", b"{}", headers={"X-A2A-Notification-Token": "right"})
    assert [a.status_code for a in answers] == [503, 202, 202]


def test_a_signature_under_any_of_the_secrets_verifies() -> None:
    body = b'{"task": {"id": "t"}}'
    headers = signed_headers(secret_key("plain-token"), "n-1", body, time.time())
    settings = Settings(keys=(secret_key(SECRET), secret_key("plain-token")), as_json=True)
    [answer], out = post(settings, body, headers=headers)
    assert answer.status_code == 200
    record = json.loads(out)
    assert (record["id"], record["verified"], record["rejected"]) == ("n-1", True, None)


def test_a_wrong_method_or_path_is_answered_and_not_printed() -> None:
    [answer], out = post(Settings(), b"", method="GET")
    assert (answer.status_code, answer.headers["allow"]) == (405, "POST")
    assert out == ""
    [answer], out = post(Settings(path="/hook"), b"{}", path="/other")
    assert answer.status_code == 404
    assert answer.text == "notifications are received at /hook\n"
    assert out == ""


def test_a_lifespan_scope_is_ignored() -> None:
    sent: list[object] = []

    async def receive() -> dict[str, Any]:
        return {"type": "lifespan.startup"}

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(Listener(Settings())({"type": "lifespan"}, receive, send))
    assert sent == []


def _listen(*argv: str) -> argparse.Namespace:
    return build_parser("webhook").parse_args(["webhook", "listen", *argv])


def test_the_options_defaults() -> None:
    settings = settings_from(_listen())
    assert settings == Settings(
        path=None, keys=(), token=None, statuses=(200,), as_json=False, max_body=DEFAULT_MAX_BODY
    )
    arguments = _listen()
    assert (arguments.host, arguments.port) == ("127.0.0.1", 8765)


def test_the_options_become_the_settings() -> None:
    arguments = _listen(
        "--path", "hook", "--secret", SECRET, "--token", "t", "--status", "503",
        "--status", "200", "--json", "--max-body", "10",
    )  # fmt: skip
    settings = settings_from(arguments)
    assert settings.path == "/hook"  # a path is made absolute
    assert settings.keys == (secret_key(SECRET),)
    assert (settings.token, settings.statuses, settings.as_json, settings.max_body) == (
        "t",
        (503, 200),
        True,
        10,
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "65536"], "'65536' is not a port (0-65535)"),
        (["--port", "-1"], "'-1' is not a port"),
        (["--status", "199"], "'199' is not an HTTP status (200-599)"),
        (["--status", "600"], "'600' is not an HTTP status"),
        (["--max-body", "0"], "'0' is not a size in bytes"),
    ],
)
def test_out_of_range_numbers_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        _listen(*argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_a_bad_secret_is_one_line() -> None:
    with pytest.raises(SystemExit, match=r"^parley webhook listen: --secret: "):
        settings_from(_listen("--secret", "whsec_!!!not-base64"))
