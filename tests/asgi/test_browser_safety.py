"""A web page cannot drive an agent on the user's machine (`parley.asgi.guard`): bodies that
browsers send cross-site without a preflight (text/plain, form-urlencoded, multipart, no
Content-Type), requests a page of another site made (`Sec-Fetch-Site: cross-site`), and
requests for a foreign host name (DNS rebinding) are refused on JSON-RPC and HTTP+JSON, in
1.0 and 0.3, before the agent runs; JSON bodies and the app's own host names still work.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx
import pytest

from parley.asgi import A2AApp, build_app
from parley.protocol.negotiation import Version
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.asgi.helpers import V1, error_reason, rpc, send_body, send_params

pytestmark = pytest.mark.anyio

LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
JSON_BODY = {"content-type": "application/json"}


@dataclass(frozen=True)
class Call:
    """SendMessage in one binding and version: where it goes, its headers and JSON body."""

    name: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def jsonrpc(self) -> bool:
        return self.path == "/"


CALLS = [
    Call(
        "jsonrpc-1.0", "/", V1, json.dumps(rpc("SendMessage", send_params(Version.V1_0))).encode()
    ),
    Call(
        "jsonrpc-0.3", "/", {}, json.dumps(rpc("message/send", send_params(Version.V0_3))).encode()
    ),
    Call("rest-1.0", "/message:send", V1, json.dumps(send_body(Version.V1_0)).encode()),
    Call("rest-0.3", "/v1/message:send", {}, json.dumps(send_body(Version.V0_3)).encode()),
]


@dataclass
class Counted:
    """An agent that counts its runs, served by a real AgentService (memory store)."""

    runs: list[str] = field(default_factory=list)

    def service(self) -> AgentService:
        agent = Agent("Counter", description="Counts the messages it is sent.")

        @agent.skill()
        async def count(task: TaskContext) -> str:
            """Count the message."""
            self.runs.append(task.text)
            return "counted"

        return AgentService(agent.executor(), agent.card("http://localhost:8000"))


@pytest.fixture
def counted() -> Counted:
    return Counted()


@pytest.fixture
def service(counted: Counted) -> AgentService:
    return counted.service()


def client_for(app: A2AApp, base_url: str = "http://localhost:8000") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url)


@pytest.fixture
async def open_app(service: AgentService) -> AsyncIterator[httpx.AsyncClient]:
    """The default app: no Host check."""
    async with client_for(build_app(service)) as client:
        yield client


@pytest.fixture
async def loopback_app(service: AgentService) -> AsyncIterator[httpx.AsyncClient]:
    """An app that answers its loopback names only, as `parley serve` on 127.0.0.1."""
    async with client_for(build_app(service, allowed_hosts=LOOPBACK)) as client:
        yield client


async def post(
    client: httpx.AsyncClient, call: Call, headers: dict[str, str], body: bytes | None = None
) -> httpx.Response:
    content = call.body if body is None else body
    return await client.post(call.path, content=content, headers={**call.headers, **headers})


async def task_count(client: httpx.AsyncClient) -> int:
    """How many tasks ListTasks (1.0, with an allowed Host and a JSON body) finds."""
    body = rpc("ListTasks", {})
    response = await client.post("/", json=body, headers={**V1, "host": "localhost"})
    return len(response.json()["result"]["tasks"])


def refusal(response: httpx.Response, call: Call, status: int) -> str:
    """Check a refusal's status and spec-shaped body (JSON-RPC: a null id, -32005
    ContentTypeNotSupportedError for a body that is not JSON — what the official TCK
    expects (JSONRPC-SSE-002) — else -32600; REST 1.0: google.rpc.Status with the same
    reason; REST 0.3: a message); its text."""
    assert response.status_code == status, response.text
    code, reason = (
        (-32005, "CONTENT_TYPE_NOT_SUPPORTED")
        if status == 415
        else (
            -32600,
            "INVALID_REQUEST",
        )
    )
    body = response.json()
    if call.jsonrpc:
        assert body["jsonrpc"] == "2.0"
        assert body["id"] is None
        assert body["error"]["code"] == code
        if call.headers:
            assert error_reason(body["error"]) == reason
        return str(body["error"]["message"])
    if call.headers:
        assert body["error"]["code"] == status
        assert body["error"]["status"] == "INVALID_ARGUMENT"
        assert error_reason(body["error"]) == reason
        return str(body["error"]["message"])
    assert (body["code"], body["type"]) == (
        code,
        "ContentTypeNotSupportedError" if status == 415 else "InvalidRequestError",
    )
    return str(body["message"])


MULTIPART = (
    b'--x\r\nContent-Disposition: form-data; name="message"\r\n\r\n{"a": 1}\r\n--x--\r\n',
    "multipart/form-data; boundary=x",
)
REFUSED_BODIES: dict[str, Callable[[bytes], tuple[bytes, dict[str, str]]]] = {
    "text-plain": lambda body: (body, {"content-type": "text/plain;charset=UTF-8"}),
    "form-urlencoded": lambda body: (
        body,
        {"content-type": "application/x-www-form-urlencoded"},
    ),
    "multipart": lambda body: (MULTIPART[0], {"content-type": MULTIPART[1]}),
    "no-content-type": lambda body: (body, {}),
}


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.name)
@pytest.mark.parametrize("form", REFUSED_BODIES)
async def test_bodies_a_browser_posts_cross_site_are_refused(
    open_app: httpx.AsyncClient, counted: Counted, call: Call, form: str
) -> None:
    body, headers = REFUSED_BODIES[form](call.body)
    response = await post(open_app, call, headers, body)
    message = refusal(response, call, 415)
    assert "application/json" in message
    assert response.headers["accept"] == "application/a2a+json, application/json"
    assert counted.runs == []
    assert await task_count(open_app) == 0


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.name)
async def test_cross_site_requests_are_refused(
    open_app: httpx.AsyncClient, counted: Counted, call: Call
) -> None:
    """Even with a JSON body (which a browser sends cross-site only after a preflight)."""
    headers = {**JSON_BODY, "sec-fetch-site": "cross-site"}
    message = refusal(await post(open_app, call, headers), call, 403)
    assert "cross-site" in message
    assert counted.runs == []
    assert await task_count(open_app) == 0


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.name)
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "localhost.evil.example"])
async def test_foreign_hosts_are_refused(
    loopback_app: httpx.AsyncClient, counted: Counted, call: Call, host: str
) -> None:
    """DNS rebinding: the page's own name resolves to 127.0.0.1, with or without a port."""
    message = refusal(await post(loopback_app, call, {**JSON_BODY, "host": host}), call, 400)
    assert repr(host) in message
    assert counted.runs == []
    assert await task_count(loopback_app) == 0


