"""The checks' failure and skip branches, each against a scripted interface (a fake
`Exchange` answering with chosen results, decoded by the real codecs), and the runner's
card-reading and interface-selection branches against an in-process fake HTTP server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
import pytest

from parley.client.card import GRPC_BINDING, HTTP_JSON_BINDING, JSONRPC_BINDING
from parley.conformance import card_checks, stream_checks, task_checks
from parley.conformance.context import CardContext, InterfaceContext, NoTaskError
from parley.conformance.exchange import Answer, StreamAnswer, Subject
from parley.conformance.results import CheckFailedError, CheckSkippedError, Status
from parley.conformance.runner import check_agent
from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    ListTasksResponse,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import errors as e
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.codec_seam import Codec
from parley.wire.errors import ERROR_INFO_TYPE, ERROR_TABLE

SSE = "text/event-stream"
URL = "http://127.0.0.1:9/a2a"

NEVER_USED = httpx.AsyncClient()
"""The client a Subject is built on for its codec and framing rules only (no request)."""

Responder = Callable[[Operation, Any], Answer]


@dataclass
class Scripted:
    """An `Exchange` whose answers are scripted; codec and framing are a real Subject's."""

    binding: str = JSONRPC_BINDING
    version: Version = Version.V1_0
    respond: Responder | None = None
    streamed: StreamAnswer = field(default_factory=lambda: StreamAnswer(200, SSE))
    calls: list[Operation] = field(default_factory=list)

    @property
    def _real(self) -> Subject:
        return Subject(NEVER_USED, self.binding, self.version, URL)

    @property
    def url(self) -> str:
        return URL

    @property
    def label(self) -> str:
        return f"{self.binding} {self.version.value} {URL}"

    @property
    def codec(self) -> Codec[Any]:
        return self._real.codec

    async def call(self, operation: Operation, request: Any, **options: Any) -> Answer:
        self.calls.append(operation)
        assert self.respond is not None
        return self.respond(operation, request)

    async def stream(self, operation: Operation, request: Any, **options: Any) -> StreamAnswer:
        self.calls.append(operation)
        return self.streamed

    def framing_problem(self, answer: StreamAnswer) -> str | None:
        return self._real.framing_problem(answer)

    def unauthenticated(self, answer: Answer) -> str | None:
        return None

    async def aclose(self) -> None:
        pass


def card(*, streaming: bool = True) -> AgentCard:
    return AgentCard(
        name="Scripted",
        description="d",
        version="1",
        supported_interfaces=(
            AgentInterface(url=URL, protocol_binding="JSONRPC", protocol_version="1.0"),
        ),
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=("text/plain",),
        default_output_modes=("text/plain",),
        skills=(AgentSkill(id="s", name="s", description="s", tags=("t",)),),
    )


def context(subject: Scripted, *, streaming: bool = True) -> InterfaceContext:
    return InterfaceContext(subject, card(streaming=streaming), {})


def answer(
    result: Any = None, *, error: Any = None, status: int = 200, grpc_code: str = ""
) -> Answer:
    body = {"result": result} if error is None else {"error": error}
    return Answer(status, "application/json", httpx.Headers(), body, "", result, error, grpc_code)


def task(state: TaskState = TaskState.COMPLETED, history: int = 0, tid: str = "t1") -> Task:
    messages = tuple(agent_message(f"m{i}") for i in range(history))
    return Task(id=tid, context_id="c1", status=TaskStatus(state=state), history=messages)


def agent_message(mid: str = "m", role: Role = Role.AGENT, parts: int = 1) -> Message:
    return Message(
        message_id=mid, role=role, parts=tuple(TextPart(text="hi") for _ in range(parts))
    )


def encoded(subject: Scripted, operation: Operation, value: Any) -> Any:
    return subject.codec.encode_response(operation, value)


async def _awaited(check: Awaitable[str]) -> str:
    return await check


def run(check: Awaitable[str]) -> str:
    return asyncio.run(_awaited(check))


