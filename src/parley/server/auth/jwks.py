"""The signing keys `JwtBearer` checks tokens with: a JSON Web Key Set (RFC 7517) from a
URL, from an OpenID Connect discovery document's `jwks_uri`, or from a file, each kept
current without a restart (key rotation). Needs `joserfc` (the `auth` extra).

Theory of operation (remote sets). The keys are cached for the response's
`Cache-Control: max-age` (within bounds) or `cache_seconds`. A token naming a key id the
cache lacks, or an expired cache, makes the next request fetch the set again — at most one
attempt per `min_refresh_seconds`, whatever tokens arrive, so forged key ids cannot make
the server hammer the endpoint. Fetches are coalesced under one lock: a request that
waited while another fetched uses that fetch's result. A failed fetch (unreachable, not a
key set, no usable key) keeps the last good keys, is logged once per run of failures, and
refuses only the tokens the kept keys cannot check.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from parley.protocol.errors import UnauthenticatedError

if TYPE_CHECKING:
    import os

    from joserfc.jwk import Key

logger = logging.getLogger("parley.auth")

DISCOVERY_SUFFIX = "/.well-known/openid-configuration"
MAX_DOCUMENT_BYTES = 512 * 1024
"""A key set or discovery document larger than this is refused unread."""
MAX_CACHE_SECONDS = 24 * 3600
"""The longest a response's `max-age` keeps keys without a refetch."""
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class SigningKeys:
    """The usable signature keys of one key set, by key id (`kid`)."""

    by_kid: Mapping[str, tuple[Key, ...]]
    every: tuple[Key, ...]

    def find(self, kid: str | None, alg: str, key_type: str) -> Key | None:
        """The key for a token's `kid` and `alg`: of the algorithm's key type, and of that
        algorithm if the key names one. Without a `kid`, the only such key of the set."""
        candidates = self.every if kid is None else self.by_kid.get(kid, ())
        fitting = [k for k in candidates if k.key_type == key_type and k.alg in (None, alg)]
        if kid is None and len(fitting) != 1:
            return None
        return fitting[0] if fitting else None


def parse_jwks(document: bytes | str) -> SigningKeys:
    """A JWKS document's signature keys (keys for encryption, or that cannot be read,
    are skipped and logged); ValueError if it is not a key set or has no usable key."""
    from joserfc.errors import JoseError  # noqa: PLC0415 - the auth extra, needed only here
    from joserfc.jwk import import_key  # noqa: PLC0415

    try:
        data = json.loads(document)
    except (ValueError, UnicodeError):
        raise ValueError("not JSON") from None
    entries = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError('not a JSON Web Key Set (no "keys" list)')
    by_kid: dict[str, list[Key]] = {}
    every: list[Key] = []
    skipped: list[str] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        ops = entry.get("key_ops")
        if isinstance(ops, list) and "verify" not in ops:
            continue
        try:
            key = import_key(entry)
        except (JoseError, ValueError, TypeError, KeyError) as exc:
            skipped.append(f"key {index} ({entry.get('kid', 'no kid')}): {exc}")
            continue
        every.append(key)
        if isinstance(key.kid, str):
            by_kid.setdefault(key.kid, []).append(key)
    if skipped:
        logger.warning("JWKS keys skipped: %s", "; ".join(skipped))
    if not every:
        raise ValueError("no usable signature key")
    return SigningKeys({k: tuple(v) for k, v in by_kid.items()}, tuple(every))


class KeySource(Protocol):
    """Where a `JwtBearer` gets its keys."""

    async def keys(self, kid: str | None) -> SigningKeys:
        """The current keys (refreshed first if `kid` is not among them and a refresh is
        due); UnauthenticatedError when there are none to check tokens with."""
        ...