async def test_foreign_hosts_get_no_card_but_health(loopback_app: httpx.AsyncClient) -> None:
    """The card and every other path need an allowed Host; a health probe (which often
    names the pod's address) does not, and learns nothing."""
    foreign = {"host": "evil.example:8000"}
    card = await loopback_app.get("/.well-known/agent-card.json", headers={**V1, **foreign})
    assert card.status_code == 400
    assert card.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert (await loopback_app.get("/", headers=foreign)).status_code == 400
    assert (await loopback_app.get("/tasks", headers={**V1, **foreign})).status_code == 400
    assert (await loopback_app.get("/healthz", headers=foreign)).status_code == 200


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.name)
@pytest.mark.parametrize(
    ("content_type", "host"),
    [
        ("application/json", "localhost:8000"),
        ("application/a2a+json; charset=utf-8", "127.0.0.1:8000"),
        ("Application/JSON;charset=UTF-8", "[::1]:8000"),
        ("application/a2a+json", "LOCALHOST"),
    ],
)
async def test_json_bodies_for_allowed_hosts_run(
    loopback_app: httpx.AsyncClient, counted: Counted, call: Call, content_type: str, host: str
) -> None:
    headers = {"content-type": content_type, "host": host, "sec-fetch-site": "same-origin"}
    response = await post(loopback_app, call, headers)
    assert response.status_code == 200, response.text
    assert "error" not in response.json()
    assert counted.runs == ["hello"]
    assert await task_count(loopback_app) == 1
    # Answered in the media type the request used (REFERENCE §2.1: HTTP+JSON SHOULD use
    # application/a2a+json; a client that sent application/json reads that back).
    sent = "application/a2a+json" if "a2a+json" in content_type else "application/json"
    assert response.headers["content-type"] == sent