def fails(check: Awaitable[str], match: str) -> None:
    with pytest.raises(CheckFailedError, match=match):
        run(check)


def skips(check: Awaitable[str], match: str) -> None:
    with pytest.raises(CheckSkippedError, match=match):
        run(check)


# --- stream checks -------------------------------------------------------------------


def streamed(**fields: Any) -> Scripted:
    return Scripted(streamed=StreamAnswer(200, SSE, **fields))


def events(subject: Scripted, *values: Any) -> list[Any]:
    return [subject.codec.encode_event(value) for value in values]


def test_stream_framing_fails_on_malformed_data_errors_and_no_events() -> None:
    fails(stream_checks.stream_framing(context(streamed(malformed=["not json"]))), "not a JSON")
    fails(
        stream_checks.stream_framing(context(streamed(errors=[{"code": -32603}]))),
        "carries an error",
    )
    fails(stream_checks.stream_framing(context(streamed())), "no event")
    wrong_type = Scripted(streamed=StreamAnswer(200, "text/plain", events=[{}]))
    fails(stream_checks.stream_framing(context(wrong_type)), "content type text/plain")


def test_stream_order_message_streams() -> None:
    subject = Scripted()
    subject.streamed = StreamAnswer(200, SSE, events=events(subject, agent_message()), ended=True)
    assert run(stream_checks.stream_order(context(subject))) == "one Message"
    subject.streamed = StreamAnswer(
        200, SSE, events=events(subject, agent_message(), agent_message("m2")), ended=True
    )
    fails(stream_checks.stream_order(context(subject)), "holds 2 events, not one")


def test_stream_order_failures_after_the_task() -> None:
    subject = Scripted()
    working = task(TaskState.WORKING)
    update = TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=TaskStatus(state=TaskState.COMPLETED)
    )
    artifact = TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(artifact_id="a", parts=(TextPart(text="x"),)),
    )
    subject.streamed = StreamAnswer(200, SSE, events=events(subject, working, working))
    fails(stream_checks.stream_order(context(subject)), "a Task or Message after the first")
    subject.streamed = StreamAnswer(200, SSE, events=events(subject, working, artifact))
    fails(stream_checks.stream_order(context(subject)), "leaves the task unchanged")
    subject.streamed = StreamAnswer(200, SSE, events=events(subject, working))
    fails(stream_checks.stream_order(context(subject)), "leaves the task WORKING")
    subject.streamed = StreamAnswer(200, SSE, events=events(subject, working, update))
    fails(stream_checks.stream_order(context(subject)), "stays open after the task became")
    subject.streamed = StreamAnswer(200, SSE, events=events(subject, working, update), ended=True)
    assert run(stream_checks.stream_order(context(subject))) == (
        "Task first, 1 updates, ends COMPLETED"
    )
    subject.streamed = StreamAnswer(200, SSE, events=[{"neither": 1}], ended=True)
    fails(stream_checks.stream_order(context(subject)), "an event does not decode")
    assert stream_checks._state(agent_message()) is None


def test_stream_order_skips() -> None:
    skips(stream_checks.stream_order(context(streamed(), streaming=False)), "not declare")
    skips(stream_checks.stream_order(context(streamed())), "no events to order")


def test_stream_undeclared_failures() -> None:
    running = streamed(events=[{"task": {}}])
    fails(
        stream_checks.stream_undeclared(context(running, streaming=False)),
        r"the stream runs \(1 events\)",
    )
    silent = Scripted(streamed=StreamAnswer(404, "text/html", text="nope"))
    fails(
        stream_checks.stream_undeclared(context(silent, streaming=False)),
        "no error answer: HTTP 404 nope",
    )
    refused = streamed(errors=[{"code": -32004}])
    assert run(stream_checks.stream_undeclared(context(refused, streaming=False))) == "refused"


# --- task checks ---------------------------------------------------------------------


