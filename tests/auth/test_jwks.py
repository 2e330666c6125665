"""Where `JwtBearer` gets its keys, against a real JWKS endpoint on 127.0.0.1: rotation
without a restart, a bounded number of fetches whatever tokens arrive, coalesced fetches,
the last good keys kept when the endpoint fails (logged once per run of failures), an
unreachable or invalid key set refusing tokens with 401, OpenID Connect discovery, and
key files read again when they change."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from pathlib import Path

import pytest

from parley.protocol.errors import UnauthenticatedError
from parley.server.auth import JwtBearer
from parley.server.auth.jwks import (
    FileKeys,
    RemoteKeys,
    check_url,
    max_age,
    parse_jwks,
)
from parley.server.context import Caller
from tests.auth.jwt_support import (
    AUDIENCE,
    ISSUER,
    Endpoint,
    claims,
    jwks,
    jwks_server,
    rsa_key,
)
from tests.contracts.support import run
from tests.ports import free_port

OLD = rsa_key("2024-old")
NEW = rsa_key("2025-new")


class Ticks:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def bearer_for(
    endpoint: Endpoint,
    min_refresh_seconds: float = 30.0,
    cache_seconds: float = 300.0,
    clock: Ticks | None = None,
) -> JwtBearer:
    """A bearer whose remote key set runs on `clock` (real time if None)."""
    keys = RemoteKeys(
        endpoint.jwks_url,
        issuer=ISSUER,
        min_refresh_seconds=min_refresh_seconds,
        cache_seconds=cache_seconds,
        clock=clock or time.monotonic,
    )
    return JwtBearer(issuer=ISSUER, audience=AUDIENCE, keys=keys)


async def refusal(bearer: JwtBearer, token: str) -> str:
    try:
        await bearer.check(token)
    except UnauthenticatedError as error:
        return error.message
    return "accepted"


def test_keys_rotate_without_a_restart_and_fetches_stay_bounded() -> None:
    ticks = Ticks()
    with jwks_server(jwks(OLD)) as endpoint:
        bearer = bearer_for(endpoint, min_refresh_seconds=0.2, clock=ticks)

        tokens = [rsa_key(f"forged-{index}").sign({}) for index in range(3)]

        async def forged(count: int) -> None:
            for index in range(count):
                assert "no key" in await refusal(bearer, tokens[index % 3])

        async def scenario() -> None:
            assert (await bearer.check(OLD.sign(claims()))).id == f"{ISSUER}#alice"
            for _ in range(20):  # cached: no more fetches
                await bearer.check(OLD.sign(claims()))
            assert endpoint.count() == 1
            endpoint.body = jwks(NEW)  # the issuer rotates: the old key is gone
            ticks.advance(0.25)
            caller = await bearer.check(NEW.sign(claims(sub="bob")))  # an unknown kid: refetch
            assert caller.id == f"{ISSUER}#bob"
            assert endpoint.count() == 2
            assert "no key '2024-old'" in await refusal(bearer, OLD.sign(claims()))
            # Forged kids, as fast as they come: at most one fetch per min_refresh_seconds.
            await forged(30)
            assert endpoint.count() == 2
            ticks.advance(0.19)
            await forged(30)
            assert endpoint.count() == 2
            ticks.advance(0.01)
            await forged(30)
            assert endpoint.count() == 3

        run(scenario())


def test_concurrent_requests_share_one_fetch() -> None:
    with jwks_server(jwks(OLD)) as endpoint:
        endpoint.delay = 0.2
        bearer = bearer_for(endpoint)

        async def scenario() -> list[Caller]:
            tokens = [OLD.sign(claims(sub=f"user-{i}")) for i in range(30)]
            return await asyncio.gather(*(bearer.check(token) for token in tokens))

        callers = run(scenario())
        assert len({caller.id for caller in callers}) == 30
        assert endpoint.count() == 1


def test_an_unreachable_key_set_refuses_with_401_and_logs_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_port()  # a port nothing listens on
    bearer = JwtBearer(
        issuer=ISSUER,
        audience=AUDIENCE,
        jwks_url=f"http://127.0.0.1:{port}/jwks.json",
        min_refresh_seconds=0.01,
        timeout=1.0,
    )

    async def scenario() -> list[str]:
        messages = []
        for _ in range(5):
            messages.append(await refusal(bearer, OLD.sign(claims())))
            await asyncio.sleep(0.02)
        return messages

    with caplog.at_level(logging.INFO, "parley.auth"):
        messages = run(scenario())
    assert set(messages) == {
        "The signing keys to check the token with are unavailable; try again later"
    }
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert "no keys yet" in errors[0].getMessage()
    assert isinstance(bearer.keys, RemoteKeys)
    assert bearer.keys.fetches == 5  # one attempt each, never a burst


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"not json", 200),
        (b'{"keys": "none"}', 200),
        (b'{"keys": [{"kty": "RSA", "kid": "broken"}]}', 200),
        (b'{"keys": []}', 200),
        (b"[]", 200),
        (b"", 500),
        (b'{"keys": []}', 404),
    ],
)
def test_an_invalid_key_set_keeps_the_last_good_keys(
    body: bytes, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    ticks = Ticks()
    with jwks_server(jwks(OLD)) as endpoint:
        bearer = bearer_for(endpoint, min_refresh_seconds=0.05, cache_seconds=0.05, clock=ticks)

        async def scenario() -> list[str]:
            answers = [await refusal(bearer, OLD.sign(claims()))]
            endpoint.body, endpoint.status = body, status
            for _ in range(4):
                ticks.advance(0.06)  # expired: each check tries the endpoint again
                answers.append(await refusal(bearer, OLD.sign(claims())))
            return answers

        with caplog.at_level(logging.INFO, "parley.auth"):
            answers = run(scenario())
        assert answers == ["accepted"] * 5  # the kept keys still check tokens
        assert endpoint.count() == 5
        failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(failures) == 1
        assert "keeping the last keys" in failures[0].getMessage()


def test_an_invalid_key_set_from_the_start_refuses_tokens() -> None:
    with jwks_server(b'{"keys": [{"kty": "EC"}]}') as endpoint:
        bearer = bearer_for(endpoint)
        assert "unavailable" in run(refusal(bearer, OLD.sign(claims())))


def test_recovery_is_logged_and_max_age_is_honoured(caplog: pytest.LogCaptureFixture) -> None:
    ticks = Ticks()
    with jwks_server(b"oops") as endpoint:
        bearer = bearer_for(endpoint, min_refresh_seconds=0.05, cache_seconds=60, clock=ticks)

        async def scenario() -> list[str]:
            answers = [await refusal(bearer, OLD.sign(claims()))]
            endpoint.body, endpoint.cache_control = jwks(OLD), "public, max-age=0"
            ticks.advance(0.06)
            answers.append(await refusal(bearer, OLD.sign(claims())))
            ticks.advance(0.06)  # max-age=0: kept only min_refresh_seconds
            answers.append(await refusal(bearer, OLD.sign(claims())))
            return answers

        with caplog.at_level(logging.INFO, "parley.auth"):
            answers = run(scenario())
        assert answers[1:] == ["accepted", "accepted"]
        assert endpoint.count() == 3
        assert any("fetched again" in r.getMessage() for r in caplog.records)


def test_discovery_finds_the_keys_and_the_issuer() -> None:
    with jwks_server(jwks(OLD)) as endpoint:
        bearer = JwtBearer(audience=AUDIENCE, discovery_url=endpoint.discovery_url)
        caller = run(bearer.check(OLD.sign(claims(iss=endpoint.url))))
        assert caller.id == f"{endpoint.url}#alice"
        assert "(iss)" in run(refusal(bearer, OLD.sign(claims())))  # ISSUER is not theirs
        assert endpoint.count("/.well-known/openid-configuration") == 1
        assert endpoint.count() == 1


def test_discovery_with_the_wrong_issuer_yields_no_keys(caplog: pytest.LogCaptureFixture) -> None:
    with jwks_server(jwks(OLD)) as endpoint:
        endpoint.discovery["issuer"] = "https://elsewhere.example"
        bearer = JwtBearer(audience=AUDIENCE, discovery_url=endpoint.discovery_url)
        with caplog.at_level(logging.INFO, "parley.auth"):
            message = run(refusal(bearer, OLD.sign(claims(iss="https://elsewhere.example"))))
        assert "unavailable" in message
        assert "names issuer 'https://elsewhere.example'" in caplog.text
        assert endpoint.count() == 0


def test_discovery_with_a_given_issuer_and_a_trailing_slash() -> None:
    with jwks_server(jwks(OLD)) as endpoint:
        endpoint.discovery["issuer"] = endpoint.url + "/"
        derived = JwtBearer(audience=AUDIENCE, discovery_url=endpoint.discovery_url)
        assert run(derived.check(OLD.sign(claims(iss=endpoint.url + "/")))).id.endswith("#alice")
        given = JwtBearer(
            issuer="https://other.example", audience=AUDIENCE, discovery_url=endpoint.discovery_url
        )
        assert "unavailable" in run(refusal(given, OLD.sign(claims(iss="https://other.example"))))


def test_a_discovery_document_without_keys_is_refused() -> None:
    with jwks_server(jwks(OLD)) as endpoint:
        endpoint.discovery = {"issuer": endpoint.url, "jwks_uri": "http://keys.example/jwks"}
        bearer = JwtBearer(audience=AUDIENCE, discovery_url=endpoint.discovery_url)
        assert "unavailable" in run(refusal(bearer, OLD.sign(claims(iss=endpoint.url))))


def test_a_key_file_is_read_again_when_it_changes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "jwks.json"
    path.write_bytes(jwks(OLD))
    ticks = Ticks()
    bearer = JwtBearer(issuer=ISSUER, audience=AUDIENCE, keys=FileKeys(path, clock=ticks))

    async def scenario() -> list[str]:
        answers = [await refusal(bearer, OLD.sign(claims()))]
        path.write_bytes(jwks(NEW))
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))
        ticks.advance(0.9)  # files are checked at most once a second: not yet
        answers.append(await refusal(bearer, NEW.sign(claims())))
        ticks.advance(0.1)
        answers.append(await refusal(bearer, NEW.sign(claims())))
        answers.append(await refusal(bearer, OLD.sign(claims())))
        path.write_text("{broken")
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 2_000_000))
        ticks.advance(1.0)
        answers.append(await refusal(bearer, NEW.sign(claims())))
        return answers

    with caplog.at_level(logging.INFO, "parley.auth"):
        answers = run(scenario())
    assert answers[0] == "accepted"
    assert "no key '2025-new'" in answers[1]
    assert answers[2] == "accepted"
    assert "no key '2024-old'" in answers[3]
    assert answers[4] == "accepted"  # a broken file keeps the last keys
    assert "keeping the last keys" in caplog.text


def test_a_bad_key_file_at_start_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "jwks.json"
    path.write_text('{"keys": []}')
    with pytest.raises(ValueError, match="no usable signature key"):
        FileKeys(path)
    with pytest.raises(FileNotFoundError):
        FileKeys(tmp_path / "missing.json")


def test_key_sets_skip_keys_they_cannot_use(caplog: pytest.LogCaptureFixture) -> None:
    encryption = {**OLD.public(), "use": "enc", "kid": "enc"}
    wrapping = {**OLD.public(), "key_ops": ["encrypt"], "kid": "wrap"}
    broken = {"kty": "RSA", "kid": "broken"}
    no_kid = {name: value for name, value in OLD.public().items() if name != "kid"}
    document = json.dumps({"keys": [encryption, wrapping, broken, "x", NEW.public(), no_kid]})
    with caplog.at_level(logging.WARNING, "parley.auth"):
        keys = parse_jwks(document)
    assert list(keys.by_kid) == [NEW.kid]
    assert len(keys.every) == 2
    assert "broken" in caplog.text
    assert keys.find(None, "RS256", "RSA") is None  # two RSA keys: a token must name one
    assert keys.find("2025-new", "RS256", "RSA") is not None
    assert keys.find("2025-new", "ES256", "EC") is None
    only = parse_jwks(json.dumps({"keys": [no_kid]}))
    assert only.find(None, "RS256", "RSA") is not None
    assert only.find(None, "PS256", "RSA") is not None
    pinned = parse_jwks(json.dumps({"keys": [{**no_kid, "alg": "RS256"}]}))
    assert pinned.find(None, "PS256", "RSA") is None  # the key names its algorithm


def test_urls_and_cache_headers() -> None:
    assert check_url("https://idp.example/keys") == "https://idp.example/keys"
    assert check_url("http://localhost:8080/keys")
    assert check_url("http://[::1]/keys")
    assert check_url("http://idp.internal/keys", allow_http=True)
    for bad in ("http://idp.example/keys", "ftp://idp.example/keys", "https:///keys", "keys"):
        with pytest.raises(ValueError, match="https"):
            check_url(bad)
    assert max_age("public, max-age=3600") == 3600
    assert max_age('max-age="60", must-revalidate') == 60
    assert max_age("no-store") is None
    assert max_age(None) is None
    with pytest.raises(ValueError, match="one of them"):
        RemoteKeys()
    with pytest.raises(ValueError, match="min_refresh_seconds"):
        RemoteKeys("https://idp.example/keys", cache_seconds=1, min_refresh_seconds=5)


def test_a_verified_token_is_remembered_for_a_while_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reused tokens skip the signature check (the bulk of the cost) for VERIFIED_SECONDS,
    never past their expiry; a withdrawn key stops working once that window is over."""
    from parley.server.auth import jwt as module  # noqa: PLC0415

    with jwks_server(jwks(OLD)) as endpoint:
        ticks = Ticks()
        bearer = bearer_for(endpoint, min_refresh_seconds=0.01, cache_seconds=0.01, clock=ticks)
        token, short = OLD.sign(claims()), OLD.sign(claims(exp=int(time.time()) - 1))

        async def scenario() -> list[str]:
            answers = [await refusal(bearer, token), await refusal(bearer, short)]
            endpoint.body = jwks(NEW)  # the key is withdrawn (rotated)
            ticks.advance(0.02)  # and the cached key set is stale
            answers.append(await refusal(bearer, token))  # remembered
            answers.append(await refusal(bearer, OLD.sign(claims())))  # a new token
            answers.append(await refusal(bearer, short))  # its expiry ended its stay
            monkeypatch.setattr(module, "VERIFIED_SECONDS", 0.0)
            bearer._verified.clear()
            answers.append(await refusal(bearer, token))
            return answers

        answers = run(scenario())
    assert answers[:3] == ["accepted"] * 3
    assert [a.startswith("The issuer's key set has no key") for a in answers[3:]] == [True] * 3
