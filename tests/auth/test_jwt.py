"""`JwtBearer` checks: keys fetched from a real JWKS endpoint on 127.0.0.1, and every way a
token can be wrong refused with UnauthenticatedError (RFC 6750 `invalid_token`), never
anything else; the caller a good token names; what the card declares."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joserfc.jwk import RSAKey

from parley.model import (
    HTTPAuthSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
)
from parley.protocol.errors import PermissionDeniedError, UnauthenticatedError
from parley.server.auth import ApiKeys, JwtBearer, Security
from parley.server.context import AuthRequest, Caller
from tests.auth.jwt_support import (
    AUDIENCE,
    ISSUER,
    Endpoint,
    SigningKey,
    b64,
    claims,
    ec_key,
    ed_key,
    jwks,
    jwks_server,
    rsa_key,
)
from tests.contracts.support import run

KEY = rsa_key("k1")
OTHER = rsa_key("k1")  # the same kid, another key: a forger's
EC = ec_key("e1")
ED = ed_key("d1")
ED_FULL = ed_key("d2", alg="Ed25519")
PS = rsa_key("p1", alg="PS256")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Endpoint]:
    with jwks_server(jwks(KEY, EC, ED, ED_FULL, PS)) as served:
        yield served


@pytest.fixture
def bearer(endpoint: Endpoint) -> JwtBearer:
    return JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_url=endpoint.jwks_url)


def request(token: str | None, scheme: str = "Bearer") -> AuthRequest:
    headers = {} if token is None else {"authorization": f"{scheme} {token}"}
    return AuthRequest(transport="http", method="POST", path="/", headers=headers)


def verify(bearer: JwtBearer, token: str | None) -> Caller | None:
    return run(bearer.verify(request(token)))


def segments(token: str) -> list[str]:
    return token.split(".")


def forged(header: dict[str, Any], payload: dict[str, Any], signature: bytes = b"") -> str:
    return ".".join(
        [b64(json.dumps(header).encode()), b64(json.dumps(payload).encode()), b64(signature)]
    )


def hs256_with_public_key(key: SigningKey) -> str:
    """An HS256 token whose HMAC secret is the RSA public key (algorithm confusion)."""
    assert isinstance(key.key, RSAKey)
    secret = key.key.as_pem(private=False)
    head = b64(json.dumps({"alg": "HS256", "kid": key.kid, "typ": "JWT"}).encode())
    body = b64(json.dumps(claims()).encode())
    mac = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(mac)}"


def tampered_payload() -> str:
    head, _, signature = segments(KEY.sign(claims()))
    return f"{head}.{b64(json.dumps(claims(sub='mallory')).encode())}.{signature}"


def tampered_signature() -> str:
    head, body, signature = segments(KEY.sign(claims()))
    flipped = bytearray(base64.urlsafe_b64decode(signature + "=="))
    flipped[10] ^= 1
    return f"{head}.{body}.{b64(bytes(flipped))}"


REFUSED: dict[str, tuple[Callable[[], str], str]] = {
    "expired": (lambda: KEY.sign(claims(exp=int(time.time()) - 120)), "expired"),
    "expired beyond the leeway only": (
        lambda: KEY.sign(claims(exp=int(time.time()) - 61)),
        "expired",
    ),
    "not yet valid": (lambda: KEY.sign(claims(nbf=int(time.time()) + 300)), "not valid yet"),
    "issued in the future": (lambda: KEY.sign(claims(iat=int(time.time()) + 300)), "future"),
    "no expiry": (lambda: KEY.sign(claims(exp=None)), "no expiry"),
    "expiry not a number": (lambda: KEY.sign(claims(exp="tomorrow")), "exp is not a number"),
    "expiry a boolean": (lambda: KEY.sign(claims(exp=True)), "exp is not a number"),
    "wrong audience": (lambda: KEY.sign(claims(aud="urn:agent:other")), "aud"),
    "no audience": (lambda: KEY.sign(claims(aud=None)), "aud"),
    "audience list without ours": (lambda: KEY.sign(claims(aud=["a", "b"])), "aud"),
    "wrong issuer": (lambda: KEY.sign(claims(iss="https://evil.example")), "iss"),
    "no issuer": (lambda: KEY.sign(claims(iss=None)), "iss"),
    "alg none": (lambda: forged({"alg": "none", "kid": "k1"}, claims()), "'none' is not"),
    "alg None spelled otherwise": (
        lambda: forged({"alg": "None", "kid": "k1"}, claims()),
        "not accepted",
    ),
    "HS256 with the RSA public key as secret": (
        lambda: hs256_with_public_key(KEY),
        "'HS256' is not accepted",
    ),
    "tampered payload": (tampered_payload, "signature is not valid"),
    "tampered signature": (tampered_signature, "signature is not valid"),
    "no signature": (lambda: ".".join(segments(KEY.sign(claims()))[:2]) + ".", "signature"),
    "signed by another key under the same kid": (
        lambda: OTHER.sign(claims()),
        "signature is not valid",
    ),
    "unknown kid": (lambda: rsa_key("k-unknown").sign(claims()), "no key 'k-unknown'"),
    "kid of a key of another type": (
        lambda: forged({"alg": "ES256", "kid": "k1"}, claims(), b"x" * 64),
        "no key 'k1' for ES256",
    ),
    "no kid, several keys": (lambda: KEY.sign(claims(), kid=None), "has no kid"),
    "kid not a string": (lambda: forged({"alg": "RS256", "kid": 7}, claims()), "kid"),
    "critical extension": (
        lambda: KEY.sign_raw({"alg": "RS256", "kid": "k1", "crit": ["x"], "x": 1}, b"{}"),
        "extensions",
    ),
    "unencoded payload (b64)": (
        lambda: KEY.sign_raw({"alg": "RS256", "kid": "k1", "b64": False}, b"{}"),
        "b64",
    ),
    "huge token": (lambda: KEY.sign(claims(pad="x" * 9000)), "longer than 8192"),
    "two segments": (lambda: "abc.def", "Malformed JWT"),
    "five segments (JWE)": (lambda: "a.b.c.d.e", "Malformed JWT"),
    "header not base64": (lambda: "!!!." + ".".join(segments(KEY.sign(claims()))[1:]), "Malformed"),
    "header not JSON": (lambda: b64(b"{nope") + ".e30.AAAA", "Malformed JWT"),
    "header without alg": (lambda: b64(b'{"kid":"k1"}') + ".e30.AAAA", "Malformed JWT"),
    "header a list": (lambda: b64(b"[1]") + ".e30.AAAA", "Malformed JWT"),
    "header a string": (lambda: b64(b'"xalgx"') + ".e30.AAAA", "Malformed JWT"),
    "header a number": (lambda: b64(b"123") + ".e30.AAAA", "Malformed JWT"),
    "alg a list": (lambda: forged({"alg": ["RS256"], "kid": "k1"}, claims()), "not accepted"),
    "alg an object": (lambda: forged({"alg": {"a": 1}, "kid": "k1"}, claims()), "not accepted"),
    "alg null": (lambda: forged({"alg": None, "kid": "k1"}, claims()), "not accepted"),
    "odd header values": (
        lambda: KEY.sign_raw({"alg": "RS256", "kid": "k1", "typ": 7, "x5c": "x"}, b"{}"),
        "Malformed JWT",
    ),
    "not ASCII": (lambda: "é." + KEY.sign(claims()), "Malformed JWT"),
    "payload not JSON": (lambda: KEY.sign_raw({"alg": "RS256", "kid": "k1"}, b"{x"), "payload"),
    "payload not an object": (
        lambda: KEY.sign_raw({"alg": "RS256", "kid": "k1"}, b"[1, 2]"),
        "payload is not a JSON object",
    ),
    "no subject": (lambda: KEY.sign(claims(sub=None)), "no sub"),
    "subject with a control character": (
        lambda: KEY.sign(claims(sub="a\x00b")),
        "cannot name a caller",
    ),
    "subject too long": (lambda: KEY.sign(claims(sub="s" * 600)), "cannot name a caller"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_bad_token_is_refused_with_invalid_token(bearer: JwtBearer, case: str) -> None:
    make, reason = REFUSED[case]
    with pytest.raises(UnauthenticatedError) as refused:
        verify(bearer, make())
    assert reason in refused.value.message
    (challenge,) = refused.value.challenges
    assert challenge.startswith('Bearer realm="a2a", error="invalid_token", error_description="')


def test_a_good_token_names_its_caller(bearer: JwtBearer) -> None:
    token = KEY.sign(claims(scope="reports:read reports:write", scp=["admin"], tid="t-1"))
    caller = verify(bearer, token)
    assert caller is not None
    assert caller.id == f"{ISSUER}#alice"
    assert caller.scopes == {"reports:read", "reports:write", "admin"}
    assert caller.claims["tid"] == "t-1"


@pytest.mark.parametrize("key", [EC, ED, ED_FULL, PS], ids=lambda k: k.alg)
def test_every_default_asymmetric_algorithm_is_accepted(bearer: JwtBearer, key: SigningKey) -> None:
    caller = verify(bearer, key.sign(claims()))
    assert caller is not None
    assert caller.id.endswith("#alice")


def test_times_within_the_leeway_pass(bearer: JwtBearer) -> None:
    now = int(time.time())
    token = KEY.sign(claims(exp=now - 30, nbf=now + 30, iat=now + 30))
    assert verify(bearer, token) is not None


def test_an_audience_list_naming_ours_passes(bearer: JwtBearer) -> None:
    assert verify(bearer, KEY.sign(claims(aud=["urn:other", AUDIENCE]))) is not None


def test_no_bearer_header_is_no_credential(bearer: JwtBearer) -> None:
    assert verify(bearer, None) is None
    assert run(bearer.verify(request("abc", scheme="Basic"))) is None


def test_scp_may_be_a_string_and_the_prefix_is_configurable(endpoint: Endpoint) -> None:
    bearer = JwtBearer(
        issuer=None,
        audience=None,
        jwks_url=endpoint.jwks_url,
        principal_claim="client_id",
        principal_prefix="",
    )
    caller = verify(bearer, KEY.sign(claims(client_id="svc-7", scp="a b", scope=None, iss=None)))
    assert caller is not None
    assert (caller.id, caller.scopes) == ("svc-7", frozenset({"a", "b"}))


def test_with_a_shared_secret_allowed_a_confused_token_still_fails(tmp_path: Path) -> None:
    """Even with HS256 on the allow-list (possible with a key file only), an HS256 token
    keyed with the RSA public key finds no key of its type."""
    path = tmp_path / "jwks.json"
    path.write_bytes(jwks(KEY))
    bearer = JwtBearer(
        issuer=ISSUER, audience=AUDIENCE, jwks_file=path, algorithms=["RS256", "HS256"]
    )
    with pytest.raises(UnauthenticatedError, match="no key 'k1' for HS256"):
        verify(bearer, hs256_with_public_key(KEY))
    assert verify(bearer, KEY.sign(claims())) is not None


def test_the_configuration_is_checked(endpoint: Endpoint) -> None:
    url = endpoint.jwks_url
    with pytest.raises(ValueError, match="issuer="):
        JwtBearer(audience=AUDIENCE, jwks_url=url)
    with pytest.raises(ValueError, match="audience="):
        JwtBearer(issuer=ISSUER, jwks_url=url)
    with pytest.raises(ValueError, match="one of jwks_url"):
        JwtBearer(issuer=ISSUER, audience=AUDIENCE)
    with pytest.raises(ValueError, match="one of jwks_url"):
        JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_url=url, discovery_url=url)
    with pytest.raises(ValueError, match="'none'"):
        JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_url=url, algorithms=["none"])
    with pytest.raises(ValueError, match="shared-secret"):
        JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_url=url, algorithms=["HS256"])
    with pytest.raises(ValueError, match="https"):
        JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_url="http://keys.example/jwks")
    with pytest.raises(ValueError, match="token_url"):
        JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_url=url, scopes={"a": "b"})
    with pytest.raises(ValueError, match="audience"):
        JwtBearer(issuer=ISSUER, audience=[], jwks_url=url)
    assert JwtBearer(
        issuer=ISSUER, audience=AUDIENCE, jwks_url="http://keys.internal/j", allow_http=True
    )


def test_the_card_declares_what_is_checked(endpoint: Endpoint) -> None:
    plain = JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_url=endpoint.jwks_url)
    assert plain.declaration() == HTTPAuthSecurityScheme(
        scheme="Bearer", bearer_format="JWT", description=plain.description
    )
    oauth = JwtBearer(
        issuer=ISSUER,
        audience=AUDIENCE,
        jwks_url=endpoint.jwks_url,
        token_url="https://issuer.example/token",
        scopes={"reports:write": "Write reports"},
    )
    declared = oauth.declaration()
    assert isinstance(declared, OAuth2SecurityScheme)
    flow = declared.flows.client_credentials
    assert flow is not None
    assert flow.token_url == "https://issuer.example/token"
    assert flow.scopes == {"reports:write": "Write reports"}
    oidc = JwtBearer(audience=AUDIENCE, discovery_url=endpoint.discovery_url)
    assert oidc.declaration() == OpenIdConnectSecurityScheme(
        open_id_connect_url=endpoint.discovery_url, description=oidc.description
    )


def test_security_keeps_the_invalid_token_challenge_and_checks_scopes(bearer: JwtBearer) -> None:
    security = Security(
        ApiKeys({"k-1": "kim"}), bearer, require=[{"jwt": ["reports:write"]}, ["apiKey"]]
    )
    with pytest.raises(UnauthenticatedError) as refused:
        run(security.authenticate(request(KEY.sign(claims(exp=1)))))
    assert refused.value.challenges == (
        'APIKey realm="a2a", in="header", name="X-API-Key"',
        'Bearer realm="a2a", error="invalid_token", error_description="The token has expired"',
    )
    with pytest.raises(UnauthenticatedError) as missing:
        run(security.authenticate(request(None)))
    assert missing.value.challenges[1] == 'Bearer realm="a2a"'  # no error without a token
    with pytest.raises(PermissionDeniedError, match="reports:write"):
        run(security.authenticate(request(KEY.sign(claims()))))
    writer = run(security.authenticate(request(KEY.sign(claims(scope="reports:write")))))
    assert writer.id == f"{ISSUER}#alice"


def test_the_message_never_carries_the_token(bearer: JwtBearer) -> None:
    token = KEY.sign(claims(exp=1))
    with pytest.raises(UnauthenticatedError) as refused:
        verify(bearer, token)
    assert token not in refused.value.message
    assert all(token not in c for c in refused.value.challenges)


def test_parley_imports_without_the_auth_extra() -> None:
    """Only building a JwtBearer needs joserfc, and says which extra brings it."""
    script = (
        "import sys; sys.modules['joserfc'] = None\n"
        "import parley, parley.server.agent, parley.server.auth\n"
        "from parley.server.auth import JwtBearer\n"
        "try:\n"
        "    JwtBearer(issuer='https://i', audience='a', jwks_url='https://i/k')\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "JwtBearer needs the auth extra: pip install 'parley-a2a[auth]'"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
HEADER_NAMES = st.sampled_from(["alg", "kid", "crit", "b64", "typ", "jku", "x5c", "zip", "enc"])


@settings(max_examples=150)
@given(
    header=st.dictionaries(HEADER_NAMES, JSON | st.sampled_from(["RS256", "k1", "none"])),
    payload=JSON,
    signature=st.binary(max_size=64),
    raw=st.text(max_size=64),
)
def test_any_token_is_a_caller_or_a_refusal(
    tmp_path_factory: pytest.TempPathFactory,
    header: dict[str, Any],
    payload: Any,
    signature: bytes,
    raw: str,
) -> None:
    """Whatever a caller sends is refused with UnauthenticatedError, never another error."""
    path = tmp_path_factory.mktemp("keys") / "jwks.json"
    path.write_bytes(jwks(KEY))
    bearer = JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_file=path)
    shaped = ".".join(
        [b64(json.dumps(header).encode()), b64(json.dumps(payload).encode()), b64(signature)]
    )
    for token in (shaped, raw, raw + "." + shaped):
        with pytest.raises(UnauthenticatedError):
            run(bearer.check(token))