def test_reachable_fails_on_non_json_and_empty_answers() -> None:
    text = Answer(502, "text/html", httpx.Headers(), None, "<html>bad gateway</html>")
    fails(task_checks.reachable(context(Scripted(respond=lambda o, r: text))), "not a JSON")
    empty = Answer(200, "application/json", httpx.Headers(), {})
    fails(
        task_checks.reachable(context(Scripted(respond=lambda o, r: empty))),
        "neither a result nor an error",
    )
    grpc = answer(error={"status": "NOT_FOUND"}, grpc_code="NOT_FOUND")
    assert run(task_checks.reachable(context(Scripted(respond=lambda o, r: grpc)))) == (
        "gRPC NOT_FOUND"
    )


def sending(value: Any) -> Scripted:
    subject = Scripted()
    payload = encoded(subject, Operation.SEND_MESSAGE, value)
    subject.respond = lambda o, r: answer(payload)
    return subject


def test_send_shape_branches() -> None:
    assert run(task_checks.send_shape(context(sending(agent_message())))) == "a Message"
    fails(
        task_checks.send_shape(context(sending(agent_message(role=Role.USER)))),
        "not the agent's",
    )
    fails(
        task_checks.send_shape(context(sending(agent_message(parts=0)))),
        "does not decode: message.parts: at least one part is required",
    )
    no_context = Task(id="t", context_id="", status=TaskStatus(state=TaskState.COMPLETED))
    fails(task_checks.send_shape(context(sending(no_context))), "lacks its id or contextId")
    fails(
        task_checks.send_shape(context(sending(task(TaskState.UNSPECIFIED)))),
        "state is unspecified",
    )
    assert run(task_checks.send_shape(context(sending(task())))) == "a Task, COMPLETED"


def test_send_shape_fails_on_an_undecodable_or_error_answer() -> None:
    odd = Scripted(respond=lambda o, r: answer({"neither": True}))
    fails(task_checks.send_shape(context(odd)), "SendMessage result does not decode")
    refused = Scripted(respond=lambda o, r: answer(error={"code": -32603, "message": "x"}))
    fails(task_checks.send_shape(context(refused)), "SendMessage answered HTTP 200 with error")


class OddCodec:
    """A codec whose SendMessage result decodes to neither a Task nor a Message."""

    def decode_response(self, operation: Operation, payload: Any) -> Any:
        return TaskStatus(state=TaskState.COMPLETED)


@dataclass
class OddlyDecoding(Scripted):
    @property
    def codec(self) -> Codec[Any]:
        return cast("Codec[Any]", OddCodec())


def test_send_shape_fails_on_a_result_that_is_neither() -> None:
    subject = OddlyDecoding(respond=lambda o, r: answer({"status": {}}))
    fails(task_checks.send_shape(context(subject)), "neither a Task nor a Message: TaskStatus")


def test_send_history_length_skips_a_message() -> None:
    skips(
        task_checks.send_history_length(context(sending(agent_message()))),
        "answered the checker's message with a Message",
    )


def test_task_checks_skip_when_the_agent_answers_messages() -> None:
    skips(task_checks.get_history_length(context(sending(agent_message()))), "with a Message")
    skips(task_checks.cancel_terminal(context(sending(agent_message()))), "with a Message")
    with pytest.raises(NoTaskError):
        asyncio.run(context(sending(agent_message())).new_task())


def test_terminal_task_skips_a_task_a_cancel_leaves_live() -> None:
    subject = Scripted()
    live = encoded(subject, Operation.SEND_MESSAGE, task(TaskState.WORKING))
    still = encoded(subject, Operation.CANCEL_TASK, task(TaskState.WORKING))
    subject.respond = lambda o, r: answer(live if o is Operation.SEND_MESSAGE else still)
    skips(task_checks.send_terminal(context(subject)), "still WORKING after a cancel")
    assert subject.calls == [Operation.SEND_MESSAGE, Operation.CANCEL_TASK]


