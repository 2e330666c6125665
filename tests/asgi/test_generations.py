"""The A2A 1.1 draft over JSON-RPC and HTTP+JSON, on a server that serves it (`parley
serve --a2a-1.1-draft`): `A2A-Version: 1.1` is accepted and gets task generations —
on tasks and on every status and artifact update, one more each, the SSE id being the
generation, so a stream resumed with `Last-Event-ID` misses nothing; GetTask with
`currentGeneration` long-polls; a follow-up's `ifGenerationMatch` is checked. 1.0 and
0.3 requests never see a generation; a server without the option refuses 1.1."""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx
import pytest

from parley.asgi import A2AApp, build_app
from parley.cli.a2a_draft import add_a2a_draft_option, drafted, served_versions, with_interfaces
from parley.protocol.negotiation import Version, served_by
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.service import AgentService
from parley.server.stores.base import TaskKey
from parley.server.task_context import TaskContext
from parley.wire import sse
from tests.interop.agent import Probe, wait_for
from tests.interop.live import serving

pytestmark = pytest.mark.anyio

ANONYMOUS_CTX = CallContext()
V11 = {"A2A-Version": "1.1"}
V10 = {"A2A-Version": "1.0"}
STEPS = 3


def build_agent(probe: Probe) -> Agent:
    agent = Agent("Numbered", description="Gated steps, and a question.")

    @agent.skill()
    async def steps(task: TaskContext) -> None:
        """WORKING; then chunk i once gate `<key>/<i>` opens; COMPLETED after the last."""
        key = task.text
        await task.update("started")
        artifact_id = ""
        for i in range(STEPS):
            await wait_for(probe.gate(f"{key}/{i}"))
            artifact_id = await task.artifact(f"step-{i} ", artifact_id=artifact_id, append=i > 0)

    @agent.skill()
    async def question(task: TaskContext) -> str:
        answer = await task.ask("Which one?")
        return f"you said {answer.text}"

    return agent


def draft_arguments(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_a2a_draft_option(parser)
    return parser.parse_args(list(argv))


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[str, AgentService, Probe]]:
    probe = Probe()
    agent = drafted(build_agent(probe), draft_arguments("--a2a-1.1-draft"))  # as serve does
    services: list[AgentService] = []

    def make_app(url: str) -> A2AApp:
        services.append(AgentService(agent.executor(), agent.card(url)))
        return build_app(services[-1])  # serves what the card lists

    with serving(make_app) as url:
        yield url, services[0], probe


@pytest.fixture
async def client(live: tuple[str, AgentService, Probe]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live[0], timeout=10) as http:
        yield http


def message(text: str, skill: str, **fields: Any) -> dict[str, Any]:
    return {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "metadata": {"skill": skill},
        **fields,
    }


def rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}


async def frames(response: httpx.Response) -> AsyncIterator[sse.SSEEvent]:
    parser = sse.SSEParser()
    async for chunk in response.aiter_bytes():
        for frame in parser.feed(chunk):
            yield frame


def inner(frame: sse.SSEEvent, binding: str) -> tuple[str, dict[str, Any]]:
    """(member, object) of one stream frame's StreamResponse."""
    data = json.loads(frame.data)
    ((member, value),) = (data["result"] if binding == "jsonrpc" else data).items()
    return member, value


