"""The card declares exactly what is enforced, scheme by scheme: a client that knows only
the public card (the scheme's name, where a key goes, which HTTP scheme) and holds a valid
credential gets in; the same request without it is refused with the challenge of that
scheme; and the card names no scheme that the server does not check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.asgi import build_app
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, BearerTokens, JwtBearer, Scheme, Security
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.auth.jwt_support import AUDIENCE, ISSUER, claims, jwks, rsa_key
from tests.contracts.support import run

KEY = rsa_key("declared")
SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}


def place(declared: dict[str, Any], secret: str) -> tuple[dict[str, str], dict[str, str]]:
    """Headers and query parameters carrying `secret` as the declared scheme says (1.0
    members), as a card-following client would place it."""
    if "apiKeySecurityScheme" in declared:
        scheme = declared["apiKeySecurityScheme"]
        where, name = scheme["location"], scheme["name"]
        if where == "header":
            return {name: secret}, {}
        if where == "cookie":
            return {"Cookie": f"{name}={secret}"}, {}
        return {}, {name: secret}
    if "httpAuthSecurityScheme" in declared:
        return {"Authorization": f"{declared['httpAuthSecurityScheme']['scheme']} {secret}"}, {}
    raise AssertionError(f"no client knows how to use {declared}")


def jwt_scheme(tmp_path: Path) -> JwtBearer:
    path = tmp_path / "jwks.json"
    path.write_bytes(jwks(KEY))
    return JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_file=path)


SCHEMES: dict[str, tuple[Callable[[Path], Scheme], Callable[[], str]]] = {
    "api key in a header": (lambda _: ApiKeys({"k-1": "alice"}), lambda: "k-1"),
    "api key in the query": (
        lambda _: ApiKeys({"k-1": "alice"}, name="api_key", location="query"),
        lambda: "k-1",
    ),
    "api key in a cookie": (
        lambda _: ApiKeys({"k-1": "alice"}, name="session", location="cookie"),
        lambda: "k-1",
    ),
    "static bearer token": (lambda _: BearerTokens({"t-1": "alice"}), lambda: "t-1"),
    "JWT": (jwt_scheme, lambda: KEY.sign(claims())),
}


@pytest.mark.parametrize("kind", list(SCHEMES))
def test_the_declared_scheme_is_the_enforced_one(kind: str, tmp_path: Path) -> None:
    make, credential = SCHEMES[kind]
    scheme = make(tmp_path)
    agent = Agent("Declared", security=Security(scheme))

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.caller.id

    service = AgentService(agent.executor(), agent.card("http://t"), security=agent.security)
    app = build_app(service)

    async def scenario() -> tuple[dict[str, Any], httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            card = (await http.get("/.well-known/agent-card.json")).json()
            declared = card["securitySchemes"]
            headers, query = place(declared[next(iter(declared))], credential())
            v1 = {"A2A-Version": "1.0"}
            bare = await http.post("/", json=SEND, headers=v1)
            served = await http.post("/", json=SEND, headers={**v1, **headers}, params=query)
            return card, bare, served

    card, bare, served = run(scenario())
    assert list(card["securitySchemes"]) == [scheme.name]
    assert card["securityRequirements"] == [{"schemes": {scheme.name: {}}}]
    assert card["security"] == [{scheme.name: []}]
    assert bare.status_code == 401
    assert bare.headers["www-authenticate"] == scheme.challenge()
    assert served.status_code == 200, served.text
    assert "alice" in str(served.json()["result"]["task"]["artifacts"])
