"""`parley serve`'s push-notification options: delivery is on by default (the card declares
`pushNotifications: true`); `--no-push` turns it off; `--push-allow` makes exceptions to the
SSRF guard for development and tests; `--push-credentials-key` encrypts the configs'
credentials and tokens in the store."""

from __future__ import annotations

import argparse
from typing import Literal

from parley.server.push.credentials import CredentialsKeys
from parley.server.push.delivery import PushSettings
from parley.server.push.ssrf import Allow


def add_push_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "push notifications",
        "task updates are POSTed to the webhooks clients configure (default: on)",
    )
    group.add_argument(
        "--no-push",
        action="store_true",
        help="deliver no push notifications; the card says pushNotifications: false",
    )
    group.add_argument(
        "--push-allow",
        action="append",
        default=[],
        metavar="HOST_OR_CIDR",
        help="let webhooks reach this address, network or host name although it is private "
        "or local (repeatable; e.g. 127.0.0.1 for a receiver on this machine)",
    )
    group.add_argument(
        "--push-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time one delivery attempt may take (default 10)",
    )
    group.add_argument(
        "--push-concurrency",
        type=int,
        default=64,
        metavar="N",
        help="delivery attempts in flight at most, and per webhook host a sixteenth of "
        "that, at least 1 (default 64)",
    )
    group.add_argument(
        "--push-credentials-key",
        action="append",
        default=[],
        metavar="KEY",
        help="encrypt push configs' credentials and tokens at rest with this key (Fernet, "
        "URL-safe base64 of 32 bytes; repeatable: the first encrypts, any decrypts)",
    )


def push_settings(arguments: argparse.Namespace) -> PushSettings | Literal[False]:
    """The delivery settings the options give, or False for `--no-push`."""
    if arguments.no_push:
        for option in ("push_allow", "push_credentials_key"):
            if getattr(arguments, option, None):
                flag = "--" + option.replace("_", "-")
                raise SystemExit(f"parley serve: {flag} has no effect with --no-push")
        return False
    if arguments.push_timeout <= 0 or arguments.push_concurrency < 1:
        raise SystemExit("parley serve: --push-timeout and --push-concurrency must be positive")
    try:
        allow = Allow(arguments.push_allow)
    except ValueError as exc:
        raise SystemExit(f"parley serve: --push-allow: {exc}") from None
    concurrency = arguments.push_concurrency
    return PushSettings(
        credentials=credentials_keys(arguments.push_credentials_key),
        allow=allow,
        timeout=arguments.push_timeout,
        concurrency=concurrency,
        per_host=max(1, concurrency // 16),
    )


def credentials_keys(keys: list[str]) -> CredentialsKeys | None:
    """The `--push-credentials-key` keys, or None when none is given."""
    if not keys:
        return None
    try:
        return CredentialsKeys(keys)
    except (ValueError, ImportError) as exc:
        raise SystemExit(f"parley serve: --push-credentials-key: {exc}") from None
