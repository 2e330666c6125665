"""API keys, static bearer tokens and their combination (`Security`): what is accepted,
what is refused and how, and what the card declares (R-SEC-4..6)."""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from parley.model import (
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
)
from parley.protocol.errors import PermissionDeniedError, UnauthenticatedError
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, BearerTokens, Security, Token, digest
from parley.server.auth.keys import MAX_SECRET_BYTES
from parley.server.context import AuthRequest, Caller
from tests.contracts.support import run


def request(
    headers: dict[str, str] | None = None, query: tuple[tuple[str, str], ...] = ()
) -> AuthRequest:
    return AuthRequest("http", "POST", "/", headers or {}, query)


def verify(scheme: ApiKeys | BearerTokens, req: AuthRequest) -> Caller | None:
    return run(scheme.verify(req))


# ---------------------------------------------------------------- API keys


@pytest.mark.parametrize(
    ("location", "req"),
    [
        ("header", request({"x-api-key": "k-1"})),
        ("query", request(query=(("x", "y"), ("X-API-Key", "k-1")))),
        ("cookie", request({"cookie": "theme=dark; X-API-Key=k-1; other=2"})),
    ],
)
def test_an_api_key_names_its_principal_wherever_it_is_sent(
    location: str, req: AuthRequest
) -> None:
    keys = ApiKeys({"k-1": "alice", "k-2": "bob"}, location=location)
    assert verify(keys, req) == Caller(id="alice")


def test_an_api_key_in_another_place_is_not_there() -> None:
    keys = ApiKeys({"k-1": "alice"}, location="header")
    assert verify(keys, request(query=(("X-API-Key", "k-1"),))) is None
    assert verify(keys, request({"cookie": "X-API-Key=k-1"})) is None


def test_a_wrong_or_huge_api_key_is_refused_without_echoing_it() -> None:
    keys = ApiKeys({"k-1": "alice"})
    with pytest.raises(UnauthenticatedError, match="not valid") as wrong:
        verify(keys, request({"x-api-key": "k-9"}))
    assert "k-9" not in str(wrong.value)
    with pytest.raises(UnauthenticatedError, match=f"longer than {MAX_SECRET_BYTES}"):
        verify(keys, request({"x-api-key": "k" * (MAX_SECRET_BYTES + 1)}))


def test_api_keys_are_kept_as_digests_only() -> None:
    keys = ApiKeys({"sekret-key": "alice"})
    assert "sekret-key" not in repr(vars(keys))


