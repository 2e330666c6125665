"""Push delivery end to end, on each store backend: an `AgentService` with its delivery
worker running POSTs a task's notifications to a real receiver on 127.0.0.1, in order,
retrying each until the receiver takes it; with the config's headers and signatures
(checked by the independent `standardwebhooks` package), and payloads in the protocol
version the config was set in (checked by the official SDK's protobuf and the 0.3 schema)."""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from a2a.types import a2a_pb2
from google.protobuf import json_format
from jsonschema import Draft7Validator
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from parley.protocol.negotiation import Version
from parley.server.context import CallContext
from parley.server.push import signing
from parley.server.service import AgentService
from parley.wire.v1_0 import CODEC as V1_0
from tests.ports import free_port
from tests.push.receiver import Receiver, Reply
from tests.push.support import (
    CTX,
    Gated,
    config,
    fast,
    finished,
    in_order,
    pending,
    run,
    serving,
    start_task,
    until,
)

SCHEMA_0_3 = Path(__file__).parents[2] / "spec" / "a2a-v0.3.schema.json"


async def all_delivered(service: AgentService, receiver: Receiver, count: int) -> bool:
    """The receiver took `count` notifications and the outbox has none left."""
    return len(receiver.answered(200)) >= count and not await pending(service)


def test_retried_until_accepted_and_the_rest_follow_in_order(store_url: str) -> None:
    """503, 503, 503, 200: the task's first notification is delivered on the fourth attempt,
    with one webhook-id throughout; then each later notification of the task once, in the
    order recorded."""

    async def scenario() -> None:
        gated = Gated()
        async with (
            Receiver([Reply(503, b"busy")] * 3) as receiver,
            serving(store_url, gated.agent) as service,
        ):
            task = await start_task(service, config(receiver.url()))
            await until(
                service, lambda: all_delivered(service, receiver, 1), what="first delivered"
            )
            assert len(receiver.requests) == 4
            gated.go.set()
            await until(service, lambda: all_delivered(service, receiver, 4), what="all delivered")

        first = receiver.requests[0].id
        assert first.startswith(f"{task.id}.")
        assert receiver.ids[:4] == [first] * 4
        assert [r.reply.status for r in receiver.requests] == [503, 503, 503] + [200] * 4
        assert [r.kind for r in receiver.requests] == ["task"] * 4 + list(Gated.KINDS[1:])
        delivered = [r.id for r in receiver.answered(200)]
        assert in_order(delivered)
        assert all(each.startswith(f"{task.id}.") for each in delivered)
        assert receiver.requests[0].json()["task"]["id"] == task.id
        assert receiver.requests[-1].json()["statusUpdate"]["status"]["state"] == (
            "TASK_STATE_COMPLETED"
        )
        assert len(receiver.requests) == 7

    run(scenario())


def test_a_receiver_that_was_down_gets_everything_when_it_is_back(store_url: str) -> None:
    """Nothing listens on the webhook's port: attempts fail (connection refused) and are
    retried; once a receiver listens there, every notification arrives, in order, once."""

    async def scenario() -> None:
        gated = Gated()
        receiver = Receiver(port=free_port())
        async with serving(store_url, gated.agent, fast(retries=100)) as service:
            task = await start_task(service, config(receiver.url()))
            gated.go.set()
            await until(service, lambda: finished(service, task.id))

            async def failed_twice() -> bool:
                heads = await pending(service)
                return bool(heads) and heads[0].attempts >= 2

            await until(service, failed_twice, what="two failed attempts")
            waiting = await pending(service)
            assert len(waiting) == 4
            assert in_order([each.notification_id for each in waiting])
            assert "ConnectionRefused" in (waiting[0].last_error or "")
            assert all(each.attempts == 0 for each in waiting[1:])

            await receiver.start()
            try:
                await until(service, lambda: all_delivered(service, receiver, 4), what="delivered")
            finally:
                await receiver.stop()

        assert receiver.ids == [each.notification_id for each in waiting]
        assert [r.kind for r in receiver.requests] == list(Gated.KINDS)

    run(scenario())


def whsec() -> str:
    return "whsec_" + base64.b64encode(bytes(range(32))).decode()


