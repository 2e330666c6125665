"""`parley serve`'s authentication options (`parley.cli.security`) in-process: API keys from
flags and `$PARLEY_API_KEYS` become a scheme that authenticates each key as its principal,
where `--api-key-name` and `--api-key-in` say; bearer-token files; `--allow-anonymous` and
`--shared-tasks` on top of them; the agent's own schemes kept and extended; mistakes one
line that never echoes a key (R-SEC-4: a server requiring authentication refuses callers
without it). JWT options are in tests/auth/test_jwt_options.py."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

from parley.cli.main import build_parser
from parley.cli.security import API_KEYS_ENV, card_signer, parse_api_keys, security_from
from parley.protocol.errors import UnauthenticatedError
from parley.server.auth import ApiKeys, BearerTokens, Security
from parley.server.context import ANONYMOUS, AuthRequest, Caller


@pytest.fixture(autouse=True)
def _no_keys_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(API_KEYS_ENV, raising=False)


def serve(*flags: str) -> argparse.Namespace:
    return build_parser("serve").parse_args(["serve", "examples.echo:agent", *flags])


def caller(
    security: Security | None,
    headers: dict[str, str] | None = None,
    query: tuple[tuple[str, str], ...] = (),
) -> Caller:
    assert security is not None
    lowered = {name.lower(): value for name, value in (headers or {}).items()}
    request = AuthRequest("http", "POST", "/", lowered, query=query)
    return asyncio.run(security.authenticate(request))


@pytest.mark.parametrize(
    ("pairs", "keys"),
    [
        (["k1:alice"], {"k1": "alice"}),
        (["k1:alice", "k2:bob"], {"k1": "alice", "k2": "bob"}),
        (["a:b:carol"], {"a:b": "carol"}),  # the last colon splits
        ([" k1:alice "], {"k1": "alice"}),
        (["k1:alice", "k1:bob"], {"k1": "bob"}),
    ],
)
def test_api_keys_are_key_colon_principal(pairs: list[str], keys: dict[str, str]) -> None:
    assert parse_api_keys(pairs) == keys


@pytest.mark.parametrize("pair", ["no-principal", ":alice", "k1:", ""])
def test_a_malformed_pair_is_refused_without_echoing_it(pair: str) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_api_keys(["good:alice", pair])
    message = str(exited.value.code)
    assert (
        message == "parley serve: --api-key: expected KEY:PRINCIPAL (a key, a colon, a principal)"
    )


def test_without_options_everyone_is_anonymous() -> None:
    assert security_from(serve(), None) is None


def test_each_key_authenticates_as_its_principal() -> None:
    security = security_from(serve("--api-key", "k1:alice", "--api-key", "k2:bob"), None)
    assert caller(security, {"X-API-Key": "k1"}).id == "alice"
    assert caller(security, {"X-API-Key": "k2"}).id == "bob"
    with pytest.raises(UnauthenticatedError):
        caller(security, {"X-API-Key": "k3"})
    with pytest.raises(UnauthenticatedError):
        caller(security)


@pytest.mark.parametrize("value", ["k1:alice,k2:bob", "k1:alice k2:bob", " k1:alice ,, k2:bob "])
def test_keys_come_from_the_environment_too(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEYS_ENV, value)
    security = security_from(serve("--api-key", "k0:zoe"), None)
    assert [caller(security, {"X-API-Key": k}).id for k in ("k0", "k1", "k2")] == [
        "zoe",
        "alice",
        "bob",
    ]


def test_the_key_is_read_where_the_options_say() -> None:
    security = security_from(
        serve("--api-key", "k1:alice", "--api-key-name", "key", "--api-key-in", "query"), None
    )
    assert security is not None
    [scheme] = security.schemes.values()
    assert isinstance(scheme, ApiKeys)
    assert (scheme.key_name, scheme.location) == ("key", "query")
    assert caller(security, query=(("key", "k1"),)).id == "alice"
    with pytest.raises(UnauthenticatedError):
        caller(security, {"X-API-Key": "k1"})


def test_anonymous_callers_may_be_let_in_and_tasks_shared() -> None:
    plain = security_from(serve("--api-key", "k1:alice"), None)
    assert plain is not None
    assert (plain.anonymous, plain.shared_tasks) == (False, False)
    opened = security_from(
        serve("--api-key", "k1:alice", "--allow-anonymous", "--shared-tasks"), None
    )
    assert opened is not None
    assert (opened.anonymous, opened.shared_tasks) == (True, True)
    assert caller(opened).id == ANONYMOUS
    assert caller(opened, {"X-API-Key": "k1"}).id == "alice"
    with pytest.raises(UnauthenticatedError):  # a wrong key is not anonymous
        caller(opened, {"X-API-Key": "wrong"})


@pytest.mark.parametrize("flag", ["--allow-anonymous", "--shared-tasks"])
def test_opening_up_needs_a_scheme(flag: str) -> None:
    with pytest.raises(SystemExit, match=f"parley serve: {flag} needs --api-key, --bearer-tokens"):
        security_from(serve(flag), None)


def test_a_bearer_tokens_file(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("tok-1 alice\n", "utf-8")
    security = security_from(serve("--bearer-tokens", str(tokens)), None)
    assert security is not None
    assert [type(s) for s in security.schemes.values()] == [BearerTokens]
    assert caller(security, {"Authorization": "Bearer tok-1"}).id == "alice"


def test_a_missing_bearer_tokens_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"^parley serve: --bearer-tokens: .*No such file"):
        security_from(serve("--bearer-tokens", str(tmp_path / "absent")), None)


def test_the_agents_own_security_is_kept_as_it_is_when_nothing_is_added() -> None:
    own = Security(ApiKeys({"own": "agent-user"}))
    assert security_from(serve(), own) is own


def test_the_options_add_an_alternative_to_the_agents_own() -> None:
    own = Security(ApiKeys({"own": "agent-user"}, name="X-Own", scheme_name="own"))
    security = security_from(serve("--api-key", "k1:alice"), own)
    assert security is not None
    assert security is not own
    assert list(security.schemes) == ["own", "apiKey"]
    assert caller(security, {"X-Own": "own"}).id == "agent-user"
    assert caller(security, {"X-API-Key": "k1"}).id == "alice"


def test_the_agents_own_anonymity_and_sharing_carry_over() -> None:
    own = Security(ApiKeys({"own": "u"}, scheme_name="own"), anonymous=True, shared_tasks=True)
    security = security_from(serve("--api-key", "k1:alice"), own)
    assert security is not None
    assert (security.anonymous, security.shared_tasks) == (True, True)


def test_a_flag_alone_changes_the_agents_own() -> None:
    own = Security(ApiKeys({"own": "u"}))
    security = security_from(serve("--allow-anonymous"), own)
    assert security is not None
    assert security is not own
    assert security.anonymous
    assert caller(security).id == ANONYMOUS


def test_an_invalid_key_location_from_the_environment_is_one_line() -> None:
    arguments = serve("--api-key", "k1:alice")
    arguments.api_key_name = ""
    with pytest.raises(SystemExit, match=r"^parley serve: an API key needs the name"):
        security_from(arguments, None)


def test_no_card_signer_without_the_option() -> None:
    assert card_signer(serve()) is None


def test_an_unreadable_signing_key_is_one_line(tmp_path: Path) -> None:
    missing = serve("--sign-card", str(tmp_path / "absent.pem"))
    with pytest.raises(SystemExit, match=r"^parley serve: --sign-card: "):
        card_signer(missing)
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a key", "utf-8")
    with pytest.raises(SystemExit, match=r"^parley serve: --sign-card: "):
        card_signer(serve("--sign-card", str(garbage)))
