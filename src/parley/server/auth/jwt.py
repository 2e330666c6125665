"""`JwtBearer`: OAuth 2.0 / OpenID Connect access tokens that are JWTs (RFC 7519), sent as
`Authorization: Bearer …` (RFC 6750) and checked against the issuer's published keys
(`parley.server.auth.jwks`). `joserfc` (the `auth` extra) parses the token and checks its
signature; this module decides what is accepted — which algorithms, keys, issuer,
audience and times — and who the caller is.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Mapping
from types import EllipsisType
from typing import TYPE_CHECKING, Any

from parley.model import (
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
)
from parley.protocol.errors import InvalidParamsError, UnauthenticatedError
from parley.protocol.validation import check_id
from parley.server.auth.jwks import FileKeys, KeySource, RemoteKeys
from parley.server.auth.keys import bearer_token
from parley.server.context import AuthRequest, Caller

if TYPE_CHECKING:
    from joserfc.jws import CompactSignature, JWSRegistry

DEFAULT_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
    "Ed25519",
)
"""Asymmetric algorithms only: a verifier holding a shared secret could also forge tokens."""
SHARED_SECRET_ALGORITHMS = frozenset({"HS256", "HS384", "HS512"})
MAX_TOKEN_BYTES = 8192
"""A longer token is refused before it is parsed."""
REALM = 'Bearer realm="a2a"'
VERIFIED_SECONDS = 60.0
"""How long a token that passed every check is trusted again without a new check (never
past its `exp`): a key withdrawn from the issuer's set stops working within this time."""
VERIFIED_TOKENS = 1024
"""Most tokens remembered as verified (the oldest is forgotten first)."""