def stream_request(binding: str, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if binding == "jsonrpc":
        return "/", rpc("SendStreamingMessage", body)
    return "/message:stream", body


def subscribe_request(binding: str, task_id: str) -> tuple[str, str, dict[str, Any] | None]:
    if binding == "jsonrpc":
        return "POST", "/", rpc("SubscribeToTask", {"id": task_id})
    return "GET", f"/tasks/{task_id}:subscribe", None


# ----------------------------------------------------------------------------- negotiation


def test_the_option_serves_the_draft_and_lists_it_after_1_0() -> None:
    assert served_versions(draft_arguments()) == (Version.V1_0, Version.V0_3)
    on = served_versions(draft_arguments("--a2a-1.1-draft"))
    assert on == (Version.V1_0, Version.V1_1, Version.V0_3)
    card = Agent("a").card("http://127.0.0.1:1")
    listed = [i.protocol_version for i in with_interfaces(card, on).supported_interfaces]
    assert listed == ["1.0", "1.0", "1.1", "1.1", "0.3", "0.3"]
    assert with_interfaces(card, served_versions(draft_arguments())) is card
    plain = build_agent(Probe())
    assert drafted(plain, draft_arguments()) is plain
    assert served_by(card) == (Version.V1_0, Version.V0_3)
    assert served_by(with_interfaces(card, on)) == on


async def test_a_server_without_the_option_refuses_1_1() -> None:
    agent = build_agent(Probe())
    app = build_app(AgentService(agent.executor(), agent.card("http://test")))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        body = rpc("GetTask", {"id": "t1"})
        answer = (await http.post("/", json=body, headers=V11)).json()
    assert answer["error"]["code"] == -32009  # VersionNotSupportedError


async def test_the_card_lists_1_1_interfaces(client: httpx.AsyncClient) -> None:
    card = (await client.get("/.well-known/agent-card.json", headers=V10)).json()
    versions = {i["protocolVersion"] for i in card["supportedInterfaces"]}
    assert versions == {"1.0", "1.1", "0.3"}


# ----------------------------------------------------------------------------- numbering


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_every_event_carries_its_generation_as_its_sse_id(
    live: tuple[str, AgentService, Probe], client: httpx.AsyncClient, binding: str
) -> None:
    """R-GEN: the Task at 1, each update one more; the SSE id is that generation."""
    _, service, probe = live
    key = f"ids-{binding}"
    for i in range(STEPS):
        probe.gate(f"{key}/{i}").set()
    path, body = stream_request(binding, {"message": message(key, "steps")})
    seen: list[tuple[str, str, str]] = []
    task_id = ""
    async with client.stream("POST", path, json=body, headers=V11) as response:
        async for frame in frames(response):
            member, value = inner(frame, binding)
            task_id = task_id or value["id"]
            seen.append((frame.id, value.get("generation", ""), member))
    assert [(i, g) for i, g, _ in seen] == [(str(n), str(n)) for n in range(1, len(seen) + 1)]
    updates = ["statusUpdate", *["artifactUpdate"] * STEPS, "statusUpdate"]
    assert [m for _, _, m in seen] == ["task", *updates]
    got = await client.get(f"/tasks/{task_id}", headers=V11)
    assert got.json()["generation"] == seen[-1][1]
    stored = await service.store.get(service.store_scope(ANONYMOUS_CTX), task_id)
    assert stored is not None
    assert stored.task.generation == len(seen)


async def test_1_0_and_0_3_requests_never_see_a_generation(client: httpx.AsyncClient) -> None:
    body = {"message": message("x", "question")}
    for headers, method in ((V10, "SendMessage"), ({}, "message/send")):
        params = (
            body
            if headers
            else {
                "message": {
                    **body["message"],
                    "kind": "message",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "x"}],
                }
            }
        )
        answer = (await client.post("/", json=rpc(method, params), headers=headers)).json()
        assert "result" in answer, answer
        assert "generation" not in json.dumps(answer)


# ----------------------------------------------------------------------------- resume


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_stream_resumed_by_generation_misses_nothing(
    live: tuple[str, AgentService, Probe], binding: str
) -> None:
    """A dropped connection; SubscribeToTask with `Last-Event-ID: <generation>` replays
    the events after it, then the live ones: no gap, no repeat (R-GEN, DESIGN 5)."""
    url, _, probe = live
    key = f"resume-{binding}"
    path, body = stream_request(binding, {"message": message(key, "steps")})
    first: list[tuple[int, str]] = []
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=10))
        response = await stack.enter_async_context(
            http.stream("POST", path, json=body, headers=V11)
        )
        events = frames(response)
        with anyio.fail_after(5):
            async for frame in events:
                member, value = inner(frame, binding)
                first.append((int(frame.id), member))
                if member == "task":
                    task_id = value["id"]
                if member == "statusUpdate":  # WORKING: now let step 0 go, then drop
                    break
    assert first == [(1, "task"), (2, "statusUpdate")]
    probe.gate(f"{key}/0").set()  # generation 3 is committed while nobody listens
    probe.gate(f"{key}/1").set()
    verb, where, request = subscribe_request(binding, task_id)
    resumed: list[tuple[int, int, str]] = []
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        headers = {**V11, "Last-Event-ID": "2"}
        async with http.stream(verb, where, json=request, headers=headers) as response:
            with anyio.fail_after(5):
                async for frame in frames(response):
                    member, value = inner(frame, binding)
                    resumed.append((int(frame.id), int(value["generation"]), member))
                    if len(resumed) == 2:
                        probe.gate(f"{key}/2").set()
    numbers = [number for number, _, _ in resumed]
    assert numbers == list(range(3, 3 + len(resumed)))
    assert all(number == generation for number, generation, _ in resumed)
    assert [m for _, _, m in resumed] == [*["artifactUpdate"] * STEPS, "statusUpdate"]


# ----------------------------------------------------------------------------- ifGenerationMatch


async def ask(client: httpx.AsyncClient) -> dict[str, Any]:
    """A task the `question` skill left INPUT_REQUIRED (1.1 JSON)."""
    body = rpc("SendMessage", {"message": message("?", "question")})
    answer = (await client.post("/", json=body, headers=V11)).json()
    task: dict[str, Any] = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    return task


def follow_up(task: dict[str, Any], generation: int) -> dict[str, Any]:
    return {
        "message": message("blue", "question", taskId=task["id"], contextId=task["contextId"]),
        "configuration": {"ifGenerationMatch": str(generation)},
    }


