"""`parley webhook listen`: the real command in a subprocess, sent real notifications over
HTTP, signed by the `standardwebhooks` library (an independent implementation) and by
`parley.server.push.signing`."""

from __future__ import annotations

import json
import re
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import standardwebhooks

from parley.server.push.signing import (
    SIGNATURE_HEADER,
    SignatureError,
    secret_key,
    signed_headers,
    verify,
)
from tests.cli.runner import start

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
OTHER_SECRET = "whsec_c2Vjb25kLXNlY3JldC1mb3ItdGVzdHM="
PLAIN_TOKEN = "a-plain-token-used-as-key"
STATUS_UPDATE = {
    "statusUpdate": {
        "taskId": "task-1",
        "contextId": "ctx-1",
        "status": {"state": "TASK_STATE_COMPLETED"},
    }
}
ARTIFACT_UPDATE = {
    "artifactUpdate": {
        "taskId": "task-2",
        "contextId": "ctx-1",
        "artifact": {"artifactId": "art-1", "parts": [{"text": "a"}, {"text": "b"}]},
    }
}
OLD_TASK = {"kind": "task", "id": "task-3", "contextId": "ctx-1", "status": {"state": "completed"}}


@dataclass
class Listening:
    """A running `parley webhook listen`; once stopped, what it printed."""

    process: subprocess.Popen[str]
    url: str
    out: str = ""
    err: str = ""
    code: int | None = None
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=5))

    def post(self, body: bytes, headers: dict[str, str] | None = None, path: str = "/") -> int:
        return self.client.post(self.url + path, content=body, headers=headers).status_code

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.client.close()
        self.process.send_signal(sig)
        self.out, err = self.process.communicate(timeout=10)
        self.err += err
        self.code = self.process.returncode

    @property
    def blocks(self) -> list[str]:
        """The readable output, one block a notification."""
        return [block for block in self.out.split("\n\n") if block.strip()]


@contextmanager
def listening(*options: str) -> Iterator[Listening]:
    process = start("webhook", "listen", "--port", "0", *options)
    try:
        assert process.stderr is not None
        ready, _, _ = select.select([process.stderr], [], [], 10)
        line = process.stderr.readline() if ready else "(nothing within 10 s)"
        found = re.fullmatch(
            r"listening on (http://127\.0\.0\.1:\d+)/\S* \(Ctrl-C to stop\)\n", line
        )
        assert found, line
        yield Listening(process, found[1], err=line)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=10)


def _body(value: Any) -> bytes:
    return json.dumps(value).encode()


def _their_headers(secret: str, notification_id: str, body: bytes) -> dict[str, str]:
    """Signed by the standardwebhooks library."""
    now = datetime.now(UTC)
    return {
        "webhook-id": notification_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": standardwebhooks.Webhook(secret).sign(
            notification_id, now, body.decode()
        ),
    }


def _our_headers(token: str, notification_id: str, body: bytes) -> dict[str, str]:
    return signed_headers(secret_key(token), notification_id, body, time.time())


def test_signed_notifications_verify_and_are_printed() -> None:
    with listening("--secret", SECRET, "--secret", PLAIN_TOKEN) as listener:
        first, second, third = _body(STATUS_UPDATE), _body(ARTIFACT_UPDATE), _body(OLD_TASK)
        bearer = {"Authorization": "Bearer sekrit-credential"}
        assert listener.post(first, _their_headers(SECRET, "n-1", first) | bearer) == 200
        assert listener.post(second, _our_headers(PLAIN_TOKEN, "n-2", second)) == 200
        assert listener.post(third, _our_headers(SECRET, "n-3", third)) == 200
        listener.stop()
    assert listener.code == 0
    assert "sekrit" not in listener.out + listener.err
    status, artifact, task = listener.blocks
    head, *lines = status.splitlines()
    assert re.fullmatch(
        r"\d\d:\d\d:\d\d  notification n-1  statusUpdate task=task-1 state=TASK_STATE_COMPLETED",
        head,
    )
    assert lines[:3] == [
        "  answered 200",
        "  signature: verified",
        "  Authorization: Bearer <redacted>",
    ]
    assert json.loads("\n".join(lines[3:])) == STATUS_UPDATE
    assert lines[3:5] == ["  {", '    "statusUpdate": {']
    assert "notification n-2  artifactUpdate task=task-2 artifact=art-1 (2 parts)" in artifact
    assert "signature: verified" in artifact
    assert "Authorization: (none)" in artifact
    assert "notification n-3  task task=task-3 state=completed" in task


def test_a_tampered_body_or_a_wrong_secret_is_refused() -> None:
    body = _body(STATUS_UPDATE)
    with listening("--secret", SECRET) as listener:
        tampered = body.replace(b"COMPLETED", b"FAILED")
        assert listener.post(tampered, _their_headers(SECRET, "n-1", body)) == 401
        assert listener.post(body, _their_headers(OTHER_SECRET, "n-2", body)) == 401
        assert listener.post(body, _our_headers(PLAIN_TOKEN, "n-3", body)) == 401
        assert listener.post(body) == 401
        assert listener.post(body, _their_headers(SECRET, "n-5", body)) == 200
        listener.stop()
    blocks = listener.blocks
    assert len(blocks) == 5
    for block in blocks[:3]:
        assert "answered 401 (rejected: signature: no signature matches" in block
        assert "signature: DOES NOT VERIFY" in block
    assert "rejected: signature: missing webhook-id" in blocks[3]
    assert "signature: verified" in blocks[4]


