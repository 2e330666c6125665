"""`parley webhook listen`: a local receiver for push notifications, to see what an agent
sends. Each notification is printed as it arrives (what it is, whether its Standard Webhooks
signature verified, its credentials redacted, the body as indented JSON), or with `--json`
one JSON object a line; `--status` answers with chosen codes to exercise a sender's retries.
A tiny ASGI app under uvicorn, bound to 127.0.0.1 unless `--host` says otherwise."""

from __future__ import annotations

import argparse
import contextlib
import hmac
import json
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from parley.asgi.http import Receive, Request, Scope, Send
from parley.server.push.signing import ID_HEADER, SignatureError, secret_key, verify

if TYPE_CHECKING:
    import uvicorn

TOKEN_HEADER = "x-a2a-notification-token"  # noqa: S105 - a header name, not a token
"""The header carrying the token the push config was set with."""
SECRET_HEADERS = ("authorization", TOKEN_HEADER)
"""Headers whose values are credentials: never printed."""
REDACTED = "<redacted>"
VERDICTS = {None: "not checked", True: "verified", False: "DOES NOT VERIFY"}
DEFAULT_MAX_BODY = 1 << 20
EVENTS = ("task", "message", "statusUpdate", "artifactUpdate")
"""The members of a StreamResponse, exactly one of which a notification carries."""
KINDS = dict(zip(("task", "message", "status-update", "artifact-update"), EVENTS, strict=True))
"""The older protocol's `kind` of a payload, as the StreamResponse member it stands for."""


@dataclass(frozen=True)
class Settings:
    """What the listener checks and answers, from the command line."""

    path: str | None = None
    keys: tuple[bytes, ...] = ()
    token: str | None = None
    statuses: tuple[int, ...] = (200,)
    as_json: bool = False
    max_body: int = DEFAULT_MAX_BODY


@dataclass
class Received:
    """One notification request, as it is printed."""

    request: Request
    at: datetime
    body: bytes | None = None
    verified: bool | None = None
    rejected: str | None = None
    status: int = 200

    @property
    def id(self) -> str | None:
        return self.request.headers.get(ID_HEADER)

    def parsed(self) -> Any:
        """The body as JSON, else as text (None when it was not read)."""
        if self.body is None:
            return None
        try:
            return json.loads(self.body)
        except ValueError:
            return self.body.decode("utf-8", "replace")


