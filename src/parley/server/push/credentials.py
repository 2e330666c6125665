"""Push credentials encrypted at rest: with `CredentialsKeys` in `PushSettings.credentials`
(`parley serve --push-credentials-key`), a push config's `authentication.credentials` and
`token` are stored encrypted (Fernet: AES-128-CBC with HMAC-SHA256) and decrypted only by
the delivery worker, as it builds a notification's headers.

Several keys rotate: the first encrypts, any of them decrypts. A stored value without the
`SEALED` prefix was written without encryption and is used as it is; a sealed value that
no key decrypts is a `CredentialsKeyError` naming the option. Needs `cryptography` (the
`auth` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from parley.model import TaskPushNotificationConfig

SEALED = "parley-sealed:v1:"
"""The prefix of an encrypted value (the Fernet token follows)."""
OPTION = "--push-credentials-key (PushSettings.credentials in Python)"


class CredentialsKeyError(ValueError):
    """A stored push credential is encrypted and no configured key decrypts it."""


def generate_key() -> str:
    """A new key (32 random bytes, URL-safe base64), as `--push-credentials-key` takes it."""
    return str(_fernet().Fernet.generate_key().decode("ascii"))


class CredentialsKeys:
    """The keys push credentials are encrypted with at rest: the first encrypts, all
    decrypt. Each is a Fernet key (`generate_key()`); ValueError for a malformed one
    (never echoing it)."""

    def __init__(self, keys: Sequence[str | bytes]) -> None:
        if isinstance(keys, str | bytes) or not keys:
            raise ValueError("push credentials encryption needs a list of one or more keys")
        fernet = _fernet()
        try:
            self._keys = fernet.MultiFernet([fernet.Fernet(key) for key in keys])
        except (ValueError, TypeError):
            raise ValueError(
                "a push credentials key must be 32 bytes in URL-safe base64 "
                "(parley.server.push.credentials.generate_key())"
            ) from None
        self._invalid: type[Exception] = fernet.InvalidToken

    def __repr__(self) -> str:
        return "CredentialsKeys(…)"  # never the keys

    def encrypt(self, value: str) -> str:
        """`value` sealed: the prefix and a Fernet token of its UTF-8 bytes."""
        token: bytes = self._keys.encrypt(value.encode("utf-8"))
        return SEALED + token.decode("ascii")

    def decrypt(self, value: str) -> str:
        """A sealed value's plaintext; an unsealed value as it is."""
        if not value.startswith(SEALED):
            return value
        try:
            return str(self._keys.decrypt(value[len(SEALED) :].encode("ascii")).decode("utf-8"))
        except (self._invalid, UnicodeError):
            raise CredentialsKeyError(
                f"a stored push credential was encrypted with a key not given to {OPTION}"
            ) from None

    def seal(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """The config with its credentials and token encrypted (empty ones stay empty)."""
        auth = config.authentication
        if auth is not None and auth.credentials and not is_sealed(auth.credentials):
            auth = replace(auth, credentials=self.encrypt(auth.credentials))
        token = config.token
        if token and not is_sealed(token):
            token = self.encrypt(token)
        if auth is config.authentication and token == config.token:
            return config
        return replace(config, authentication=auth, token=token)


def is_sealed(value: str) -> bool:
    return value.startswith(SEALED)


def unsealed(
    config: TaskPushNotificationConfig, keys: CredentialsKeys | None
) -> TaskPushNotificationConfig:
    """The config with its credentials and token decrypted, for a delivery;
    CredentialsKeyError when one is sealed and `keys` cannot decrypt it."""
    auth = config.authentication
    sealed_credentials = auth is not None and is_sealed(auth.credentials)
    if not sealed_credentials and not is_sealed(config.token):
        return config
    if keys is None:
        raise CredentialsKeyError(
            f"a stored push credential is encrypted, and no key was given to {OPTION}"
        )
    if auth is not None and sealed_credentials:
        auth = replace(auth, credentials=keys.decrypt(auth.credentials))
    return replace(config, authentication=auth, token=keys.decrypt(config.token))


def _fernet() -> Any:
    try:
        from cryptography import fernet  # noqa: PLC0415 - the auth extra, only when used
    except ImportError:
        raise ImportError(
            "encrypting push credentials needs the auth extra: pip install 'parley-a2a[auth]'"
        ) from None
    return fernet


__all__ = [
    "SEALED",
    "CredentialsKeyError",
    "CredentialsKeys",
    "generate_key",
    "is_sealed",
    "unsealed",
]