class JwtBearer:
    """JWT bearer tokens signed by one issuer, whose keys come from exactly one of
    `jwks_url`, `discovery_url` (OpenID Connect discovery: `jwks_uri` and `issuer`),
    `jwks_file` or `keys` (any `KeySource`).

    `issuer` and `audience` must be given (`None` turns a check off): a token must come
    from `issuer` (with `discovery_url`, the discovered issuer by default) and name one
    of `audience` in its `aud`. It must carry `exp`; `exp`, `nbf` and `iat` are checked
    with `leeway` seconds of clock skew. Its `alg` must be one of `algorithms` and fit
    the key its `kid` names.

    The caller's id is `principal_prefix` + the `principal_claim` (default `sub`); the
    default prefix is the token's `iss` and `#`, so that two issuers' subjects (and
    other schemes' principals) never share tasks. Scopes come from `scope` and `scp`
    (space-separated strings or lists); the caller's claims are the token's.

    The card declares an OAuth 2.0 client-credentials flow when `token_url` is given
    (with `scopes`, name → description), else OpenID Connect with `discovery_url`, else
    HTTP Bearer with format JWT.
    """

    def __init__(
        self,
        *,
        issuer: str | EllipsisType | None = ...,
        audience: str | Iterable[str] | EllipsisType | None = ...,
        jwks_url: str | None = None,
        discovery_url: str | None = None,
        jwks_file: str | os.PathLike[str] | None = None,
        keys: KeySource | None = None,
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        leeway: float = 60.0,
        principal_claim: str = "sub",
        principal_prefix: str | None = None,
        token_url: str | None = None,
        scopes: Mapping[str, str] | None = None,
        scheme_name: str = "jwt",
        description: str = "",
        max_token_bytes: int = MAX_TOKEN_BYTES,
        cache_seconds: float = 300.0,
        min_refresh_seconds: float = 30.0,
        timeout: float = 5.0,
        allow_http: bool = False,
    ) -> None:
        try:
            from joserfc.jws import JWSRegistry  # noqa: PLC0415 - the auth extra, only here
        except ImportError:
            raise ImportError(
                "JwtBearer needs the auth extra: pip install 'parley-a2a[auth]'"
            ) from None
        sources = [jwks_url, discovery_url, jwks_file, keys]
        if sum(source is not None for source in sources) != 1:
            raise ValueError("JwtBearer needs one of jwks_url, discovery_url, jwks_file or keys")
        if issuer is ... and discovery_url is None:
            raise ValueError("JwtBearer needs issuer= (None accepts tokens from any issuer)")
        if audience is ...:
            raise ValueError(
                "JwtBearer needs audience= (None accepts tokens meant for any service)"
            )
        if scopes and token_url is None:
            raise ValueError("scopes are declared with the token_url of their OAuth 2.0 flow")
        self.name = scheme_name
        self.issuer = None if issuer is ... else issuer
        self.audience = None if audience is None else _strings(audience)
        self.algorithms = _algorithms(algorithms, remote=keys is None and jwks_file is None)
        self.leeway = leeway
        self.principal_claim = principal_claim
        self.principal_prefix = principal_prefix
        self.token_url = token_url
        self.scopes = dict(scopes or {})
        self.discovery_url = discovery_url
        self.description = description or "An OAuth 2.0 access token (a JWT) as a bearer token"
        self.max_token_bytes = max_token_bytes
        self._key_types = {alg: JWSRegistry.algorithms[alg].key_type for alg in self.algorithms}
        self._registry = _registry(self.algorithms, max_token_bytes)
        self._discovered: RemoteKeys | None = None
        self._verified: dict[str, tuple[Caller, float]] = {}
        if keys is not None:
            self.keys = keys
        elif jwks_file is not None:
            self.keys = FileKeys(jwks_file)
        else:
            remote = RemoteKeys(
                jwks_url,
                discovery_url=discovery_url,
                issuer=self.issuer,
                cache_seconds=cache_seconds,
                min_refresh_seconds=min_refresh_seconds,
                timeout=timeout,
                allow_http=allow_http,
            )
            self._discovered = remote if issuer is ... else None
            self.keys = remote

    def declaration(self) -> SecurityScheme:
        if self.token_url is not None:
            flow = ClientCredentialsOAuthFlow(token_url=self.token_url, scopes=self.scopes)
            return OAuth2SecurityScheme(
                flows=OAuthFlows(client_credentials=flow), description=self.description
            )
        if self.discovery_url is not None:
            return OpenIdConnectSecurityScheme(
                open_id_connect_url=self.discovery_url, description=self.description
            )
        return HTTPAuthSecurityScheme(
            scheme="Bearer", bearer_format="JWT", description=self.description
        )

    def challenge(self) -> str:
        return REALM

    async def verify(self, request: AuthRequest) -> Caller | None:
        token = bearer_token(request)
        if token is None:
            return None
        return await self.check(token)

    async def check(self, token: str) -> Caller:
        """The caller a token names; UnauthenticatedError (with the RFC 6750
        `invalid_token` challenge) saying why it is refused. A token that passed is
        trusted again for `VERIFIED_SECONDS` (never past its expiry) without the
        signature check, the bulk of the cost: a client reuses its token for every call."""
        known = self._verified.get(token)
        if known is not None:
            caller, until = known
            if time.time() < until:
                return caller
            del self._verified[token]
        caller = await self._check(token)
        if len(self._verified) >= VERIFIED_TOKENS:
            del self._verified[next(iter(self._verified))]
        expires = float(caller.claims["exp"])  # type: ignore[arg-type] # checked: a number
        self._verified[token] = (caller, min(time.time() + VERIFIED_SECONDS, expires))
        return caller

    async def _check(self, token: str) -> Caller:
        from joserfc.errors import JoseError  # noqa: PLC0415 - the auth extra, only here
        from joserfc.jws import validate_compact  # noqa: PLC0415

        signed, alg, kid = self._parse(token)
        key = (await self.keys.keys(kid)).find(kid, alg, self._key_types[alg])
        if key is None:
            if kid is None:
                raise refused(f"The token has no kid, and the key set has not one key for {alg}")
            raise refused(f"The issuer's key set has no key {kid[:64]!r} for {alg}")
        try:
            valid = validate_compact(signed, key, registry=self._registry)
        except JoseError as exc:  # e.g. a registered header parameter of the wrong type
            raise refused(f"Malformed JWT: {_reason(exc)}") from None
        except Exception:  # a check that cannot complete is a failed check
            valid = False
        if not valid:
            raise refused("The token's signature is not valid")
        try:
            claims = json.loads(signed.payload)
        except (ValueError, UnicodeError):
            claims = None
        if not isinstance(claims, dict):
            raise refused("Malformed JWT: its payload is not a JSON object")
        self._check_times(claims)
        self._check_parties(claims)
        return self._caller(claims)

    def _parse(self, token: str) -> tuple[CompactSignature, str, str | None]:
        """The token as a signed object with its algorithm and key id, before any key
        is looked up: too long, malformed or of an algorithm not accepted, refused."""
        from joserfc.jws import extract_compact  # noqa: PLC0415 - the auth extra, only here

        if len(token) > self.max_token_bytes:
            raise refused(f"The bearer token is longer than {self.max_token_bytes} bytes")
        try:  # the library's parser meets any bytes a caller sends: whatever it raises
            signed = extract_compact(token.encode("ascii"), registry=self._registry)
            header = signed.headers()
        except Exception as exc:  # is a malformed token, never a server error
            raise refused(f"Malformed JWT: {_reason(exc)}") from None
        if not isinstance(header, dict):
            raise refused("Malformed JWT: its header is not a JSON object")
        alg, kid = header.get("alg"), header.get("kid")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise refused(f"The token's algorithm {str(alg)[:16]!r} is not accepted")
        if kid is not None and not isinstance(kid, str):
            raise refused("Malformed JWT: its kid is not a string")
        if "crit" in header or "b64" in header:
            raise refused("The token uses JWS extensions (crit, b64) that are not accepted")
        return signed, alg, kid

    def _check_times(self, claims: Mapping[str, Any]) -> None:
        now, leeway = time.time(), self.leeway
        exp, nbf, iat = claims.get("exp"), claims.get("nbf"), claims.get("iat")
        if exp is None:
            raise refused("The token has no expiry (exp)")
        for name, value in (("exp", exp), ("nbf", nbf), ("iat", iat)):
            if value is not None and not _numeric(value):
                raise refused(f"Malformed JWT: its {name} is not a number")
        if now >= exp + leeway:
            raise refused("The token has expired")
        if nbf is not None and now + leeway < nbf:
            raise refused("The token is not valid yet (nbf)")
        if iat is not None and now + leeway < iat:
            raise refused("The token was issued in the future (iat)")

    def _check_parties(self, claims: Mapping[str, Any]) -> None:
        issuer = self.issuer if self._discovered is None else self._discovered.discovered_issuer
        if (issuer is not None or self._discovered is not None) and claims.get("iss") != issuer:
            raise refused("The token was not issued by the issuer this agent trusts (iss)")
        if self.audience is not None:
            aud = claims.get("aud")
            named = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
            if not any(isinstance(a, str) and a in self.audience for a in named):
                raise refused("The token is not meant for this agent (aud)")

    def _caller(self, claims: dict[str, Any]) -> Caller:
        value = claims.get(self.principal_claim)
        if not isinstance(value, str) or not value:
            raise refused(f"The token has no {self.principal_claim} naming the caller")
        prefix = self.principal_prefix
        if prefix is None:
            iss = claims.get("iss")
            prefix = f"{iss}#" if isinstance(iss, str) and iss else ""
        principal = prefix + value
        try:
            check_id(principal, self.principal_claim)
        except InvalidParamsError:
            raise refused(f"The token's {self.principal_claim} cannot name a caller") from None
        scopes = _scopes(claims.get("scope")) | _scopes(claims.get("scp"))
        return Caller(id=principal, scopes=scopes, claims=claims)


