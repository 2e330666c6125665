"""Secrets never reach logs nor error bodies: a real `parley serve` at `--log-level debug`
with an API key (in a header, the query string or a cookie) and a static bearer token
shaped as a JWT, over JSON-RPC, HTTP+JSON (A2A 1.0 and 0.3) and gRPC. Every operation is
called with valid credentials, wrong ones, and credentials in the query string, sends
carry a push config with credentials and a token, which is delivered to a local
`parley webhook listen`; then no credential appears in a line the server printed nor in
a body it answered (a push config's own secrets excepted in the answer to the call that
set them: the caller's input, returned to it)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from parley.model import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Model,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TextPart,
)
from parley.protocol.negotiation import Version
from parley.protocol.operations import GRPC_SERVICES, OPERATIONS, Operation
from parley.wire.codec_table import GRPC
from tests.auth.matrix_support import _planned
from tests.cli.runner import ROOT
from tests.cli.test_webhook_listen import Listening, listening
from tests.ports import free_port
from tests.serving import wait_for_card

API_KEY = "ak-live-7c1e5b9d3f"
WRONG_KEY = "ak-wrong-2b8f6a4c1e"
BEARER = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNlY3JldC05ZDQx"
WRONG_BEARER = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.d3JvbmctdG9rZW4tNGU3Yg"
PUSH_CREDENTIALS = "push-cred-5f0a2e7b91"
PUSH_TOKEN = "push-token-c83d1a60f2"
SECRETS = (API_KEY, WRONG_KEY, BEARER, WRONG_BEARER, PUSH_CREDENTIALS, PUSH_TOKEN)
CALLER_SECRETS = SECRETS[:4]
KEY_NAMES = {"header": "X-API-Key", "query": "api_key", "cookie": "session_key"}
BINDINGS = [
    ("JSONRPC", Version.V1_0),
    ("JSONRPC", Version.V0_3),
    ("HTTP+JSON", Version.V1_0),
    ("HTTP+JSON", Version.V0_3),
    ("GRPC", Version.V1_0),
    ("GRPC", Version.V0_3),
]
MODES = ("key", "bearer", "wrong key", "wrong bearer", "query")


@dataclass
class Server:
    url: str
    grpc_address: str
    location: str
    process: subprocess.Popen[bytes]
    out: Path
    err: Path
    hook: str

    def log(self) -> str:
        return self.out.read_text() + self.err.read_text()


@pytest.fixture(params=list(KEY_NAMES))
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Server, Listening]]:
    location = request.param
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{BEARER} alice\n")
    port, grpc_port = free_port(), free_port()
    command = [sys.executable, "-m", "parley.cli", "serve", "examples.echo:agent"]
    command += ["--port", str(port), "--grpc-port", str(grpc_port), "--log-level", "debug"]
    command += ["--store", f"sqlite:///{tmp_path / 'parley.db'}", "--push-allow", "127.0.0.1"]
    command += ["--api-key", f"{API_KEY}:alice", "--api-key-in", location]
    command += ["--api-key-name", KEY_NAMES[location], "--bearer-tokens", str(tokens)]
    out, err = tmp_path / "out.log", tmp_path / "err.log"
    with (
        listening("--token", PUSH_TOKEN) as receiver,
        out.open("w") as stdout,
        err.open("w") as stderr,
    ):
        process = subprocess.Popen(command, cwd=ROOT, stdout=stdout, stderr=stderr)
        served = Server(
            f"http://127.0.0.1:{port}",
            f"127.0.0.1:{grpc_port}",
            location,
            process,
            out,
            err,
            receiver.url + "/hook",
        )
        try:
            wait_for_card(served.url, process, served.log)
            yield served, receiver
        finally:
            process.terminate()
            process.wait(20)


def _hook(server: Server, task_id: str = "") -> TaskPushNotificationConfig:
    auth = AuthenticationInfo(scheme="Bearer", credentials=PUSH_CREDENTIALS)
    return TaskPushNotificationConfig(
        url=server.hook, task_id=task_id, id="cfg" if task_id else "", token=PUSH_TOKEN,
        authentication=auth,
    )  # fmt: skip


def _requests(server: Server, task_id: str) -> list[tuple[Operation, Model]]:
    message = Message(message_id=str(uuid.uuid4()), role=Role.USER, parts=(TextPart(text="hi"),))
    send = SendMessageRequest(
        message=message,
        configuration=SendMessageConfiguration(push_notification_config=_hook(server)),
    )
    return [
        (Operation.SEND_MESSAGE, send),
        (Operation.SEND_STREAMING_MESSAGE, send),
        (Operation.GET_TASK, GetTaskRequest(id=task_id)),
        (Operation.LIST_TASKS, ListTasksRequest()),
        (Operation.CANCEL_TASK, CancelTaskRequest(id=task_id)),
        (Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task_id)),
        (Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, _hook(server, task_id)),
        (
            Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
            GetTaskPushNotificationConfigRequest(task_id=task_id, id="cfg"),
        ),
        (
            Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
            ListTaskPushNotificationConfigsRequest(task_id=task_id),
        ),
        (
            Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="cfg"),
        ),
        (Operation.GET_EXTENDED_AGENT_CARD, GetExtendedAgentCardRequest()),
    ]


def _credentials(server: Server, mode: str) -> tuple[dict[str, str], dict[str, str]]:
    """The headers and query parameters a caller sends in `mode`."""
    if mode == "query":
        return {}, {"api_key": API_KEY, "access_token": BEARER, "token": WRONG_KEY}
    if mode in ("bearer", "wrong bearer"):
        return {"Authorization": f"Bearer {BEARER if mode == 'bearer' else WRONG_BEARER}"}, {}
    key, name = (API_KEY if mode == "key" else WRONG_KEY), KEY_NAMES[server.location]
    if server.location == "query":
        return {}, {name: key}
    if server.location == "cookie":
        return {"Cookie": f"{name}={key}; theme=dark"}, {}
    return {name: key}, {}


def _http(
    client: httpx.Client,
    server: Server,
    binding: str,
    version: Version,
    *,
    mode: str,
    call: tuple[Operation, Model],
) -> tuple[int, bytes]:
    server_headers, params = _credentials(server, mode)
    operation, request = call
    form = "POST" if operation is Operation.SUBSCRIBE_TO_TASK and binding == "HTTP+JSON" else ""
    planned = _planned(binding, version, operation, request, form)
    headers = {**server_headers, "content-type": "application/json"}
    if version is Version.V1_0:
        headers["A2A-Version"] = "1.0"
    query = (*planned.query, *params.items())
    with client.stream(
        planned.verb, planned.path, params=query, content=planned.body, headers=headers
    ) as response:
        return response.status_code, response.read()


def _grpc(
    channel: grpc.Channel,
    server: Server,
    version: Version,
    mode: str,
    call: tuple[Operation, Model],
) -> bytes:
    operation, request = call
    method = f"/{GRPC_SERVICES[version]}/{OPERATIONS[operation].bindings[version].grpc_method}"
    data = GRPC[version].encode_request(operation, request).SerializeToString()
    headers, params = _credentials(server, mode)
    pairs = {**headers, **params} | ({"a2a-version": "1.0"} if version is Version.V1_0 else {})
    metadata: tuple[tuple[str, str | bytes], ...] = tuple((k.lower(), v) for k, v in pairs.items())
    try:
        if OPERATIONS[operation].streaming:
            stream: Any = channel.unary_stream(method)(data, metadata=metadata, timeout=5)
            return b"".join(stream)
        reply: bytes = channel.unary_unary(method)(data, metadata=metadata, timeout=5)
        return reply
    except grpc.RpcError as error:
        return f"{error.code()} {error.details()} {error.trailing_metadata()}".encode()


def _first_task(client: httpx.Client, server: Server) -> str:
    send = _requests(server, "")[0]
    status, body = _http(client, server, "JSONRPC", Version.V1_0, mode="key", call=send)
    assert status == 200, body
    task_id: str = json.loads(body)["result"]["task"]["id"]
    return task_id


def test_no_credential_reaches_a_log_line_or_an_answer(server: tuple[Server, Listening]) -> None:
    served, receiver = server
    answers: list[tuple[str, bytes]] = []
    statuses: dict[int, int] = {}
    with (
        httpx.Client(base_url=served.url, timeout=10) as client,
        grpc.insecure_channel(served.grpc_address) as channel,
    ):
        task_id = _first_task(client, served)
        for mode in MODES:
            card = client.get(
                "/.well-known/agent-card.json", params=_credentials(served, mode)[1] or None
            )
            answers.append((f"card {mode}", card.content))
            for binding, version in BINDINGS:
                for call in _requests(served, task_id):
                    if version not in OPERATIONS[call[0]].bindings:
                        continue
                    where = f"{binding} {version.value} {mode} {call[0].name}"
                    if binding == "GRPC":
                        answers.append((where, _grpc(channel, served, version, mode, call)))
                    else:
                        status, body = _http(client, served, binding, version, mode=mode, call=call)
                        answers.append((where, body))
                        statuses[status] = statuses.get(status, 0) + 1
    time.sleep(1.0)  # the last sends' notifications are delivered
    served.process.terminate()
    served.process.wait(20)
    receiver.stop()
    log = served.log()
    for where, body in answers:
        own_input = "CREATE_TASK_PUSH_NOTIFICATION_CONFIG" in where
        for secret in CALLER_SECRETS if own_input else SECRETS:
            assert secret.encode() not in body, f"{secret} in the answer to {where}: {body!r}"
    for secret in SECRETS:
        leaked = [line for line in log.splitlines() if secret in line]
        assert not leaked, f"{secret} logged: {leaked[:3]}"
        assert secret not in receiver.out + receiver.err
    assert statuses.get(200, 0) > 40, statuses  # valid credentials were served
    assert statuses.get(401, 0) > 40, statuses  # and wrong ones refused
    assert "[redacted]" in log  # credentials in the query string, on the access log
    assert "refused http" in log  # the wrong credentials, logged without them
    assert receiver.blocks, "no notification was delivered"
    assert "X-A2A-Notification-Token: matches" in receiver.out