def listing(pages: list[ListTasksResponse], *, grpc: str = "") -> Scripted:
    subject = Scripted()
    made = encoded(subject, Operation.SEND_MESSAGE, task())
    served = iter(pages)

    def respond(operation: Operation, request: Any) -> Answer:
        if operation is Operation.SEND_MESSAGE:
            return answer(made)
        return answer(encoded(subject, operation, next(served)), grpc_code=grpc)

    subject.respond = respond
    return subject


def page(*ids: str, token: str = "") -> ListTasksResponse:
    tasks = tuple(task(tid=tid) for tid in ids)
    return ListTasksResponse(tasks=tasks, next_page_token=token, page_size=1, total_size=2)


def test_list_paging_failures() -> None:
    fails(task_checks.list_paging(context(listing([page("a", "b", token="n")]))), "gave 2 tasks")
    fails(task_checks.list_paging(context(listing([page("a")]))), "has no nextPageToken")
    repeated = listing([page("a", token="n"), page("a", token="")])
    fails(task_checks.list_paging(context(repeated)), "repeats the first")
    good = listing([page("a", token="n"), page("b")], grpc="OK")
    assert run(task_checks.list_paging(context(good))) == "two pages of one task each"


def test_list_paging_skips_without_list_tasks_and_without_tasks() -> None:
    legacy = Scripted(version=Version.V0_3)
    skips(task_checks.list_paging(context(legacy)), "no ListTasks in 0.3")
    skips(task_checks.list_paging(context(sending(agent_message()))), "with a Message")


# --- context: the error table ---------------------------------------------------------


def error_info(reason: str) -> dict[str, Any]:
    return {"error": {"details": [{"@type": ERROR_INFO_TYPE, "reason": reason}]}}


def expect(subject: Scripted, reply: Answer, error: type[e.A2AError]) -> str:
    return context(subject).expect_error(reply, error)


def test_rest_error_with_the_right_reason_but_a_wrong_status_fails() -> None:
    row = ERROR_TABLE[e.TaskNotFoundError]
    rest = Scripted(binding=HTTP_JSON_BINDING)
    reply = Answer(599, "application/json", httpx.Headers(), None, "", None, error_info(row.reason))
    with pytest.raises(CheckFailedError, match=f"HTTP {row.http_status}"):
        expect(rest, reply, e.TaskNotFoundError)


def test_legacy_rest_error_with_a_wrong_status_fails() -> None:
    row = ERROR_TABLE[e.TaskNotFoundError]
    legacy = Scripted(binding=HTTP_JSON_BINDING, version=Version.V0_3)
    reply = Answer(599, "application/json", httpx.Headers(), None, "", None, {"message": "x"})
    with pytest.raises(CheckFailedError, match=f"HTTP {row.http_status_v03}"):
        expect(legacy, reply, e.TaskNotFoundError)


def test_grpc_errors_need_an_error_info_and_the_right_status() -> None:
    row = ERROR_TABLE[e.TaskNotFoundError]
    grpc = Scripted(binding=GRPC_BINDING)
    bare = answer(error={"error": {"details": []}}, grpc_code=row.grpc_status)
    with pytest.raises(CheckFailedError, match="R-ERR-23"):
        expect(grpc, bare, e.TaskNotFoundError)
    wrong = answer(error=error_info(row.reason), grpc_code="DATA_LOSS")
    with pytest.raises(CheckFailedError, match=f"gRPC {row.grpc_status}\\)"):
        expect(grpc, wrong, e.TaskNotFoundError)
    right = answer(error=error_info(row.reason), grpc_code=row.grpc_status)
    assert "table" in expect(grpc, right, e.TaskNotFoundError)