def refused(message: str) -> UnauthenticatedError:
    """A refusal whose challenge says the token is not valid (RFC 6750 §3.1)."""
    text = "".join(c for c in message if " " <= c <= "~" and c not in '"\\')
    challenge = f'{REALM}, error="invalid_token", error_description="{text}"'
    return UnauthenticatedError(message, challenges=(challenge,))


def _reason(exc: Exception) -> str:
    description = getattr(exc, "description", None)
    return str(description or exc)[:120]


def _numeric(value: object) -> bool:
    """A NumericDate: a finite JSON number (not a boolean)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _scopes(value: object) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(v for v in value if isinstance(v, str) and v)
    return frozenset()


def _strings(value: str | Iterable[str]) -> frozenset[str]:
    found = frozenset((value,) if isinstance(value, str) else value)
    if not found or not all(found):
        raise ValueError("audience must name at least one non-empty audience")
    return found


def _algorithms(names: Iterable[str], *, remote: bool) -> frozenset[str]:
    from joserfc.jws import JWSRegistry  # noqa: PLC0415 - the auth extra, only here

    chosen = frozenset(names)
    unknown = sorted(a for a in chosen if a not in JWSRegistry.algorithms or a == "none")
    if unknown or not chosen:
        raise ValueError(f"algorithms must be JWS signature algorithms, not {unknown or '[]'}")
    if remote and chosen & SHARED_SECRET_ALGORITHMS:
        raise ValueError("shared-secret algorithms (HS*) cannot use keys fetched from a URL")
    return chosen


def _registry(algorithms: frozenset[str], max_bytes: int) -> JWSRegistry:
    from joserfc.errors import UnsupportedAlgorithmError  # noqa: PLC0415 - the auth extra
    from joserfc.jwa import JWSAlgModel  # noqa: PLC0415
    from joserfc.jws import JWSRegistry  # noqa: PLC0415

    class Registry(JWSRegistry):
        """The allow-list is the operator's decision: a listed algorithm is used without
        the library's deprecation warning (EdDSA, RFC 9864), an unlisted one never."""

        max_header_length = max_bytes
        max_payload_length = max_bytes
        max_signature_length = max_bytes

        def get_alg(self, name: str) -> JWSAlgModel:
            if name not in algorithms:
                raise UnsupportedAlgorithmError(f"Algorithm of '{name}' is not allowed")
            return self.algorithms[name]

    return Registry(algorithms=sorted(algorithms), strict_check_header=False)