def test_headers_authentication_token_and_signatures(store_url: str) -> None:
    """Authorization from the config's authentication, the token header, the 1.0 content
    type; a whsec_ token's signature verifies with a Standard Webhooks library, a plain
    token's with `signing.verify`; without a token, no signature and no token header."""
    secret = whsec()

    async def scenario() -> None:
        gated = Gated()
        async with Receiver() as receiver, serving(store_url, gated.agent) as service:
            inline = config(receiver.url("/a"), token=secret, auth=("Bearer", "sekrit"))
            task = await start_task(service, inline)
            for path, token, auth in (
                ("/b", "plain-token", ("Basic", "dXNlcjpwdw==")),
                ("/c", "", None),
            ):
                made = config(
                    receiver.url(path), id=path[1:], task_id=task.id, token=token, auth=auth
                )
                await service.create_task_push_notification_config(CTX, made)
            gated.go.set()
            await until(service, lambda: all_delivered(service, receiver, 4 + 3 + 3))

        by_path: dict[str, list[Any]] = {}
        for request in receiver.requests:
            by_path.setdefault(request.target, []).append(request)
        assert sorted(by_path) == ["/a", "/b", "/c"]
        assert [len(by_path[p]) for p in ("/a", "/b", "/c")] == [4, 3, 3]
        for request in receiver.requests:
            headers = request.headers
            assert headers["content-type"] == "application/a2a+json"
            assert headers["host"] == f"127.0.0.1:{receiver.port}"
            assert headers["user-agent"].startswith("parley/")
            assert int(headers["webhook-timestamp"]) > 0
            assert request.id.startswith(f"{task.id}.")

        for request in by_path["/a"]:
            headers = request.headers
            assert headers["authorization"] == "Bearer sekrit"
            assert headers["x-a2a-notification-token"] == secret
            assert Webhook(secret).verify(request.body, headers) == request.json()
            assert signing.verify(signing.secret_key(secret), headers, request.body) == request.id
            with pytest.raises(WebhookVerificationError):
                Webhook(whsec().replace("AAEC", "AAED")).verify(request.body, headers)
            with pytest.raises(WebhookVerificationError):
                Webhook(secret).verify(request.body + b" ", headers)

        for request in by_path["/b"]:
            headers = request.headers
            assert headers["authorization"] == "Basic dXNlcjpwdw=="
            assert headers["x-a2a-notification-token"] == "plain-token"
            assert signing.verify(b"plain-token", headers, request.body) == request.id
            with pytest.raises(signing.SignatureError, match="no signature matches"):
                signing.verify(b"other-token", headers, request.body)
            with pytest.raises(signing.SignatureError, match="no signature matches"):
                signing.verify(b"plain-token", headers, request.body.replace(b"{", b"{ ", 1))

        for request in by_path["/c"]:
            for absent in ("authorization", "x-a2a-notification-token", "webhook-signature"):
                assert absent not in request.headers

    run(scenario())


@cache
def task_0_3_validator() -> Draft7Validator:
    schema = json.loads(SCHEMA_0_3.read_text())
    return Draft7Validator({"$ref": "#/definitions/Task", "definitions": schema["definitions"]})


def test_payloads_are_in_the_version_the_config_was_set_in(store_url: str) -> None:
    """A config set in 1.0 gets A2A 1.0 StreamResponses (one member each, parsed strictly by
    the official protobuf); one set in 0.3 gets the task as 0.3 JSON (`kind: task`,
    valid against the 0.3 schema, as it is when sent), as application/json."""
    v0_3 = CallContext(version=Version.V0_3)

    async def scenario() -> None:
        gated = Gated()
        async with Receiver() as receiver, serving(store_url, gated.agent) as service:
            task = await start_task(service, config(receiver.url("/v1")))
            old = config(receiver.url("/v03"), id="old", task_id=task.id)
            await service.create_task_push_notification_config(v0_3, old)
            gated.go.set()
            await until(service, lambda: all_delivered(service, receiver, 4 + 3))

        v1 = [r for r in receiver.requests if r.target == "/v1"]
        assert [r.kind for r in v1] == list(Gated.KINDS)
        for request in v1:
            assert request.headers["content-type"] == "application/a2a+json"
            message = a2a_pb2.StreamResponse()
            json_format.Parse(request.body, message, ignore_unknown_fields=False)
            assert (
                message.WhichOneof("payload")
                == {
                    "task": "task",
                    "statusUpdate": "status_update",
                    "artifactUpdate": "artifact_update",
                }[request.kind]
            )
            V1_0.decode_event(request.json())  # and parley reads it back

        old_ones = [r for r in receiver.requests if r.target == "/v03"]
        assert len(old_ones) == 3
        assert in_order([r.id for r in old_ones])
        for request in old_ones:
            assert request.headers["content-type"] == "application/json"
            document = request.json()
            errors = list(task_0_3_validator().iter_errors(document))
            assert not errors, errors[0].message
            assert (document["kind"], document["id"]) == ("task", task.id)
        last = old_ones[-1].json()
        assert last["status"]["state"] == "completed"
        assert last["artifacts"][0]["parts"][0]["text"] == "result of hi"

    run(scenario())
