"""`parley serve`'s authentication options: API keys, bearer-token files and JWT bearer
tokens (OAuth 2.0 / OpenID Connect), from flags or the environment, turned into the
`Security` the served agent declares and enforces; and `--sign-card`, the key that signs
the served card."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from parley.server.auth.security import Security

if TYPE_CHECKING:
    from parley.model import AgentCard
    from parley.server.auth import JwtBearer, Scheme

KEY_LOCATIONS = ("header", "query", "cookie")
"""`--api-key-in`'s choices: `parley.server.auth.keys.LOCATIONS`, spelled here so that
building the parser does not load the key, JWT and JWKS schemes (a test keeps the two
equal)."""

JWT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
                  "ES512", "EdDSA", "Ed25519")  # fmt: skip
"""`JwtBearer`'s default algorithms (`parley.server.auth.jwt.DEFAULT_ALGORITHMS`), named
in `--jwt-algorithm`'s help; spelled here for the same reason (the same test)."""

API_KEYS_ENV = "PARLEY_API_KEYS"
"""`KEY:PRINCIPAL` pairs separated by commas or spaces: keys kept out of the command line."""


def add_security_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "authentication", "callers must authenticate with one of these (default: anyone may call)"
    )
    group.add_argument(
        "--api-key",
        action="append",
        default=[],
        metavar="KEY:PRINCIPAL",
        help=f"accept API key KEY as caller PRINCIPAL (repeatable; also ${API_KEYS_ENV})",
    )
    group.add_argument(
        "--api-key-name",
        default="X-API-Key",
        metavar="NAME",
        help="the header, query parameter or cookie carrying the key (default X-API-Key)",
    )
    group.add_argument(
        "--api-key-in",
        choices=KEY_LOCATIONS,
        default="header",
        help="where the key is sent (default header)",
    )
    group.add_argument(
        "--bearer-tokens",
        metavar="FILE",
        help="accept the bearer tokens in FILE (lines: TOKEN PRINCIPAL [EXPIRES]; "
        "TOKEN may be sha256:HEX); the file is read again when it changes",
    )
    add_jwt_options(group)
    group.add_argument(
        "--allow-anonymous",
        action="store_true",
        help="with the options above, still let callers without credentials in",
    )
    group.add_argument(
        "--shared-tasks",
        action="store_true",
        help="every authenticated caller sees every task (one team); default: each its own",
    )
    signing = parser.add_argument_group("card signature")
    signing.add_argument(
        "--sign-card",
        metavar="KEY.pem",
        help="sign the agent card (JWS over its RFC 8785 form) with this private key: EC "
        "P-256/384/521, RSA or Ed25519, in PEM",
    )
    signing.add_argument(
        "--sign-card-kid",
        metavar="KID",
        help="the signature's key id (default: the key's RFC 7638 thumbprint)",
    )


def card_signer(arguments: argparse.Namespace) -> Callable[[AgentCard], AgentCard] | None:
    """What signs the served card (`--sign-card`), or None."""
    key = getattr(arguments, "sign_card", None)
    if not key:
        return None
    try:
        from parley.wire.card_signatures import CardSignatureError, CardSigner  # noqa: PLC0415
    except ImportError:
        raise SystemExit("parley serve: --sign-card needs the auth extra") from None
    try:
        signer = CardSigner(key, kid=arguments.sign_card_kid)
    except (OSError, CardSignatureError) as exc:
        raise SystemExit(f"parley serve: --sign-card: {exc}") from None
    return signer.sign


def add_jwt_options(group: argparse._ArgumentGroup) -> None:
    """OAuth 2.0 / OpenID Connect access tokens (JWTs): `JwtBearer`."""
    group.add_argument(
        "--jwks-url",
        metavar="URL",
        help="accept JWT bearer tokens signed by the keys at URL (https; fetched again "
        "as the keys rotate)",
    )
    group.add_argument(
        "--jwks-file",
        metavar="FILE",
        help="accept JWT bearer tokens signed by the keys in FILE (a JWKS, read again when "
        "it changes)",
    )
    group.add_argument(
        "--oidc-discovery-url",
        metavar="URL",
        help="accept JWT bearer tokens of the OpenID Connect provider whose discovery "
        "document is at URL (its jwks_uri and issuer; declared in the card)",
    )
    group.add_argument(
        "--jwt-issuer",
        metavar="ISSUER",
        help="the tokens' iss (needed with --jwks-url and --jwks-file; with "
        "--oidc-discovery-url, the discovered issuer by default)",
    )
    group.add_argument(
        "--jwt-audience",
        action="append",
        default=[],
        metavar="AUDIENCE",
        help="a value the tokens' aud must name: this agent's identifier at the issuer "
        "(needed; repeatable: any one suffices)",
    )
    group.add_argument(
        "--jwt-algorithm",
        action="append",
        default=[],
        metavar="ALG",
        help=f"an accepted signature algorithm (repeatable; default: {' '.join(JWT_ALGORITHMS)})",
    )
    group.add_argument(
        "--jwt-token-url",
        metavar="URL",
        help="declare an OAuth 2.0 client-credentials flow with this token endpoint in the card",
    )
    group.add_argument(
        "--jwt-scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="a scope the card's OAuth 2.0 flow lists (repeatable; with --jwt-token-url)",
    )


