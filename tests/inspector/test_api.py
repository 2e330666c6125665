"""The inspector's JSON API and its errors (`parley.inspector.app`), in process: an anonymous
caller is named as such, a missing page or API path is the REST binding's error answer in
the version the request asked for (REFERENCE §6.5: 1.0's google.rpc.Status; 0.3's body),
and a failure inside an API function is a bare InternalError, never its traceback."""

from __future__ import annotations

import httpx
import pytest

from parley.inspector import app as inspector_app
from parley.server.context import ANONYMOUS, CallContext
from tests.inspector.agents import inspected_app

URL = "http://testserver"

pytestmark = pytest.mark.anyio


def client_of(app: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL)  # type: ignore[arg-type]


async def test_an_anonymous_caller_is_named_so_and_nothing_is_cached() -> None:
    async with client_of(inspected_app(URL)) as c:
        answer = await c.get("/inspector/api/whoami")
    assert answer.status_code == 200
    assert answer.json() == {"caller": ANONYMOUS}
    assert answer.headers["cache-control"] == "no-store"


V1_0 = {"A2A-Version": "1.0"}


@pytest.mark.parametrize("path", ["/inspector/nothing.html", "/inspector/api/nothing"])
async def test_a_missing_path_is_a_1_0_error_answer(path: str) -> None:
    async with client_of(inspected_app(URL)) as c:
        answer = await c.get(path, headers=V1_0)
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert error["code"] == 404
    assert error["message"] == f"{path}: no such page"
    reasons = [d.get("reason") for d in error["details"]]
    assert "METHOD_NOT_FOUND" in reasons


@pytest.mark.parametrize("headers", [{"A2A-Version": "0.3"}, {}], ids=["0.3", "no header"])
async def test_a_0_3_request_gets_the_0_3_error_form(headers: dict[str, str]) -> None:
    """Without A2A-Version a request is taken as 0.3's (R-VER-6)."""
    async with client_of(inspected_app(URL)) as c:
        answer = await c.get("/inspector/api/nothing", headers=headers)
    assert answer.status_code == 404
    body = answer.json()
    assert body["type"] == "MethodNotFoundError"
    assert body["message"] == "/inspector/api/nothing: no such page"
    assert "error" not in body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
async def test_the_api_is_read_only(method: str) -> None:
    async with client_of(inspected_app(URL)) as c:
        answer = await c.request(method, "/inspector/api/whoami")
    assert answer.status_code == 405
    assert answer.headers["allow"] == "GET"


async def test_a_failure_in_an_api_function_is_a_bare_internal_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(handler: object, ctx: CallContext) -> object:
        raise KeyError("secret internals")

    monkeypatch.setitem(inspector_app.API, "/api/whoami", broken)
    async with client_of(inspected_app(URL)) as c:
        answer = await c.get("/inspector/api/whoami", headers=V1_0)
    assert answer.status_code == 500
    assert "secret internals" not in answer.text
    assert answer.json()["error"]["status"] == "INTERNAL"
    assert "secret internals" in caplog.text  # logged for the operator


async def test_the_tenant_parameter_reaches_the_api(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    async def tenant_of(handler: object, ctx: CallContext) -> object:
        seen.append(ctx.tenant)
        return {"tenant": ctx.tenant}

    monkeypatch.setitem(inspector_app.API, "/api/whoami", tenant_of)
    async with client_of(inspected_app(URL)) as c:
        named = await c.get("/inspector/api/whoami", params={"tenant": "acme"})
        plain = await c.get("/inspector/api/whoami")
    assert (named.json(), plain.json()) == ({"tenant": "acme"}, {"tenant": ""})
    assert seen == ["acme", ""]
