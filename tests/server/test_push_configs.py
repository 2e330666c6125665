"""The push-config operations' own rules (`parley.server.push_configs`): a webhook URL and
a Standard Webhooks token are checked when a config is set, the error naming the field
the caller sent (R-PUSH-17, R-ERR-10); and a config shown back keeps its authentication
scheme but never its credentials or token (R-PUSH-21, R-PUSH-22)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.model import AuthenticationInfo, TaskPushNotificationConfig
from parley.protocol.errors import InvalidParamsError
from parley.server.push.ssrf import NO_ALLOW, Allow
from parley.server.push_configs import check_webhook, redacted

SECRET = "whsec_" + base64.b64encode(b"k" * 24).decode()


def hook(
    url: str = "https://hooks.example.com/a2a", **fields: object
) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(url=url, task_id="t", id="c", **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://10.1.2.3/hook",
        "http://172.16.0.1/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost/hook",
        "http://[::1]/hook",
        "file:///etc/passwd",
        "https://user:pw@hooks.example.com/",
    ],
)
def test_a_refused_url_is_invalid_params_on_the_field_given(url: str) -> None:
    """R-PUSH-17: private ranges, localhost, link-local, other schemes and userinfo."""
    with pytest.raises(InvalidParamsError) as caught:
        check_webhook(hook(url), NO_ALLOW)
    [violation] = caught.value.field_violations
    assert violation.field == "url"
    assert violation.description.startswith("webhook URL refused: ")
    with pytest.raises(InvalidParamsError) as inline:
        check_webhook(hook(url), NO_ALLOW, "configuration.taskPushNotificationConfig.url")
    assert inline.value.field_violations[0].field == "configuration.taskPushNotificationConfig.url"


def test_an_allowed_address_passes() -> None:
    check_webhook(hook("http://127.0.0.1:9000/hook"), Allow(["127.0.0.1"]))


@pytest.mark.parametrize("token", ["", "plain-token", "whsec", SECRET, "Bearer x"])
def test_a_public_url_with_any_plain_token_or_a_good_secret_passes(token: str) -> None:
    check_webhook(hook(token=token), NO_ALLOW)


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("url", "token"),
        (
            "configuration.taskPushNotificationConfig.url",
            "configuration.taskPushNotificationConfig.token",
        ),
    ],
)
def test_a_malformed_secret_names_the_token_beside_the_url(field: str, expected: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        check_webhook(hook(token="whsec_!!not-base64!!"), NO_ALLOW, field)
    [violation] = caught.value.field_violations
    assert violation.field == expected
    assert "whsec_" in violation.description
    assert "!!not-base64!!" not in caught.value.message  # the secret is not repeated


def test_the_url_is_checked_before_the_token() -> None:
    with pytest.raises(InvalidParamsError) as caught:
        check_webhook(hook("http://10.0.0.1/", token="whsec_!!"), NO_ALLOW)
    assert caught.value.field_violations[0].field == "url"


def test_redacted_drops_credentials_and_token_but_keeps_the_scheme() -> None:
    """R-PUSH-21/R-PUSH-22: what a client sees of a stored config tells it how the agent
    authenticates, never with what."""
    config = hook(
        token="tok-123",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="s3cret"),
    )
    shown = redacted(config)
    assert shown.authentication == AuthenticationInfo(scheme="Bearer", credentials="")
    assert shown.token == ""
    assert (shown.url, shown.id, shown.task_id) == (config.url, config.id, config.task_id)


def test_a_config_without_secrets_is_returned_as_it_is() -> None:
    plain = hook()
    assert redacted(plain) is plain
    scheme_only = hook(authentication=AuthenticationInfo(scheme="Basic"))
    assert redacted(scheme_only) is scheme_only


def test_a_token_alone_is_dropped() -> None:
    assert redacted(hook(token="t")).token == ""


def test_credentials_alone_are_dropped() -> None:
    config = hook(authentication=AuthenticationInfo(scheme="Basic", credentials="dXNlcjpwdw=="))
    shown = redacted(config)
    assert shown.authentication is not None
    assert shown.authentication.credentials == ""


@given(token=st.text(max_size=30), credentials=st.text(max_size=30))
def test_no_secret_survives_redaction(token: str, credentials: str) -> None:
    config = hook(
        token=token, authentication=AuthenticationInfo(scheme="X", credentials=credentials)
    )
    shown = redacted(config)
    assert shown.token == ""
    assert shown.authentication is not None
    assert shown.authentication.credentials == ""
    assert redacted(shown) == shown  # idempotent