@pytest.mark.parametrize("accept", ["application/a2a+json", "application/json", None])
async def test_a_request_without_a_body_is_answered_in_the_type_it_accepts(
    open_app: httpx.AsyncClient, accept: str | None
) -> None:
    """A GET (and its error) in `application/a2a+json` when the client accepts it."""
    headers = {**V1, **({"accept": accept} if accept else {})}
    expected = accept or "application/json"
    for path in ("/tasks", "/tasks/unknown"):
        response = await open_app.get(path, headers=headers)
        assert response.status_code in (200, 404), response.text
        assert response.headers["content-type"] == expected


async def test_a_body_less_post_needs_no_content_type(open_app: httpx.AsyncClient) -> None:
    """Clients send `POST /tasks/{id}:cancel` without a body or a Content-Type: it reaches
    the handler (here: the task does not exist)."""
    for path, headers in (("/tasks/t-1:cancel", V1), ("/v1/tasks/t-1:cancel", {})):
        response = await open_app.post(path, headers=headers)
        assert response.request.headers["content-length"] == "0"
        assert "content-type" not in response.request.headers
        assert response.status_code == 404, response.text


async def test_a_preflight_is_never_approved(open_app: httpx.AsyncClient) -> None:
    """A browser sends a JSON body cross-origin only after a CORS preflight; Parley answers
    none with `Access-Control-*` headers, and refuses the request itself anyway."""
    preflight = {
        "origin": "https://evil.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
    }
    for path in ("/", "/message:send", "/v1/message:send"):
        response = await open_app.options(path, headers=preflight)
        assert response.status_code in (400, 405)  # a preflight names no A2A-Version
        assert not [name for name in response.headers if name.startswith("access-control-")]
    cross = {**JSON_BODY, "origin": "https://evil.example", "sec-fetch-site": "cross-site"}
    assert (await post(open_app, CALLS[0], cross)).status_code == 403


async def test_the_public_card_stays_readable_cross_site(open_app: httpx.AsyncClient) -> None:
    cross = {"sec-fetch-site": "cross-site"}
    for path in ("/.well-known/agent-card.json", "/"):
        response = await open_app.get(path, headers=cross)
        assert response.status_code == 200
        assert response.json()["name"] == "Counter"
    assert (await open_app.get("/tasks", headers={**V1, **cross})).status_code == 403


async def test_the_version_may_be_a_query_parameter(
    loopback_app: httpx.AsyncClient, counted: Counted
) -> None:
    """REFERENCE §1.2 (spec §3.6.1): `?A2A-Version=1.0` stands for the header; a JSON body
    is still required, so the query does not open a way for a simple request."""
    call = CALLS[0]
    path = "/?A2A-Version=1.0"
    refused = await loopback_app.post(
        path, content=call.body, headers={"content-type": "text/plain"}
    )
    assert refused.status_code == 415
    answered = await loopback_app.post(path, content=call.body, headers=JSON_BODY)
    assert answered.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert counted.runs == ["hello"]


def test_allowed_hosts_are_checked(service: AgentService) -> None:
    with pytest.raises(ValueError, match="allowed_hosts"):
        build_app(service, allowed_hosts=[])
    assert build_app(service, allowed_hosts=["*", "x"]).allowed_hosts is None
    names = build_app(service, allowed_hosts=["Example.COM:443", "::1", " [::2]:80 "])
    assert names.allowed_hosts == frozenset({"example.com", "[::1]", "[::2]"})
    assert build_app(service, allowed_hosts="localhost").allowed_hosts == frozenset({"localhost"})
