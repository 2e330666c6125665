"""`parley serve`'s JWT options: they add a `JwtBearer` beside the agent's own schemes, say
what is missing in one line, and the served card declares the scheme and the skills'
scopes."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from parley.cli.main import build_parser
from parley.cli.security import security_from
from parley.cli.serve import make_handler
from parley.model import OAuth2SecurityScheme, OpenIdConnectSecurityScheme
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, JwtBearer, Security
from parley.server.task_context import TaskContext
from tests.auth.jwt_support import AUDIENCE, ISSUER, jwks, rsa_key

DISCOVERY = "https://issuer.example/.well-known/openid-configuration"


def arguments(*options: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve", "agent:app", *options])


def keyed(tmp_path: Path) -> str:
    path = tmp_path / "jwks.json"
    path.write_bytes(jwks(rsa_key("k1")))
    return str(path)


def test_the_options_build_a_jwt_scheme_beside_the_agents_own(tmp_path: Path) -> None:
    own = Security(ApiKeys({"k": "kim"}))
    given = arguments(
        "--jwks-file", keyed(tmp_path), "--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE
    )
    security = security_from(given, own)
    assert security is not None
    assert list(security.schemes) == ["apiKey", "jwt"]
    bearer = security.schemes["jwt"]
    assert isinstance(bearer, JwtBearer)
    assert bearer.issuer == ISSUER
    assert bearer.audience == frozenset({AUDIENCE})
    assert "RS256" in bearer.algorithms
    assert security.alternatives == ({"apiKey": ()}, {"jwt": ()})


def test_discovery_token_url_scopes_and_algorithms() -> None:
    oidc = security_from(
        arguments("--oidc-discovery-url", DISCOVERY, "--jwt-audience", "a", "--jwt-audience", "b"),
        None,
    )
    assert oidc is not None
    bearer = oidc.schemes["jwt"]
    assert isinstance(bearer, JwtBearer)
    assert bearer.audience == frozenset({"a", "b"})
    assert isinstance(bearer.declaration(), OpenIdConnectSecurityScheme)
    oauth = security_from(
        arguments(
            "--jwks-url",
            "https://issuer.example/jwks",
            "--jwt-issuer",
            ISSUER,
            "--jwt-audience",
            AUDIENCE,
            "--jwt-token-url",
            "https://issuer.example/token",
            "--jwt-scope",
            "reports:write",
            "--jwt-algorithm",
            "ES256",
        ),
        None,
    )
    assert oauth is not None
    bearer = oauth.schemes["jwt"]
    assert isinstance(bearer, JwtBearer)
    assert bearer.algorithms == frozenset({"ES256"})
    declared = bearer.declaration()
    assert isinstance(declared, OAuth2SecurityScheme)
    assert declared.flows.client_credentials is not None
    assert declared.flows.client_credentials.scopes == {"reports:write": "reports:write"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--jwt-audience", AUDIENCE], "need one of --jwks-url"),
        (["--jwt-issuer", ISSUER], "need one of --jwks-url"),
        (["--jwks-url", "https://i.example/k", "--jwt-issuer", ISSUER], "--jwt-audience"),
        (["--jwks-url", "https://i.example/k", "--jwt-audience", AUDIENCE], "needs --jwt-issuer"),
        (
            ["--jwks-url", "https://i.example/k", "--oidc-discovery-url", DISCOVERY],
            "got \\['--jwks-url', '--oidc-discovery-url'\\]",
        ),
        (
            ["--jwks-url", "http://i.example/k", "--jwt-issuer", ISSUER, "--jwt-audience", "a"],
            "https only",
        ),
        (
            [*("--jwks-file", "missing.json", "--jwt-issuer", ISSUER, "--jwt-audience", "a")],
            "No such file",
        ),
        (
            [
                *("--jwks-url", "https://i.example/k", "--jwt-issuer", ISSUER),
                *("--jwt-audience", "a", "--jwt-algorithm", "none"),
            ],
            "algorithms",
        ),
    ],
)
def test_what_is_missing_is_said_in_one_line(options: list[str], message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        security_from(arguments(*options), None)


def test_the_served_card_declares_the_scheme_and_the_skills_scopes(tmp_path: Path) -> None:
    agent = Agent("Reports")

    @agent.skill(scopes=["reports:write"])
    async def write(task: TaskContext) -> str:
        return "written"

    given = arguments(
        "--jwks-file", keyed(tmp_path), "--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE
    )
    service = make_handler(agent, "http://127.0.0.1:8000", security=security_from(given, None))
    card = service.card
    assert set(card.security_schemes) == {"jwt"}
    (requirement,) = card.skills[0].security_requirements
    assert requirement.schemes == {"jwt": ("reports:write",)}