async def test_if_generation_match_over_jsonrpc(client: httpx.AsyncClient) -> None:
    task = await ask(client)
    generation = int(task["generation"])
    body = rpc("SendMessage", follow_up(task, generation - 1))
    error = (await client.post("/", json=body, headers=V11)).json()["error"]
    assert error["code"] == -32010
    (info,) = error["data"]
    assert info["reason"] == "TASK_GENERATION_MISMATCH"
    assert info["metadata"] == {
        "taskId": task["id"],
        "expectedGeneration": str(generation - 1),
        "currentGeneration": str(generation),
    }
    body = rpc("SendMessage", follow_up(task, generation))
    done = (await client.post("/", json=body, headers=V11)).json()["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert int(done["generation"]) > generation


async def test_if_generation_match_over_rest(client: httpx.AsyncClient) -> None:
    task = await ask(client)
    generation = int(task["generation"])
    refused = await client.post("/message:send", json=follow_up(task, generation + 5), headers=V11)
    assert refused.status_code == 409
    status = refused.json()["error"]
    assert status["status"] == "ABORTED"
    assert status["details"][0]["reason"] == "TASK_GENERATION_MISMATCH"
    assert status["details"][0]["metadata"]["expectedGeneration"] == str(generation + 5)
    accepted = await client.post("/message:send", json=follow_up(task, generation), headers=V11)
    assert accepted.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_1_0_follow_up_cannot_carry_the_precondition(client: httpx.AsyncClient) -> None:
    """1.0 has no `ifGenerationMatch`: the member is not read, the follow-up goes through."""
    task = await ask(client)
    body = rpc("SendMessage", follow_up(task, 999))
    answer = (await client.post("/", json=body, headers=V10)).json()
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


# ----------------------------------------------------------------------------- long-poll


async def started_steps(client: httpx.AsyncClient, key: str) -> str:
    """A `steps` task, WORKING (generation 2) and waiting at gate `<key>/0`."""
    body = {"message": message(key, "steps"), "configuration": {"returnImmediately": True}}
    task = (await client.post("/message:send", json=body, headers=V11)).json()["task"]
    task_id: str = task["id"]
    with anyio.fail_after(5):
        while (await get(client, task_id)).get("generation") != "2":
            await anyio.sleep(0.01)
    return task_id


async def get(client: httpx.AsyncClient, task_id: str, **query: str) -> dict[str, Any]:
    answer: dict[str, Any] = (
        await client.get(f"/tasks/{task_id}", params=query, headers=V11)
    ).json()
    return answer


async def test_a_long_poll_answers_at_once_when_the_task_is_ahead(
    client: httpx.AsyncClient,
) -> None:
    task_id = await started_steps(client, "poll-ahead")
    with anyio.fail_after(5):  # the server would hold it for 30 s otherwise
        task = await get(client, task_id, currentGeneration="1")
        body = rpc("GetTask", {"id": task_id, "currentGeneration": "0"})
        over_rpc = (await client.post("/", json=body, headers=V11)).json()["result"]
    assert task["generation"] == over_rpc["generation"] == "2"


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_long_poll_holds_until_the_task_moves(
    live: tuple[str, AgentService, Probe], client: httpx.AsyncClient, binding: str
) -> None:
    _, service, probe = live
    key = f"poll-wait-{binding}"
    task_id = await started_steps(client, key)
    broker_key = TaskKey(*service.store_scope(ANONYMOUS_CTX), task_id)
    before = service.broker.subscriber_count(broker_key)
    answered: list[dict[str, Any]] = []

    async def poll() -> None:
        if binding == "rest":
            answered.append(await get(client, task_id, currentGeneration="2"))
        else:
            body = rpc("GetTask", {"id": task_id, "currentGeneration": "2"})
            answered.append((await client.post("/", json=body, headers=V11)).json()["result"])

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(poll)
            while service.broker.subscriber_count(broker_key) == before:  # it is waiting
                await anyio.sleep(0.005)
            assert answered == []
            probe.gate(f"{key}/0").set()
    assert answered[0]["generation"] == "3"
    assert answered[0]["artifacts"][0]["parts"] == [{"text": "step-0 "}]
    for i in (1, 2):
        probe.gate(f"{key}/{i}").set()


async def test_a_long_poll_returns_at_the_servers_timeout(
    live: tuple[str, AgentService, Probe], client: httpx.AsyncClient
) -> None:
    _, service, probe = live
    task_id = await started_steps(client, "poll-timeout")
    service.long_poll_timeout = 0.05
    try:
        with anyio.fail_after(5):
            task = await get(client, task_id, currentGeneration="2")
    finally:
        service.long_poll_timeout = AgentService.long_poll_timeout
        for i in range(STEPS):
            probe.gate(f"poll-timeout/{i}").set()
    assert task["generation"] == "2"
    assert task["status"]["state"] == "TASK_STATE_WORKING"