def jwt_requested(arguments: argparse.Namespace) -> bool:
    """Whether any JWT bearer option was given."""
    return any(
        getattr(arguments, name, None)
        for name in ("jwks_url", "jwks_file", "oidc_discovery_url", "jwt_issuer", "jwt_audience")
    )


def jwt_scheme(arguments: argparse.Namespace) -> JwtBearer:
    """The `JwtBearer` the JWT options describe; SystemExit saying what is missing."""
    sources = {
        "--jwks-url": arguments.jwks_url,
        "--jwks-file": arguments.jwks_file,
        "--oidc-discovery-url": arguments.oidc_discovery_url,
    }
    given = [option for option, value in sources.items() if value]
    if len(given) != 1:
        raise SystemExit(
            "parley serve: JWT bearer tokens need one of --jwks-url, --jwks-file or "
            f"--oidc-discovery-url{f' (got {given})' if given else ''}"
        )
    if not arguments.jwt_audience:
        raise SystemExit("parley serve: JWT bearer tokens need --jwt-audience")
    if not arguments.jwt_issuer and not arguments.oidc_discovery_url:
        raise SystemExit(f"parley serve: {given[0]} needs --jwt-issuer")
    from parley.server.auth.jwt import DEFAULT_ALGORITHMS, JwtBearer  # noqa: PLC0415

    return JwtBearer(
        issuer=arguments.jwt_issuer or ...,
        audience=arguments.jwt_audience,
        jwks_url=arguments.jwks_url,
        jwks_file=arguments.jwks_file,
        discovery_url=arguments.oidc_discovery_url,
        algorithms=arguments.jwt_algorithm or DEFAULT_ALGORITHMS,
        token_url=arguments.jwt_token_url,
        scopes={scope: scope for scope in arguments.jwt_scope} or None,
    )


def parse_api_keys(pairs: list[str]) -> dict[str, str]:
    """`KEY:PRINCIPAL` pairs (the last colon splits) to a key → principal mapping."""
    keys: dict[str, str] = {}
    for pair in pairs:
        key, sep, principal = pair.strip().rpartition(":")
        if not sep or not key or not principal:
            raise SystemExit(  # never the value: it may be a key without its principal
                "parley serve: --api-key: expected KEY:PRINCIPAL (a key, a colon, a principal)"
            )
        keys[key] = principal
    return keys


def security_from(
    arguments: argparse.Namespace, own: Security | None, extra: Sequence[Scheme] = ()
) -> Security | None:
    """The agent's own schemes (`Agent(security=…)`) and those the options add (`extra`:
    those of other options, such as the TLS options' `MutualTls`); None when there are
    none (everyone is anonymous)."""
    pairs = [*arguments.api_key, *os.environ.get(API_KEYS_ENV, "").replace(",", " ").split()]
    schemes: list[Scheme] = list(own.schemes.values()) if own is not None else []
    try:
        if pairs:
            from parley.server.auth.keys import ApiKeys  # noqa: PLC0415 - when asked for

            keys = parse_api_keys(pairs)
            schemes.append(
                ApiKeys(keys, name=arguments.api_key_name, location=arguments.api_key_in)
            )
        if arguments.bearer_tokens:
            from parley.server.auth.keys import BearerTokens  # noqa: PLC0415 - when asked for

            try:
                schemes.append(BearerTokens(file=arguments.bearer_tokens))
            except OSError as exc:
                raise SystemExit(f"parley serve: --bearer-tokens: {exc}") from None
        if jwt_requested(arguments):
            schemes.append(jwt_scheme(arguments))
        schemes.extend(extra)
    except (OSError, ValueError, ImportError) as exc:
        raise SystemExit(f"parley serve: {exc}") from None
    if not schemes:
        for flag in ("allow_anonymous", "shared_tasks"):
            if getattr(arguments, flag):
                raise SystemExit(
                    f"parley serve: --{flag.replace('_', '-')} needs --api-key, "
                    "--bearer-tokens, a JWT option or --tls-client-ca"
                )
        return None
    changed = arguments.allow_anonymous or arguments.shared_tasks
    if own is not None and len(schemes) == len(own.schemes) and not changed:
        return own
    anonymous = arguments.allow_anonymous or (own is not None and own.anonymous)
    shared = arguments.shared_tasks or (own is not None and own.shared_tasks)
    added = [[scheme.name] for scheme in schemes[len(own.schemes) if own else 0 :]]
    require: Any = None if own is None else [*own.alternatives, *added]
    return Security(*schemes, require=require, anonymous=anonymous, shared_tasks=shared)
