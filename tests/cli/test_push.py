"""`parley serve`'s push-notification options (`parley.cli.push`) in-process: delivery on by
default with the documented defaults (docs/push.md), `--no-push` refusing options it would
ignore, `--push-allow` entries of each form, the per-host share of `--push-concurrency`,
`--push-credentials-key` keys that encrypt and decrypt, and each mistake one line naming
its option (never echoing a key). `parley push list|retry` is in test_push_commands.py."""

from __future__ import annotations

import argparse
from ipaddress import ip_address

import pytest

from parley.cli.main import build_parser
from parley.cli.push import credentials_keys, push_settings
from parley.server.push.credentials import generate_key
from parley.server.push.delivery import PushSettings


def serve(*flags: str) -> argparse.Namespace:
    return build_parser("serve").parse_args(["serve", "examples.echo:agent", *flags])


def settings(*flags: str) -> PushSettings:
    given = push_settings(serve(*flags))
    assert given is not False
    return given


def test_delivery_is_on_by_default_with_the_documented_defaults() -> None:
    given = settings()
    assert (given.timeout, given.concurrency, given.per_host) == (10.0, 64, 4)
    assert given.credentials is None
    assert given.allow.names == frozenset()
    assert given.allow.networks == ()


def test_no_push_turns_delivery_off() -> None:
    assert push_settings(serve("--no-push")) is False


@pytest.mark.parametrize(
    ("flags", "option"),
    [
        (["--push-allow", "127.0.0.1"], "--push-allow"),
        (["--push-credentials-key", "k"], "--push-credentials-key"),
    ],
)
def test_no_push_with_an_option_it_would_ignore_is_refused(flags: list[str], option: str) -> None:
    with pytest.raises(SystemExit, match=f"^parley serve: {option} has no effect with --no-push$"):
        push_settings(serve("--no-push", *flags))


@pytest.mark.parametrize(
    ("concurrency", "per_host"), [("1", 1), ("15", 1), ("16", 1), ("32", 2), ("64", 4), ("100", 6)]
)
def test_each_webhook_host_gets_a_sixteenth_of_the_concurrency_at_least_one(
    concurrency: str, per_host: int
) -> None:
    given = settings("--push-concurrency", concurrency)
    assert (given.concurrency, given.per_host) == (int(concurrency), per_host)


@pytest.mark.parametrize(
    "flags",
    [
        ["--push-timeout", "0"],
        ["--push-timeout", "-1"],
        ["--push-concurrency", "0"],
        ["--push-concurrency", "-5"],
    ],
)
def test_timeouts_and_concurrency_must_be_positive(flags: list[str]) -> None:
    with pytest.raises(SystemExit, match="must be positive"):
        push_settings(serve(*flags))


def test_allowed_addresses_networks_and_names() -> None:
    allow = settings(
        "--push-allow", "127.0.0.1", "--push-allow", "10.0.0.0/8", "--push-allow", "hooks.internal"
    ).allow
    assert allow.admits_address(ip_address("127.0.0.1"))
    assert allow.admits_address(ip_address("10.1.2.3"))
    assert allow.admits_address(ip_address("::ffff:10.9.9.9"))  # IPv4-mapped
    assert not allow.admits_address(ip_address("192.168.0.1"))
    assert allow.admits_name("hooks.internal")
    assert not allow.admits_name("other.internal")


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "http://x", "a b", "user@host"])
def test_a_malformed_allow_entry_is_one_line(entry: str) -> None:
    with pytest.raises(SystemExit) as exited:
        push_settings(serve("--push-allow", entry))
    message = str(exited.value.code)
    assert message.startswith("parley serve: --push-allow: push allow-list entry ")
    assert "\n" not in message


def test_credentials_keys_encrypt_with_the_first_and_decrypt_with_any() -> None:
    old, new = generate_key(), generate_key()
    before = credentials_keys([old])
    after = credentials_keys([new, old])
    assert before is not None
    assert after is not None
    sealed = before.encrypt("token-1")
    assert "token-1" not in sealed
    assert after.decrypt(sealed) == "token-1"
    resealed = after.encrypt("token-2")
    assert credentials_keys([new]).decrypt(resealed) == "token-2"  # type: ignore[union-attr]


def test_no_key_means_credentials_stored_as_given() -> None:
    assert credentials_keys([]) is None


def test_the_keys_reach_the_settings() -> None:
    key = generate_key()
    given = settings("--push-credentials-key", key)
    assert given.credentials is not None
    assert given.credentials.decrypt(given.credentials.encrypt("x")) == "x"


def test_a_malformed_key_is_one_line_that_does_not_echo_it() -> None:
    with pytest.raises(SystemExit) as exited:
        push_settings(serve("--push-credentials-key", "not-a-fernet-key-SECRET"))
    message = str(exited.value.code)
    assert message.startswith("parley serve: --push-credentials-key: ")
    assert "SECRET" not in message
