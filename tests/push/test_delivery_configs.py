"""Push configs as the service takes them: a webhook URL the SSRF guard refuses is an
InvalidParamsError naming the field (of a config, and of the config a SendMessage carries);
configs come back without their secrets, which are still used for delivery; and the card
`parley serve` makes declares push notifications unless told not to."""

from __future__ import annotations

import pytest

from parley.cli.main import build_parser
from parley.cli.push import push_settings
from parley.cli.serve import make_handler
from parley.model import (
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
)
from parley.protocol.errors import InvalidParamsError
from parley.server.agent import Agent
from parley.server.push.ssrf import Allow
from parley.server.service import AgentService
from tests.push.receiver import Receiver
from tests.push.support import (
    CTX,
    Gated,
    config,
    pending,
    run,
    serving,
    start_task,
    until,
)
from tests.server.support import send

REFUSED = [
    ("not-a-url", "http or https"),
    ("http://hooks.example.com/a b", "whitespace"),
    ("ftp://127.0.0.1/hook", "http or https"),
    ("file:///etc/passwd", "http or https"),
    ("http://10.0.0.1/hook", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[::1]:8080/hook", "loopback"),
    ("http://127.0.0.2/hook", "loopback"),
    ("http://localhost:8080/hook", "this host"),
    ("http://user:pw@hooks.example.com/hook", "user information"),
]


def _field(error: InvalidParamsError) -> str:
    violations = error.field_violations
    assert violations is not None
    assert len(violations) == 1
    return violations[0].field


@pytest.mark.parametrize(("url", "why"), REFUSED)
def test_a_refused_webhook_url_is_invalid_params_naming_the_field(url: str, why: str) -> None:
    """127.0.0.1 is allowed (the settings' allow-list), nothing else that is not public."""

    async def scenario() -> None:
        gated = Gated()
        async with serving("memory", gated.agent) as service:
            task = await start_task(service, config("http://127.0.0.1:9/ok"))
            refused = config(url, id="x", task_id=task.id)
            with pytest.raises(InvalidParamsError) as made:
                await service.create_task_push_notification_config(CTX, refused)
            assert _field(made.value) == "url"
            assert why in str(made.value)

            with pytest.raises(InvalidParamsError) as sent:
                await service.send_message(CTX, send("hi", push=config(url)))
            assert _field(sent.value) == "configuration.taskPushNotificationConfig.url"
            assert why in str(sent.value)

            listed = await service.list_tasks(CTX, ListTasksRequest())
            assert [each.id for each in listed.tasks] == [task.id], "no task for the refused"
            configs = await service.list_task_push_notification_configs(
                CTX, ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            assert [each.id for each in configs.configs] == [task.id]
            gated.go.set()

    run(scenario())


def test_a_malformed_whsec_token_is_invalid_params_naming_the_token() -> None:
    """A `whsec_` token is a Standard Webhooks secret: its key is the base64 after the
    prefix, so one that is not base64 could never sign; refused when set, not at send."""

    async def scenario() -> None:
        gated = Gated()
        async with serving("memory", gated.agent) as service:
            task = await start_task(service, config("http://127.0.0.1:9/ok"))
            bad = config("http://127.0.0.1:9/ok", id="x", task_id=task.id, token="whsec_!!")
            with pytest.raises(InvalidParamsError) as made:
                await service.create_task_push_notification_config(CTX, bad)
            assert _field(made.value) == "token"
            with pytest.raises(InvalidParamsError) as sent:
                await service.send_message(
                    CTX, send("hi", push=config("http://127.0.0.1:9/a", token="whsec_!!"))
                )
            assert _field(sent.value) == "configuration.taskPushNotificationConfig.token"
            good = config("http://127.0.0.1:9/ok", id="y", task_id=task.id, token="whsec_YWJj")
            await service.create_task_push_notification_config(CTX, good)
            gated.go.set()

    run(scenario())


def test_configs_come_back_without_secrets_which_delivery_still_uses(store_url: str) -> None:
    async def scenario() -> None:
        gated = Gated()
        async with Receiver() as receiver, serving(store_url, gated.agent) as service:
            inline = config(receiver.url("/inline"), token="tok-1", auth=("Bearer", "secret-1"))
            task = await start_task(service, inline)
            made = config(
                receiver.url("/made"),
                id="made",
                task_id=task.id,
                token="tok-2",
                auth=("Basic", "c2VjcmV0LTI="),
            )
            await service.create_task_push_notification_config(CTX, made)

            for config_id, path, scheme in (
                (task.id, "/inline", "Bearer"),
                ("made", "/made", "Basic"),
            ):
                got = await service.get_task_push_notification_config(
                    CTX, GetTaskPushNotificationConfigRequest(task_id=task.id, id=config_id)
                )
                assert (got.url, got.token) == (receiver.url(path), "")
                assert got.authentication is not None
                assert (got.authentication.scheme, got.authentication.credentials) == (scheme, "")
            listed = await service.list_task_push_notification_configs(
                CTX, ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            assert sorted(each.id for each in listed.configs) == sorted([task.id, "made"])
            for each in listed.configs:
                assert each.token == ""
                assert each.authentication is not None
                assert each.authentication.credentials == ""

            gated.go.set()

            async def delivered() -> bool:
                return len(receiver.answered(200)) == 4 + 3 and not await pending(service)

            await until(service, delivered)

        for request in receiver.requests:
            headers = request.headers
            if request.target == "/inline":
                expected = ("Bearer secret-1", "tok-1")
            else:
                expected = ("Basic c2VjcmV0LTI=", "tok-2")
            assert (headers["authorization"], headers["x-a2a-notification-token"]) == expected

    run(scenario())


def _serve(*flags: str) -> AgentService:
    """What `parley serve` makes of an Agent (that does not itself declare push) with
    these options."""
    arguments = build_parser().parse_args(["serve", "examples.echo:agent", *flags])
    handler = make_handler(Agent("Plain"), "http://127.0.0.1:8000", push=push_settings(arguments))
    assert isinstance(handler, AgentService)
    return handler


def test_parley_serve_declares_push_notifications_unless_told_not_to() -> None:
    on = _serve()
    assert on.card.capabilities.push_notifications is True
    assert on.push_worker is not None
    settings = on.push_worker.settings
    assert (settings.timeout, settings.concurrency, settings.per_host) == (10.0, 64, 4)

    off = _serve("--no-push")
    assert off.card.capabilities.push_notifications is False
    assert off.push_worker is None

    handler = make_handler(Gated().agent, "http://127.0.0.1:8000", push=False)
    assert isinstance(handler, AgentService)
    assert handler.card.capabilities.push_notifications is False

    allowed = _serve("--push-allow", "127.0.0.1")
    assert allowed.push_allow.admits_address(Allow(["127.0.0.1"]).networks[0].network_address)
    assert on.push_allow.networks == ()