class FileKeys:
    """A key set in a file, read again when it changes (checked at most once a second of
    `clock`, monotonic seconds); a file that turns unreadable or invalid keeps the last
    good keys and logs why. An unreadable or invalid file at start raises (OSError,
    ValueError)."""

    def __init__(
        self, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = Path(path)
        self.clock = clock
        try:
            self._keys = parse_jwks(self.path.read_bytes())
        except ValueError as exc:
            raise ValueError(f"{self.path}: {exc}") from None
        self._stamp = _stamp(self.path)
        self._checked_at = clock()
        self._failing = False

    async def keys(self, kid: str | None) -> SigningKeys:
        now = self.clock()
        if now - self._checked_at >= 1.0:
            self._checked_at = now
            self._reload()
        return self._keys

    def _reload(self) -> None:
        try:
            stamp = _stamp(self.path)
            if stamp == self._stamp:
                return
            self._keys = parse_jwks(self.path.read_bytes())
            self._stamp = stamp
            self._failing = False
            logger.info("JWKS reloaded from %s", self.path)
        except (OSError, ValueError) as exc:
            if not self._failing:
                logger.error("JWKS file %s not reloaded, keeping the last keys: %s", self.path, exc)
            self._failing = True


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_mtime_ns, info.st_size


class RemoteKeys:
    """A key set fetched over HTTP(S) from `jwks_url`, or from the `jwks_uri` of the
    OpenID Connect discovery document at `discovery_url` (whose `issuer` must then be
    `issuer`). URLs must be https, but for a loopback host or with `allow_http`. `clock`
    (monotonic seconds) times the cache and the refresh limit."""

    def __init__(
        self,
        jwks_url: str | None = None,
        *,
        discovery_url: str | None = None,
        issuer: str | None = None,
        cache_seconds: float = 300.0,
        min_refresh_seconds: float = 30.0,
        timeout: float = 5.0,
        allow_http: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if (jwks_url is None) == (discovery_url is None):
            raise ValueError("RemoteKeys needs a jwks_url or a discovery_url (one of them)")
        if min_refresh_seconds <= 0 or cache_seconds < min_refresh_seconds:
            raise ValueError("need 0 < min_refresh_seconds <= cache_seconds")
        self.allow_http = allow_http
        self.discovery_url = discovery_url and check_url(discovery_url, allow_http)
        self.jwks_url = jwks_url and check_url(jwks_url, allow_http)
        self.issuer = issuer
        self.discovered_issuer = issuer
        """The issuer the discovery document names (once fetched), else `issuer`."""
        self.cache_seconds = cache_seconds
        self.min_refresh_seconds = min_refresh_seconds
        self.timeout = timeout
        self.clock = clock
        self.fetches = 0
        """Requests made so far (discovery and key set), for monitoring."""
        self._keys: SigningKeys | None = None
        self._expires_at = 0.0
        self._attempted_at: float | None = None
        self._attempts = 0
        self._failing = False
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    async def keys(self, kid: str | None) -> SigningKeys:
        keys = self._keys
        now = self.clock()
        wanted = (
            keys is None or now >= self._expires_at or (kid is not None and kid not in keys.by_kid)
        )
        if wanted:
            due = self._attempted_at is None or now - self._attempted_at >= self.min_refresh_seconds
            lock = self._loop_lock()
            if due or lock.locked():  # a fetch under way: wait for its keys
                attempt = self._attempts
                async with lock:
                    if due and self._attempts == attempt:  # nobody fetched meanwhile
                        await self._refresh()
        if self._keys is None:
            raise UnauthenticatedError(
                "The signing keys to check the token with are unavailable; try again later"
            )
        return self._keys

    def _loop_lock(self) -> asyncio.Lock:
        """The fetch lock of the running loop (an asyncio lock serves one loop only)."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]

    async def _refresh(self) -> None:
        import httpx  # noqa: PLC0415 - loaded by the first fetch, not by every server

        self._attempted_at = self.clock()
        try:
            if self.discovery_url is not None and (self.jwks_url is None or self._failing):
                self.jwks_url = await self._discover(self.discovery_url)
            assert self.jwks_url is not None
            body, fresh_for = await self._get(self.jwks_url)
            keys = parse_jwks(body)
        except (httpx.HTTPError, ValueError) as exc:
            self._attempts += 1
            if not self._failing:
                kept = "keeping the last keys" if self._keys is not None else "no keys yet"
                logger.error("JWKS not fetched (%s): %s", kept, exc)
            self._failing = True
            return
        self._attempts += 1  # not for a cancelled fetch: a waiting request then fetches
        lifetime = self.cache_seconds if fresh_for is None else fresh_for
        lifetime = min(max(lifetime, self.min_refresh_seconds), MAX_CACHE_SECONDS)
        self._keys, self._expires_at = keys, self.clock() + lifetime
        if self._failing:
            logger.info("JWKS fetched again from %s", self.jwks_url)
        self._failing = False

    async def _discover(self, url: str) -> str:
        """The discovery document's `jwks_uri`, once its `issuer` is the expected one."""
        body, _ = await self._get(url)
        try:
            document = json.loads(body)
        except (ValueError, UnicodeError):
            raise ValueError(f"the discovery document at {url} is not JSON") from None
        if not isinstance(document, dict):
            raise ValueError(f"the discovery document at {url} is not a JSON object")
        found = document.get("issuer")
        if not isinstance(found, str) or not found:
            raise ValueError(f"the discovery document at {url} names no issuer")
        expected = self.issuer
        if expected is None and url.endswith(DISCOVERY_SUFFIX):
            expected = url.removesuffix(DISCOVERY_SUFFIX).rstrip("/")  # OIDC Discovery §4.3
            found_base = found.rstrip("/")
        else:
            found_base = found
        if expected is not None and found_base != expected:
            raise ValueError(
                f"the discovery document at {url} names issuer {found!r}, not {expected!r}"
            )
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise ValueError(f"the discovery document at {url} has no jwks_uri")
        jwks_uri = check_url(jwks_uri, self.allow_http)
        self.discovered_issuer = found
        return jwks_uri

    async def _get(self, url: str) -> tuple[bytes, float | None]:
        """The body of a 200 answer (at most MAX_DOCUMENT_BYTES) and its max-age."""
        import httpx  # noqa: PLC0415

        self.fetches += 1
        async with (
            httpx.AsyncClient(timeout=self.timeout) as client,
            client.stream("GET", url, headers={"accept": "application/json"}) as response,
        ):
            if response.status_code != 200:
                raise ValueError(f"{url} answered HTTP {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise ValueError(f"{url} answered more than {MAX_DOCUMENT_BYTES} bytes")
            return bytes(body), max_age(response.headers.get("cache-control"))


def max_age(cache_control: str | None) -> float | None:
    """The `max-age` of a `Cache-Control` header, in seconds, if it has one."""
    found = _MAX_AGE.search(cache_control or "")
    return float(found.group(1)) if found else None


def check_url(url: str, allow_http: bool = False) -> str:
    """`url` if keys may be fetched from it: https, or http to a loopback host (or with
    `allow_http`); ValueError otherwise."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname and (allow_http or _loopback(parts.hostname)):
        return url
    raise ValueError(f"keys are fetched over https only (http for a loopback host): {url!r}")


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