class Listener:
    """The ASGI app: checks and answers each notification, then prints it to `out`."""

    def __init__(self, settings: Settings, out: TextIO | None = None) -> None:
        self.settings = settings
        self.out = out
        self.answered = 0
        """Notifications answered with a `--status` code so far (rejected ones are not)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request.from_scope(scope)
        if self.settings.path is not None and request.path != self.settings.path:
            await _answer(send, 404, f"notifications are received at {self.settings.path}\n")
            return
        if request.method != "POST":
            await _answer(send, 405, "notifications are POSTed\n", [(b"allow", b"POST")])
            return
        received = Received(request, datetime.now(UTC))
        received.body = await _read(receive, request, self.settings.max_body)
        self.check(received)
        await _answer(send, received.status, (received.rejected or "ok") + "\n")
        self.show(received)

    def check(self, received: Received) -> None:
        """Verify, then choose the answer: 413, 401 or the next `--status` code."""
        settings = self.settings
        if received.body is None:
            received.rejected = f"the body is over --max-body {settings.max_body} bytes"
            received.status = 413
            return
        reason = None
        if settings.keys:
            reason = _signature_problem(settings.keys, received.request.headers, received.body)
            received.verified = reason is None
        if reason is None and settings.token is not None:
            reason = _token_problem(settings.token, received.request.headers.get(TOKEN_HEADER))
        if reason is not None:
            received.rejected = reason
            received.status = 401
            return
        statuses = settings.statuses
        received.status = statuses[min(self.answered, len(statuses) - 1)]
        self.answered += 1

    def show(self, received: Received) -> None:
        out = self.out or sys.stdout
        if self.settings.as_json:
            out.write(json.dumps(json_record(received), ensure_ascii=False) + "\n")
        else:
            out.write("\n".join(self.lines(received)) + "\n\n")
        out.flush()

    def lines(self, received: Received) -> list[str]:
        """The readable form: a header line, the checks, then the body indented."""
        body = received.parsed()
        when = received.at.astimezone().strftime("%H:%M:%S")
        what = describe(body) if received.body is not None else "body not read"
        lines = [f"{when}  notification {received.id or '(no webhook-id)'}  {what}"]
        rejected = f" (rejected: {received.rejected})" if received.rejected else ""
        lines.append(f"  answered {received.status}{rejected}")
        lines.append(f"  signature: {VERDICTS[received.verified]}")
        headers = received.request.headers
        lines.append(f"  Authorization: {_scheme(headers.get('authorization'))}")
        if self.settings.token is not None:
            matched = _token_problem(self.settings.token, headers.get(TOKEN_HEADER)) is None
            lines.append(f"  X-A2A-Notification-Token: {'matches' if matched else 'MISMATCH'}")
        elif TOKEN_HEADER in headers:
            lines.append(f"  X-A2A-Notification-Token: {REDACTED} (not checked)")
        if received.body is not None:
            text = body if isinstance(body, str) else json.dumps(body, indent=2, ensure_ascii=False)
            lines += ["  " + line for line in text.splitlines()] or ["  (empty body)"]
        return lines


async def _read(receive: Receive, request: Request, limit: int) -> bytes | None:
    """The whole body; None once it is past `limit` (not read further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            return bytes(body)


async def _answer(
    send: Send, status: int, text: str, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    body = text.encode()
    head = [(b"content-type", b"text/plain; charset=utf-8"), *headers]
    head.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _signature_problem(
    keys: Sequence[bytes], headers: Mapping[str, str], body: bytes
) -> str | None:
    """None if the signature verifies under any of the keys, else why not."""
    reason = ""
    for key in keys:
        try:
            verify(key, headers, body)
        except SignatureError as exc:
            reason = str(exc)
        else:
            return None
    return f"signature: {reason}"


def _token_problem(expected: str, sent: str | None) -> str | None:
    if sent is None:
        return "no X-A2A-Notification-Token header"
    if not hmac.compare_digest(expected.encode(), sent.encode()):
        return "X-A2A-Notification-Token does not match --token"
    return None


def _scheme(authorization: str | None) -> str:
    """`Bearer <redacted>`: the scheme, never the credentials."""
    if authorization is None:
        return "(none)"
    scheme, _, credentials = authorization.strip().partition(" ")
    return f"{scheme} {REDACTED}" if credentials else REDACTED


def describe(body: Any) -> str:
    """What a notification is: `statusUpdate task=T state=S`, `task task=T state=S`, …"""
    if not isinstance(body, dict):
        return "not JSON" if isinstance(body, str) else "JSON, not an A2A notification"
    present = [name for name in EVENTS if name in body]
    if len(present) == 1 and isinstance(body[present[0]], dict):
        return _event(present[0], body[present[0]])
    kind = KINDS.get(str(body.get("kind")))
    if kind is not None:  # the older protocol sends the Task itself (with `kind`)
        return _event(kind, body)
    return "JSON, not an A2A notification"


def _event(name: str, event: dict[str, Any]) -> str:
    if name == "task":
        return f"task task={event.get('id')} state={_state(event)}"
    if name == "statusUpdate":
        return f"statusUpdate task={event.get('taskId')} state={_state(event)}"
    if name == "artifactUpdate":
        artifact = found if isinstance(found := event.get("artifact"), dict) else {}
        count = len(parts) if isinstance(parts := artifact.get("parts"), list) else 0
        return (
            f"artifactUpdate task={event.get('taskId')} "
            f"artifact={artifact.get('artifactId')} ({count} part{'' if count == 1 else 's'})"
        )
    return f"message task={event.get('taskId')} message={event.get('messageId')}"


def _state(event: dict[str, Any]) -> Any:
    status = event.get("status")
    return status.get("state") if isinstance(status, dict) else None


def json_record(received: Received) -> dict[str, Any]:
    """The `--json` line of one notification; credentials redacted."""
    headers = {
        name: REDACTED if name in SECRET_HEADERS else value
        for name, value in received.request.headers.items()
    }
    return {
        "id": received.id,
        "receivedAt": received.at.isoformat(),
        "path": received.request.path,
        "headers": headers,
        "verified": received.verified,
        "status": received.status,
        "rejected": received.rejected,
        "body": received.parsed(),
    }


def add_webhook_command(commands: Any) -> None:
    webhook = commands.add_parser(
        "webhook",
        help="receive push notifications locally",
        description="Tools for push notifications (webhooks).",
    )
    actions = webhook.add_subparsers(dest="webhook_command", required=True, metavar="ACTION")
    listen = actions.add_parser(
        "listen",
        help="print the push notifications POSTed to a local HTTP server",
        description="Listen for push notifications and print each one: what it is, whether "
        "its signature verified, the Authorization scheme (never the credentials) and its "
        "JSON body. Ctrl-C stops.",
    )
    listen.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: %(default)s)"
    )
    listen.add_argument(
        "--port",
        type=_number(0, 65535, "a port"),
        default=8765,
        help="port (default: %(default)s; 0: any free port)",
    )
    listen.add_argument("--path", help="accept notifications at this path only (default: any)")
    listen.add_argument(
        "--secret",
        action="append",
        default=[],
        help="verify signatures with this whsec_ secret or plain token; repeat for several "
        "(a notification verifying under none is answered 401)",
    )
    listen.add_argument(
        "--token", help="the expected X-A2A-Notification-Token (a mismatch is answered 401)"
    )
    listen.add_argument(
        "--status",
        action="append",
        type=_number(200, 599, "an HTTP status"),
        default=[],
        metavar="CODE",
        help="answer the Nth notification with the Nth code, then the last one given "
        "(default: 200), e.g. --status 503 --status 200",
    )
    listen.add_argument("--json", action="store_true", help="print one JSON object a line")
    listen.add_argument(
        "--max-body",
        type=_number(1, 1 << 40, "a size in bytes"),
        default=DEFAULT_MAX_BODY,
        metavar="BYTES",
        help="answer larger bodies 413 (default: %(default)s)",
    )
    listen.set_defaults(run=run_listen)