def test_statuses_are_answered_in_turn_then_the_last_one() -> None:
    body = _body(STATUS_UPDATE)
    with listening("--status", "503", "--status", "200") as listener:
        assert [listener.post(body) for _ in range(3)] == [503, 200, 200]
        listener.stop()
    answered = [line for line in listener.out.splitlines() if "answered" in line]
    assert answered == ["  answered 503", "  answered 200", "  answered 200"]
    assert "signature: not checked" in listener.out


def test_json_lines_redact_credentials() -> None:
    body = _body(STATUS_UPDATE)
    with listening("--json", "--secret", SECRET, "--token", "tok-1") as listener:
        headers = _their_headers(SECRET, "n-1", body) | {
            "Authorization": "Bearer sekrit-credential",
            "X-A2A-Notification-Token": "tok-1",
        }
        assert listener.post(body, headers, path="/hooks/a2a") == 200
        assert listener.post(b"not json", _their_headers(SECRET, "n-2", b"not json")) == 401
        listener.stop()
    assert "sekrit" not in listener.out
    first, second = (json.loads(line) for line in listener.out.splitlines())
    assert first["id"] == "n-1"
    assert datetime.fromisoformat(first["receivedAt"]).tzinfo is not None
    assert first["path"] == "/hooks/a2a"
    assert first["headers"]["authorization"] == "<redacted>"
    assert first["headers"]["x-a2a-notification-token"] == "<redacted>"
    assert first["headers"][SIGNATURE_HEADER] == headers[SIGNATURE_HEADER]
    assert (first["verified"], first["status"], first["body"]) == (True, 200, STATUS_UPDATE)
    assert (second["verified"], second["status"], second["body"]) == (True, 401, "not json")
    assert "X-A2A-Notification-Token" in second["rejected"]


def test_without_secrets_a_text_body_is_printed_and_answered() -> None:
    with listening("--json", "--status", "202") as listener:
        assert listener.post(b"plain text") == 202
        listener.stop(signal.SIGINT)
    assert listener.code == 0
    (record,) = (json.loads(line) for line in listener.out.splitlines())
    assert (record["verified"], record["body"], record["id"]) == (None, "plain text", None)


def test_an_oversized_body_is_refused_413() -> None:
    with listening("--max-body", "100") as listener:
        assert listener.post(b"x" * 101) == 413
        assert listener.post(b"x" * 100) == 200
        listener.stop()
    refused, accepted = listener.blocks
    assert "answered 413 (rejected: the body is over --max-body 100 bytes)" in refused
    assert "xxxx" not in refused
    assert "answered 200" in accepted
    assert "not JSON" in accepted


def test_a_token_mismatch_is_refused() -> None:
    body = _body(STATUS_UPDATE)
    with listening("--token", "right") as listener:
        assert listener.post(body, {"X-A2A-Notification-Token": "wrong"}) == 401
        assert listener.post(body) == 401
        assert listener.post(body, {"X-A2A-Notification-Token": "right"}) == 200
        listener.stop()
    wrong, missing, right = listener.blocks
    assert "rejected: X-A2A-Notification-Token does not match --token" in wrong
    assert "X-A2A-Notification-Token: MISMATCH" in wrong
    assert "rejected: no X-A2A-Notification-Token header" in missing
    assert "X-A2A-Notification-Token: matches" in right
    assert "wrong" not in wrong.replace("X-A2A-Notification-Token: MISMATCH", "")


def test_only_posts_at_the_path_are_notifications() -> None:
    with listening("--path", "/hook") as listener:
        assert listener.client.get(listener.url + "/hook").status_code == 405
        assert listener.post(b"{}", path="/elsewhere") == 404
        assert listener.post(b"{}", path="/hook") == 200
        listener.stop()
    assert "listening on " in listener.err
    assert listener.err.splitlines()[0].endswith("/hook (Ctrl-C to stop)")
    (block,) = listener.blocks
    assert "JSON, not an A2A notification" in block


def test_a_bad_option_is_a_one_line_usage_error() -> None:
    process = start("webhook", "listen", "--status", "abc")
    out, err = process.communicate(timeout=10)
    assert process.returncode == 2
    assert out == ""
    assert err.startswith("parley: usage: argument --status: 'abc' is not an HTTP status")
    assert err.count("\n") == 1


def test_signing_agrees_with_standardwebhooks() -> None:
    body = _body(STATUS_UPDATE)
    theirs = standardwebhooks.Webhook(SECRET)
    ours = _our_headers(SECRET, "n-ours", body)
    assert theirs.verify(body, ours) == STATUS_UPDATE
    assert verify(secret_key(SECRET), _their_headers(SECRET, "n-theirs", body), body) == "n-theirs"
    with pytest.raises(SignatureError, match="no signature matches"):
        verify(secret_key(SECRET), _their_headers(OTHER_SECRET, "n-other", body), body)
    with pytest.raises(standardwebhooks.WebhookVerificationError):
        standardwebhooks.Webhook(OTHER_SECRET).verify(body, ours)