def test_legacy_grpc_error_accepts_the_primary_tables_status_noted() -> None:
    row = ERROR_TABLE[e.TaskNotCancelableError]
    legacy = Scripted(binding=GRPC_BINDING, version=Version.V0_3)
    primary = answer(error={"error": {}}, grpc_code=row.grpc_status)
    assert expect(legacy, primary, e.TaskNotCancelableError) == (
        f"TaskNotCancelableError: gRPC {row.grpc_status} — the 1.0 table's status"
    )
    assert expect(
        legacy, answer(error={}, grpc_code=row.grpc_status_v03), e.TaskNotCancelableError
    ) == (f"TaskNotCancelableError: gRPC {row.grpc_status_v03}")
    with pytest.raises(CheckFailedError, match=f"gRPC {row.grpc_status_v03}\\)"):
        expect(legacy, answer(error={}, grpc_code="DATA_LOSS"), e.TaskNotCancelableError)


# --- card checks ---------------------------------------------------------------------

GOOD: dict[str, Any] = {
    "name": "n",
    "description": "d",
    "version": "1",
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "s", "description": "s", "tags": []}],
    "supportedInterfaces": [{"url": URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
}


def card_context(document: Any, decoded: AgentCard | None = None, error: str = "") -> CardContext:
    return CardContext(NEVER_USED, URL, document, decoded, error)


def test_required_fields_failures() -> None:
    fails(card_checks.required_fields(card_context(["a list"])), "not a JSON object")
    no_interfaces = {k: v for k, v in GOOD.items() if k != "supportedInterfaces"}
    fails(card_checks.required_fields(card_context(no_interfaces)), "supportedInterfaces")
    bad_skills = {**GOOD, "skills": [{"id": "s", "name": "s"}, "not a skill"]}
    fails(
        card_checks.required_fields(card_context(bad_skills)),
        r"skills\[0\]\.description, skills\[0\]\.tags, skills\[1\]\.id",
    )
    fails(card_checks.required_fields(card_context(GOOD, None, "boom")), "does not decode: boom")
    assert run(card_checks.required_fields(card_context(GOOD, card()))) == (
        "7 top-level fields and 1 skills"
    )


def test_interfaces_failures() -> None:
    legacy = {k: v for k, v in GOOD.items() if k != "supportedInterfaces"}
    assert run(card_checks.interfaces(card_context(legacy))).startswith("a legacy card")
    assert run(card_checks.interfaces(card_context("not an object"))).startswith("a legacy")
    fails(card_checks.interfaces(card_context({**GOOD, "supportedInterfaces": []})), "empty")
    entries = [
        "not an object",
        {"url": "/relative", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": "dns:///x:1", "protocolBinding": "GRPC"},
    ]
    with pytest.raises(CheckFailedError) as caught:
        run(card_checks.interfaces(card_context({**GOOD, "supportedInterfaces": entries})))
    assert str(caught.value) == (
        "[0] is not an object; [1].url '/relative' is not an absolute HTTP(S) URL; "
        "[2].protocolVersion missing"
    )
    assert run(card_checks.interfaces(card_context(GOOD))) == "1 interfaces"


# --- runner --------------------------------------------------------------------------


def serving_card(
    card_body: Callable[[], bytes] | None, rpc: Callable[[httpx.Request], httpx.Response]
) -> httpx.AsyncClient:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/.well-known/"):
            if card_body is None:
                raise httpx.ConnectError("refused", request=request)
            return httpx.Response(200, content=card_body())
        return rpc(request)

    return httpx.AsyncClient(transport=httpx.MockTransport(handle))


def unreachable(request: httpx.Request) -> httpx.Response:
    return httpx.Response(502, text="bad gateway")


def check(client: httpx.AsyncClient, only: tuple[str, ...] = ()) -> list[Any]:
    async def go() -> list[Any]:
        async with client:
            report = await check_agent("http://127.0.0.1:9/", http=client, only=only)
        return list(report.results)

    return asyncio.run(go())


def test_runner_reports_a_card_it_cannot_fetch_or_parse() -> None:
    (served,) = check(serving_card(None, unreachable))
    assert served.status is Status.FAIL
    assert "ConnectError: refused" in served.detail
    (served,) = check(serving_card(lambda: b"{not json", unreachable))
    assert served.status is Status.FAIL
    assert served.detail.endswith("the card is not JSON")


def test_runner_stops_after_the_card_checks_when_the_card_does_not_decode() -> None:
    document = {**GOOD, "capabilities": "streaming"}
    results = check(serving_card(lambda: json.dumps(document).encode(), unreachable))
    assert [r.check.id for r in results] == [
        "card.served",
        "card.required-fields",
        "card.interfaces",
    ]
    assert results[1].status is Status.FAIL
    assert "does not decode: Unreadable agent card: capabilities" in results[1].detail


def test_runner_skips_interfaces_it_cannot_check_and_dedupes() -> None:
    http = {"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    interfaces = [
        http,
        dict(http),
        {"url": "ws://127.0.0.1:9/", "protocolBinding": "urn:custom", "protocolVersion": "1.0"},
        {"url": "http://127.0.0.1:9/x", "protocolBinding": "JSONRPC", "protocolVersion": "7.7"},
    ]
    document = {**GOOD, "supportedInterfaces": interfaces}
    results = check(serving_card(lambda: json.dumps(document).encode(), unreachable))
    interface_results = [r for r in results if r.interface]
    by_label: dict[str, list[Any]] = {}
    for result in interface_results:
        by_label.setdefault(result.interface, []).append(result)
    assert len(by_label) == 3  # the duplicate JSON-RPC interface is checked once
    custom = by_label["urn:custom 1.0 ws://127.0.0.1:9/"]
    assert [(r.check.id, r.status) for r in custom] == [("interface.checked", Status.SKIP)]
    assert "not checked" in custom[0].detail
    future = by_label["JSONRPC 7.7 http://127.0.0.1:9/x"]
    assert "7.7 is not one the checker speaks" in future[0].detail
    rpc = by_label["JSONRPC 1.0 http://127.0.0.1:9/rpc"]
    assert rpc[0].check.id == "interface.reachable"
    assert rpc[0].status is Status.FAIL
    assert len(rpc) > 1
    assert all(r.status is Status.SKIP and "unreachable" in r.detail for r in rpc[1:])


def test_runner_turns_unforeseen_answers_into_failures() -> None:
    """A JSON answer the check does not foresee (a result that is a list) fails it."""

    def odd(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": [1]})

    document = {
        **GOOD,
        "supportedInterfaces": [
            {
                "url": "http://127.0.0.1:9/rpc",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
    }
    results = check(serving_card(lambda: json.dumps(document).encode(), odd), only=("send.shape",))
    (shape,) = [r for r in results if r.check.id == "send.shape"]
    assert shape.status is Status.FAIL
    assert shape.detail == "SendMessage result does not decode: expected a JSON object"


def test_runner_turns_an_unforeseen_exception_into_a_failure() -> None:
    def exploding(request: httpx.Request) -> httpx.Response:
        raise RuntimeError("the transport blew up")

    document = {
        **GOOD,
        "supportedInterfaces": [
            {
                "url": "http://127.0.0.1:9/rpc",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
    }
    results = check(
        serving_card(lambda: json.dumps(document).encode(), exploding), only=("get.not-found",)
    )
    (found,) = [r for r in results if r.check.id == "get.not-found"]
    assert found.status is Status.FAIL
    assert found.detail == "unexpected answer: RuntimeError: the transport blew up"


def test_runner_skips_a_grpc_interface_it_cannot_dial(monkeypatch: pytest.MonkeyPatch) -> None:
    from parley.conformance import runner  # noqa: PLC0415

    def refuse(*args: Any) -> Any:
        raise RuntimeError("no grpc here")

    monkeypatch.setattr(runner, "_exchange", refuse)
    document = {
        **GOOD,
        "supportedInterfaces": [
            {"url": "127.0.0.1:9", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
        ],
    }
    results = check(serving_card(lambda: json.dumps(document).encode(), unreachable))
    (skipped,) = [r for r in results if r.interface]
    assert skipped.status is Status.SKIP
    assert skipped.detail == "cannot be checked: RuntimeError: no grpc here"