@pytest.mark.parametrize("bad", [{"": "a"}, {" k": "a"}])
def test_blank_or_padded_keys_are_a_configuration_error(bad: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        ApiKeys(bad)


# ---------------------------------------------------------------- bearer tokens


def bearer(token: str) -> AuthRequest:
    return request({"authorization": f"Bearer {token}"})


def test_bearer_tokens_from_a_mapping_with_expiry() -> None:
    past = datetime.now(UTC) - timedelta(seconds=1)
    tokens = BearerTokens({"t-1": "alice", "t-old": Token("bob", past)})
    assert verify(tokens, bearer("t-1")) == Caller(id="alice")
    assert verify(tokens, request({"authorization": "bearer t-1"})) == Caller(id="alice")
    with pytest.raises(UnauthenticatedError, match="expired"):
        verify(tokens, bearer("t-old"))
    with pytest.raises(UnauthenticatedError, match="not valid"):
        verify(tokens, bearer("t-2"))


@pytest.mark.parametrize("header", ["Bearer", "Bearer ", "Bearer a b"])
def test_a_malformed_bearer_header_is_refused(header: str) -> None:
    with pytest.raises(UnauthenticatedError, match="Malformed Authorization"):
        verify(BearerTokens({"t-1": "alice"}), request({"authorization": header}))


def test_other_authorization_schemes_are_not_bearer_tokens() -> None:
    assert verify(BearerTokens({"t-1": "a"}), request({"authorization": "Basic dTpw"})) is None
    assert verify(BearerTokens({"t-1": "a"}), request()) is None


def test_a_token_file_holds_secrets_or_digests_and_is_reloaded(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    path.write_text(f"# comment\nt-1 alice\n{digest('t-2')} bob {future}\n\n")
    tokens = BearerTokens(file=path)
    assert verify(tokens, bearer("t-1")) == Caller(id="alice")
    assert verify(tokens, bearer("t-2")) == Caller(id="bob")
    path.write_text("t-3 carol  # rotated\n")
    os.utime(path, ns=(1, 1))  # a different stamp, whatever the clock's resolution
    tokens._checked_at = 0.0  # the next call may look again at once
    assert verify(tokens, bearer("t-3")) == Caller(id="carol")
    with pytest.raises(UnauthenticatedError):
        verify(tokens, bearer("t-1"))


def test_a_broken_token_file_keeps_the_last_good_tokens(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "tokens"
    path.write_text("t-1 alice\n")
    tokens = BearerTokens(file=path)
    path.write_text("t-2 bob not-a-date\n")
    os.utime(path, ns=(1, 1))
    tokens._checked_at = 0.0
    with caplog.at_level(logging.ERROR, "parley.auth"):
        assert verify(tokens, bearer("t-1")) == Caller(id="alice")
    assert "not an ISO 8601 time" in caplog.text
    path.unlink()
    tokens._checked_at = 0.0
    assert verify(tokens, bearer("t-1")) == Caller(id="alice")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("only-one-field\n", "expected TOKEN PRINCIPAL"),
        ("t a 2026-13-01\n", "not an ISO 8601 time"),
        ("sha256:abc alice\n", "64 hex digits"),
    ],
)
def test_a_malformed_token_file_is_refused_at_start(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "tokens"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        BearerTokens(file=path)
    with pytest.raises(FileNotFoundError):
        BearerTokens(file=tmp_path / "missing")


# ---------------------------------------------------------------- Security


CARD = Agent("A").card("http://a.example")
KEYS = ApiKeys({"k-1": "alice", "k-2": "bob"})
TOKENS = BearerTokens({"t-1": "alice", "t-9": "mallory"})


def authenticate(security: Security, headers: dict[str, str]) -> Caller:
    return run(security.authenticate(request(headers)))


def test_any_scheme_suffices_by_default_and_the_card_says_so() -> None:
    security = Security(KEYS, TOKENS)
    assert authenticate(security, {"x-api-key": "k-2"}).id == "bob"
    assert authenticate(security, {"authorization": "Bearer t-1"}).id == "alice"
    card = security.apply(CARD)
    assert card.security_schemes == {
        "apiKey": APIKeySecurityScheme(
            name="X-API-Key", location="header", description="API key in the header 'X-API-Key'"
        ),
        "bearer": HTTPAuthSecurityScheme(scheme="Bearer", description="Bearer token"),
    }
    assert card.security_requirements == (
        SecurityRequirement(schemes={"apiKey": ()}),
        SecurityRequirement(schemes={"bearer": ()}),
    )


def test_no_credentials_is_a_401_with_every_challenge() -> None:
    with pytest.raises(UnauthenticatedError, match="apiKey or bearer") as raised:
        authenticate(Security(KEYS, TOKENS), {})
    assert raised.value.challenges == (
        'APIKey realm="a2a", in="header", name="X-API-Key"',
        'Bearer realm="a2a"',
    )


def test_a_wrong_credential_is_refused_even_when_anonymous_callers_are_let_in() -> None:
    security = Security(KEYS, anonymous=True)
    assert authenticate(security, {}) == Caller()
    with pytest.raises(UnauthenticatedError, match="not valid"):
        authenticate(security, {"x-api-key": "nope"})
    assert security.apply(CARD).security_requirements[-1] == (SecurityRequirement(schemes={}))


def test_all_of_needs_every_scheme_and_the_first_names_the_principal() -> None:
    security = Security(KEYS, TOKENS, require=[["apiKey", "bearer"]])
    both = {"x-api-key": "k-2", "authorization": "Bearer t-1"}
    assert authenticate(security, both).id == "bob"
    with pytest.raises(UnauthenticatedError):
        authenticate(security, {"x-api-key": "k-2"})
    assert security.apply(CARD).security_requirements == (
        SecurityRequirement(schemes={"apiKey": (), "bearer": ()}),
    )


class Scoped:
    """A scheme granting fixed scopes to whoever sends `x-user`."""

    name = "scoped"

    def declaration(self) -> HTTPAuthSecurityScheme:
        return HTTPAuthSecurityScheme(scheme="Bearer")

    def challenge(self) -> None:
        return None

    async def verify(self, request: AuthRequest) -> Caller | None:
        user = request.headers.get("x-user")
        return None if user is None else Caller(id=user, scopes=frozenset({"read"}))


def test_valid_credentials_without_the_required_scopes_are_a_403() -> None:
    security = Security(Scoped(), require=[{"scoped": ["read", "write"]}])
    with pytest.raises(PermissionDeniedError, match="Missing scopes: write"):
        authenticate(security, {"x-user": "ann"})
    assert Security(Scoped(), require=[{"scoped": ["read"]}])
    assert authenticate(Security(Scoped(), require=[{"scoped": ["read"]}]), {"x-user": "a"}).id


@pytest.mark.parametrize(
    ("schemes", "require", "message"),
    [
        ((), None, "at least one scheme"),
        ((KEYS, ApiKeys({"x": "y"})), None, "two schemes are named 'apiKey'"),
        ((KEYS,), [["nope"]], "names no known scheme"),
        ((KEYS,), [[]], "names no known scheme"),
    ],
)
def test_a_security_that_cannot_be_declared_is_refused(
    schemes: tuple[ApiKeys, ...], require: list[list[str]] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Security(*schemes, require=require)