def _number(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text) if text.isdigit() else -1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} ({low}-{high})")
        return value

    return parse


def settings_from(arguments: argparse.Namespace) -> Settings:
    try:
        keys = tuple(secret_key(secret) for secret in arguments.secret)
    except ValueError as exc:
        raise SystemExit(f"parley webhook listen: --secret: {exc}") from None
    path = arguments.path
    if path is not None and not path.startswith("/"):
        path = "/" + path
    return Settings(
        path=path,
        keys=keys,
        token=arguments.token,
        statuses=tuple(arguments.status) or (200,),
        as_json=arguments.json,
        max_body=arguments.max_body,
    )


def run_listen(arguments: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: PLC0415 - an optional extra, needed only here
    except ImportError:
        raise SystemExit(
            "parley webhook listen needs the server extra: pip install 'parley-a2a[server]'"
        ) from None
    settings = settings_from(arguments)
    sock = _bind(arguments.host, arguments.port)
    host = f"[{arguments.host}]" if ":" in arguments.host else arguments.host
    where = f"http://{host}:{sock.getsockname()[1]}{settings.path or '/'}"
    sys.stderr.write(f"listening on {where} (Ctrl-C to stop)\n")
    sys.stderr.flush()
    config = uvicorn.Config(
        Listener(settings),
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    _quiet_server(uvicorn, config).run(sockets=[sock])
    return 0


def _bind(host: str, port: int) -> socket.socket:
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        raise SystemExit(f"parley webhook listen: cannot listen on {host}:{port}: {exc}") from None
    sock.set_inheritable(True)
    return sock


def _quiet_server(module: Any, config: uvicorn.Config) -> uvicorn.Server:
    """A uvicorn server that stops on Ctrl-C or SIGTERM and then returns (uvicorn itself
    re-raises the signal once it has stopped, so the process would not exit 0)."""

    class Server(module.Server):  # type: ignore[misc]
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    server: uvicorn.Server = Server(config)
    return server
