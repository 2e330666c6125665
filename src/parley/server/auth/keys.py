"""Shared secrets: API keys (in a header, query parameter or cookie) and static bearer
tokens (`Authorization: Bearer …`), each mapped to a principal. Only SHA-256 digests of
the secrets are kept in memory, and a token file may hold digests instead of secrets.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from parley.model import APIKeySecurityScheme, HTTPAuthSecurityScheme
from parley.protocol.errors import UnauthenticatedError
from parley.server.context import AuthRequest, Caller

logger = logging.getLogger("parley.auth")

MAX_SECRET_BYTES = 4096
"""A longer credential is refused before it is hashed."""
LOCATIONS = ("header", "query", "cookie")
DIGEST_PREFIX = "sha256:"


def digest(secret: str) -> str:
    """The form a secret is kept in (and may be written in a token file): `sha256:HEX`."""
    return DIGEST_PREFIX + hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _checked(secret: str, what: str) -> str:
    if len(secret) > MAX_SECRET_BYTES:
        raise UnauthenticatedError(f"The {what} is longer than {MAX_SECRET_BYTES} bytes")
    return digest(secret)


class ApiKeys:
    """API keys, each naming its principal: `ApiKeys({"k-123": "alice"})`; sent in the
    header `name` (default `X-API-Key`), or the query parameter or cookie of that name."""

    def __init__(
        self,
        keys: Mapping[str, str],
        *,
        name: str = "X-API-Key",
        location: str = "header",
        scheme_name: str = "apiKey",
        description: str = "",
    ) -> None:
        if location not in LOCATIONS:
            raise ValueError(f"location must be one of {LOCATIONS}, got {location!r}")
        if not name:
            raise ValueError("an API key needs the name of its header, parameter or cookie")
        self.name = scheme_name
        self.key_name = name
        self.location = location
        self.description = description or f"API key in the {location} {name!r}"
        self._header = name.lower()
        self._callers = {_key_digest(key): Caller(id=principal) for key, principal in keys.items()}

    def declaration(self) -> APIKeySecurityScheme:
        return APIKeySecurityScheme(
            name=self.key_name, location=self.location, description=self.description
        )

    def challenge(self) -> str:
        return f'APIKey realm="a2a", in="{self.location}", name="{self.key_name}"'

    async def verify(self, request: AuthRequest) -> Caller | None:
        if self.location == "header":
            key = request.headers.get(self._header)
        elif self.location == "query":
            key = request.query_value(self.key_name)
        else:
            key = request.cookie(self.key_name)
        if key is None:
            return None
        caller = self._callers.get(_checked(key.strip(), "API key"))
        if caller is None:
            raise UnauthenticatedError("The API key is not valid")
        return caller


def _key_digest(key: str) -> str:
    if not key or key != key.strip():
        raise ValueError("an API key must be non-empty, without surrounding spaces")
    return digest(key)


@dataclass(frozen=True, slots=True)
class Token:
    """One static bearer token's principal and optional expiry."""

    principal: str
    expires: datetime | None = None


class BearerTokens:
    """Static bearer tokens (`Authorization: Bearer TOKEN`), each naming its principal,
    from a mapping and/or a file that is read again when it changes (checked at most
    once a second; a file that turns unreadable or malformed keeps the last good
    tokens and logs why).

    File format, one token per line: `TOKEN PRINCIPAL [EXPIRES]`, where TOKEN may be
    written as `sha256:HEX` (its digest, so the file holds no secret) and EXPIRES is an
    ISO 8601 time (UTC if no offset); blank lines and `#` comments are skipped.
    """

    def __init__(
        self,
        tokens: Mapping[str, str | Token] | None = None,
        *,
        file: str | os.PathLike[str] | None = None,
        scheme_name: str = "bearer",
        description: str = "",
    ) -> None:
        if not tokens and file is None:
            raise ValueError("BearerTokens needs tokens or a token file")
        self.name = scheme_name
        self.description = description or "Bearer token"
        self._fixed = {
            _key_digest(t): p if isinstance(p, Token) else Token(p)
            for t, p in (tokens or {}).items()
        }
        self.file = Path(file) if file is not None else None
        self._from_file: dict[str, Token] = {}
        self._stamp: tuple[int, int] | None = None
        self._checked_at = 0.0
        if self.file is not None:
            self._from_file = read_token_file(self.file)  # unreadable at start: raise
            self._stamp = _stamp(self.file)

    def declaration(self) -> HTTPAuthSecurityScheme:
        return HTTPAuthSecurityScheme(scheme="Bearer", description=self.description)

    def challenge(self) -> str:
        return 'Bearer realm="a2a"'

    def reload(self) -> None:
        """Read the token file again now (a bad file raises and changes nothing)."""
        if self.file is not None:
            self._from_file = read_token_file(self.file)
            self._stamp = _stamp(self.file)

    async def verify(self, request: AuthRequest) -> Caller | None:
        token = bearer_token(request)
        if token is None:
            return None
        self._maybe_reload()
        key = _checked(token, "bearer token")
        found = self._fixed.get(key) or self._from_file.get(key)
        if found is None:
            raise UnauthenticatedError("The bearer token is not valid")
        if found.expires is not None and found.expires <= datetime.now(UTC):
            raise UnauthenticatedError("The bearer token has expired")
        return Caller(id=found.principal)

    def _maybe_reload(self) -> None:
        if self.file is None:
            return
        now = time.monotonic()
        if now - self._checked_at < 1.0:
            return
        self._checked_at = now
        try:
            stamp = _stamp(self.file)
            if stamp != self._stamp:
                self._from_file = read_token_file(self.file)
                self._stamp = stamp
                logger.info("bearer tokens reloaded from %s", self.file)
        except (OSError, ValueError) as exc:
            logger.error("bearer token file %s not reloaded, keeping the last: %s", self.file, exc)
            self._stamp = None


def bearer_token(request: AuthRequest) -> str | None:
    """The token of an `Authorization: Bearer …` header (scheme name in any case);
    None without one; UnauthenticatedError for a Bearer header without a token."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    if not token or " " in token:
        raise UnauthenticatedError("Malformed Authorization header: expected 'Bearer TOKEN'")
    return token


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_mtime_ns, info.st_size


def read_token_file(path: Path) -> dict[str, Token]:
    """Token digests to their principals and expiries; ValueError naming the bad line."""
    tokens: dict[str, Token] = {}
    for number, raw in enumerate(path.read_text("utf-8").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) not in (2, 3):
            raise ValueError(f"{path}:{number}: expected TOKEN PRINCIPAL [EXPIRES]")
        secret, principal = fields[0], fields[1]
        expires = None
        if len(fields) == 3:
            try:
                expires = datetime.fromisoformat(fields[2])
            except ValueError:
                raise ValueError(f"{path}:{number}: not an ISO 8601 time: {fields[2]!r}") from None
            if expires.tzinfo is None:
                expires = expires.replace(tzinfo=UTC)
        key = secret if secret.startswith(DIGEST_PREFIX) else digest(secret)
        if len(key) != len(DIGEST_PREFIX) + 64:
            raise ValueError(f"{path}:{number}: a sha256: digest has 64 hex digits")
        tokens[key] = Token(principal, expires)
    return tokens
