"""The authoring API: `Agent` (skills, routing, card), `FunctionExecutor` (suspended
sessions, `session_count()`) and `TaskContext` (what an agent function sees and the moves
it makes), driven through `AgentService`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from parley.model import (
    AgentExtension,
    AgentProvider,
    Artifact,
    DataPart,
    Message,
    Part,
    RawPart,
    SendMessageRequest,
    TaskArtifactUpdateEvent,
    TaskState,
    TextPart,
    UrlPart,
)
from parley.protocol.errors import InvalidAgentResponseError
from parley.server.agent import SKILL_METADATA_KEY, Agent
from parley.server.context import CallContext, Caller
from parley.server.task_context import TaskContext, to_parts
from tests.server.support import (
    ALICE,
    as_message,
    as_task,
    collect,
    get,
    kinds,
    run,
    send,
    serve,
    settle,
    text_of,
    user,
)

# ----------------------------------------------------------------------------- the card


def test_the_card_describes_the_agent_and_its_skills() -> None:
    extension = AgentExtension(uri="urn:x", required=True)
    agent = Agent(
        "Helper",
        description="Helps.",
        version="2.1.0",
        streaming=False,
        push_notifications=True,
        input_modes=("text/plain", "application/json"),
        provider=AgentProvider(organization="Acme", url="https://acme.example"),
        documentation_url="https://acme.example/docs",
        extensions=(extension,),
    )

    @agent.skill(tags=["a"], examples=["do it"])
    async def do_things(task: TaskContext) -> str:
        """Does things."""
        return ""

    @agent.skill("custom", name="Custom one", description="explicit", tags=["b"])
    async def other(task: TaskContext) -> str:
        return ""

    card = agent.card("https://agent.example/a2a")
    assert (card.name, card.description, card.version) == ("Helper", "Helps.", "2.1.0")
    assert card.capabilities.streaming is False
    assert card.capabilities.push_notifications is True
    assert card.capabilities.extensions == (extension,)
    assert card.default_input_modes == ("text/plain", "application/json")
    assert card.provider is not None
    assert card.documentation_url == "https://acme.example/docs"
    assert [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces] == [
        ("JSONRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
        ("JSONRPC", "0.3"),
        ("HTTP+JSON", "0.3"),
    ]
    assert {i.url for i in card.supported_interfaces} == {"https://agent.example/a2a"}
    first, second = card.skills
    assert (first.id, first.name, first.description) == ("do_things", "Do Things", "Does things.")
    assert (first.tags, first.examples) == (("a",), ("do it",))
    assert (second.id, second.name, second.description) == ("custom", "Custom one", "explicit")
    changed = agent.card("https://x", bindings=("GRPC",), name="Renamed")
    assert changed.name == "Renamed"
    assert [i.protocol_binding for i in changed.supported_interfaces] == ["GRPC", "GRPC"]


def two_skill_agent() -> Agent:
    agent = Agent("Two")

    @agent.skill()
    async def first(task: TaskContext) -> str:
        return "first"

    @agent.skill()
    async def second(task: TaskContext) -> str:
        return "second"

    return agent


@pytest.mark.parametrize(
    ("message_meta", "request_meta", "expected"),
    [
        (None, None, "first"),
        ({SKILL_METADATA_KEY: "second"}, None, "second"),
        (None, {SKILL_METADATA_KEY: "second"}, "second"),
        ({SKILL_METADATA_KEY: "unknown"}, None, "first"),
        ({SKILL_METADATA_KEY: 7}, None, "first"),
    ],
)
def test_messages_are_routed_by_the_skill_metadata(
    message_meta: dict[str, Any] | None, request_meta: dict[str, Any] | None, expected: str
) -> None:
    service, _ = serve(two_skill_agent())

    async def main() -> None:
        request = SendMessageRequest(
            message=user("x", metadata=message_meta), metadata=request_meta
        )
        task = as_task(await service.send_message(ALICE, request))
        assert task.artifacts[0].parts == (TextPart(text=expected),)

    run(main())


def test_an_agent_without_skills_fails_the_task() -> None:
    service, _ = serve(Agent("Empty"))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is TaskState.FAILED
        assert "no skills" in text_of(task.status.message)

    run(main())


# ----------------------------------------------------------------------------- results


def agent_returning(value: Any, *, sync: bool = False) -> Agent:
    agent = Agent("Returner")
    if sync:

        @agent.skill()
        def plain(task: TaskContext) -> Any:
            return value

    else:

        @agent.skill()
        async def returner(task: TaskContext) -> Any:
            return value

    return agent


ARTIFACT = Artifact(artifact_id="fixed", parts=(TextPart(text="art"),), name="report")


@pytest.mark.parametrize(
    ("value", "parts"),
    [
        ("text", (TextPart(text="text"),)),
        ({"a": 1}, (DataPart(data={"a": 1}, media_type="application/json"),)),
        ([1, 2], (DataPart(data=[1, 2], media_type="application/json"),)),
        (UrlPart(url="https://x/y.txt"), (UrlPart(url="https://x/y.txt"),)),
        (
            [TextPart(text="a"), RawPart(raw=b"b")],
            (TextPart(text="a"), RawPart(raw=b"b")),
        ),
        (ARTIFACT, ARTIFACT.parts),
    ],
    ids=["str", "dict", "json-list", "part", "parts", "artifact"],
)
@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
def test_a_returned_value_becomes_the_artifact_of_the_completed_task(
    value: Any, parts: tuple[Part, ...], sync: bool
) -> None:
    service, executor = serve(agent_returning(value, sync=sync))

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        assert kinds(events) == ["task:SUBMITTED", "artifact", "status:COMPLETED"]
        chunk = events[1]
        assert isinstance(chunk, TaskArtifactUpdateEvent)
        assert chunk.artifact.parts == parts
        assert chunk.last_chunk
        if value is ARTIFACT:
            assert chunk.artifact == ARTIFACT
        await settle()
        assert executor.session_count() == 0

    run(main())


def test_returning_none_completes_without_artifacts() -> None:
    service, _ = serve(agent_returning(None))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is TaskState.COMPLETED
        assert task.artifacts == ()

    run(main())


def test_an_empty_json_list_is_data() -> None:
    assert to_parts([]) == (DataPart(data=[], media_type="application/json"),)


def test_complete_then_return_nothing() -> None:
    agent = Agent("Completer")

    @agent.skill()
    async def finish(task: TaskContext) -> None:
        await task.complete("all done")
        assert task.finished

    service, _ = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is TaskState.COMPLETED
        assert text_of(task.status.message) == "all done"
        assert task.artifacts == ()

    run(main())


def test_returning_a_value_after_complete_changes_nothing() -> None:
    """The task was already finished: the late result is refused, the task stays
    COMPLETED with no artifact."""
    agent = Agent("Completer")

    @agent.skill()
    async def finish(task: TaskContext) -> str:
        await task.complete()
        return "too late"

    service, _ = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        await settle()
        stored = await get(service, task.id)
        assert stored.status.state is TaskState.COMPLETED
        assert stored.artifacts == ()

    run(main())


def test_moves_after_the_end_raise_in_the_agent() -> None:
    """An illegal move (here an update after completion) raises from the agent's call."""
    agent = Agent("Late")
    raised: list[Exception] = []

    @agent.skill()
    async def late(task: TaskContext) -> None:
        await task.complete()
        try:
            await task.update("still here")
        except InvalidAgentResponseError as exc:
            raised.append(exc)
        try:
            await task.artifact("late")
        except InvalidAgentResponseError as exc:
            raised.append(exc)

    service, _ = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        await settle()
        assert len(raised) == 2
        stored = await get(service, task.id)
        assert stored.status.state is TaskState.COMPLETED
        assert stored.artifacts == ()

    run(main())


@pytest.mark.parametrize(
    ("move", "state", "reason"),
    [
        ("reject", TaskState.REJECTED, "not my job"),
        ("fail", TaskState.FAILED, "could not"),
        ("reject-default", TaskState.REJECTED, "The agent declined this task"),
        ("fail-default", TaskState.FAILED, "The agent could not complete this task"),
    ],
)
def test_reject_and_fail_end_the_task_with_the_reason(
    move: str, state: TaskState, reason: str
) -> None:
    agent = Agent("Decider")

    @agent.skill()
    async def decide(task: TaskContext) -> str:
        await task.update("thinking")
        if move == "reject":
            task.reject(reason)
        if move == "fail":
            task.fail(reason)
        if move == "reject-default":
            task.reject()
        task.fail()

    service, executor = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is state
        assert text_of(task.status.message) == reason
        await settle()
        assert executor.session_count() == 0

    run(main())


def test_reject_before_any_event_creates_a_rejected_task() -> None:
    agent = Agent("Decider")

    @agent.skill()
    async def decide(task: TaskContext) -> str:
        task.reject("no")

    service, _ = serve(agent)

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        assert kinds(events) == ["task:SUBMITTED", "status:REJECTED"]

    run(main())


def test_an_agent_function_that_raises_fails_the_task_generically() -> None:
    agent = Agent("Broken")

    @agent.skill()
    async def broken(task: TaskContext) -> str:
        await task.update("starting")
        raise ValueError("internal detail 42")

    service, executor = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is TaskState.FAILED
        assert text_of(task.status.message) == "The agent failed while working on this task"
        assert "internal detail" not in repr(task)
        await settle()
        assert executor.session_count() == 0

    run(main())


# ----------------------------------------------------------------------------- direct replies


def test_a_reply_on_a_first_message_is_a_direct_message() -> None:
    agent = Agent("Replier")

    @agent.skill()
    async def reply(task: TaskContext) -> Message:
        assert task.task is None
        return task.reply({"answer": 42})

    service, _ = serve(agent)

    async def main() -> None:
        message = as_message(await service.send_message(ALICE, send("x", context_id="c")))
        assert message.parts == (DataPart(data={"answer": 42}, media_type="application/json"),)
        assert message.context_id == "c"

    run(main())


def test_a_reply_after_a_question_completes_the_task_with_it() -> None:
    """Once a task exists a reply cannot be a direct message: it completes the task, as
    its status message."""
    agent = Agent("Asker")

    @agent.skill()
    async def ask(task: TaskContext) -> Message:
        answer = await task.ask("which?")
        return task.reply(f"ok: {text_of(answer)}")

    service, _ = serve(agent)

    async def main() -> None:
        asked = as_task(await service.send_message(ALICE, send("x")))
        done = as_task(await service.send_message(ALICE, send("this", task_id=asked.id)))
        assert done.status.state is TaskState.COMPLETED
        assert text_of(done.status.message) == "ok: this"

    run(main())


def test_a_non_blocking_send_with_a_reply_completes_the_created_task() -> None:
    agent = Agent("Replier")

    @agent.skill()
    async def reply(task: TaskContext) -> Message:
        return task.reply("hello")

    service, _ = serve(agent)

    async def main() -> None:
        created = as_task(await service.send_message(ALICE, send("x", return_immediately=True)))
        await settle()
        task = await get(service, created.id)
        assert task.status.state is TaskState.COMPLETED
        assert text_of(task.status.message) == "hello"

    run(main())


def test_a_reply_after_progress_completes_the_task() -> None:
    agent = Agent("Replier")

    @agent.skill()
    async def reply(task: TaskContext) -> Message:
        await task.update("thinking")
        return task.reply("hello")

    service, _ = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is TaskState.COMPLETED
        assert text_of(task.status.message) == "hello"

    run(main())


# ----------------------------------------------------------------------------- streaming


def test_a_generator_with_no_chunks_completes_without_artifacts() -> None:
    agent = Agent("Quiet")

    @agent.skill()
    async def quiet(task: TaskContext) -> AsyncIterator[str]:
        chunks: list[str] = []
        for chunk in chunks:
            yield chunk

    service, _ = serve(agent)

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        assert kinds(events) == ["task:SUBMITTED", "status:WORKING", "status:COMPLETED"]

    run(main())


def test_a_generator_yielding_a_message_fails_the_task() -> None:
    agent = Agent("Wrong")

    @agent.skill()
    async def wrong(task: TaskContext) -> AsyncIterator[Any]:
        yield "fine"
        yield task.reply("not content")

    service, _ = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert task.status.state is TaskState.FAILED
        assert "content, not messages" in text_of(task.status.message)

    run(main())


def test_a_generator_may_finish_the_task_itself() -> None:
    agent = Agent("Self-finishing")

    @agent.skill()
    async def stream(task: TaskContext) -> AsyncIterator[str]:
        yield "a"
        yield "b"
        await task.complete("done early")

    service, _ = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        assert text_of(task.status.message) == "done early"
        assert [p for a in task.artifacts for p in a.parts] == [
            TextPart(text="a"),
            TextPart(text="b"),
        ]

    run(main())


def test_explicit_artifact_chunks() -> None:
    """`artifact()` returns the id for further chunks; append/lastChunk pass through and
    the chunks fold into one artifact."""
    agent = Agent("Chunker")

    @agent.skill()
    async def chunks(task: TaskContext) -> None:
        artifact_id = await task.artifact("a", name="doc")
        await task.artifact("b", artifact_id=artifact_id, append=True)
        await task.artifact("c", artifact_id=artifact_id, append=True, last_chunk=True)
        await task.artifact({"other": True}, name="second")
        await task.complete()

    service, _ = serve(agent)

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        flags = [(e.append, e.last_chunk) for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert flags == [(False, False), (True, False), (True, True), (False, False)]
        task = await get(service, as_task(events[0]).id)
        doc, second = task.artifacts
        assert doc.name == "doc"
        assert [p.text for p in doc.parts if isinstance(p, TextPart)] == ["a", "b", "c"]
        assert second.name == "second"
        assert second.parts == (DataPart(data={"other": True}, media_type="application/json"),)

    run(main())


# ----------------------------------------------------------------------------- TaskContext


def test_what_an_agent_function_sees() -> None:
    agent = Agent("Inspector")
    seen: dict[str, Any] = {}

    @agent.skill()
    async def inspect(task: TaskContext) -> None:
        seen.update(
            text=task.text,
            parts=task.parts,
            files=task.files,
            data=task.data,
            metadata=task.metadata,
            caller=task.caller.id,
            extensions=task.extensions,
            ids=(task.task_id, task.context_id),
            task=task.task,
            history=task.history,
            message=task.message,
        )
        await task.complete()

    service, _ = serve(agent)
    ctx = CallContext(caller=Caller(id="carol"), activated_extensions=("urn:ext",))
    parts: tuple[Part, ...] = (
        TextPart(text="line one"),
        RawPart(raw=b"\x00", filename="f.bin"),
        TextPart(text="line two"),
        UrlPart(url="https://x/doc.pdf"),
        DataPart(data={"n": 1}),
    )

    async def main() -> None:
        message = user(parts=parts, metadata={"a": 1, "b": 1})
        request = SendMessageRequest(message=message, metadata={"b": 2})
        task = as_task(await service.send_message(ctx, request))
        assert seen["text"] == "line one\nline two"
        assert seen["parts"] == parts
        assert seen["files"] == (parts[1], parts[3])
        assert seen["data"] == ({"n": 1},)
        assert seen["metadata"] == {"a": 1, "b": 2}
        assert seen["caller"] == "carol"
        assert seen["extensions"] == ("urn:ext",)
        assert seen["ids"] == (task.id, task.context_id)
        assert seen["task"] is None
        assert seen["history"] == (seen["message"],)

    run(main())


def test_ask_resumes_the_same_coroutine_with_the_reply_each_time() -> None:
    """Local state survives each suspension; each answer becomes the current message."""
    agent = Agent("Form")
    seen: list[tuple[str, int]] = []

    @agent.skill()
    async def form(task: TaskContext) -> str:
        answers: list[str] = []
        for question in ("name?", "age?"):
            reply = await task.ask(question)
            answers.append(text_of(reply))
            seen.append((task.text, len(task.history)))
        return ", ".join(answers)

    service, executor = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("start")))
        assert text_of(task.status.message) == "name?"
        task = as_task(await service.send_message(ALICE, send("Ada", task_id=task.id)))
        assert task.status.state is TaskState.INPUT_REQUIRED
        assert text_of(task.status.message) == "age?"
        assert executor.session_count() == 1
        task = as_task(await service.send_message(ALICE, send("36", task_id=task.id)))
        assert task.status.state is TaskState.COMPLETED
        assert task.artifacts[0].parts == (TextPart(text="Ada, 36"),)
        assert seen == [("Ada", 3), ("36", 5)]
        await settle()
        assert executor.session_count() == 0

    run(main())


def test_auth_required_resumes_with_the_next_message() -> None:
    agent = Agent("Guarded")

    @agent.skill()
    async def guarded(task: TaskContext) -> str:
        credentials = await task.auth_required("sign in first")
        return f"welcome {text_of(credentials)}"

    service, _ = serve(agent)

    async def main() -> None:
        events = await collect(service.send_streaming_message(ALICE, send("x")))
        assert kinds(events) == ["task:SUBMITTED", "status:AUTH_REQUIRED"]
        task_id = as_task(events[0]).id
        events = await collect(service.send_streaming_message(ALICE, send("me", task_id=task_id)))
        assert kinds(events) == [
            "task:AUTH_REQUIRED",
            "status:WORKING",
            "artifact",
            "status:COMPLETED",
        ]

    run(main())


def test_closing_the_executor_closes_suspended_sessions() -> None:
    agent = Agent("Asker")
    closed = asyncio.Event()

    @agent.skill()
    async def ask(task: TaskContext) -> str:
        try:
            await task.ask("?")
        except asyncio.CancelledError:
            closed.set()
            raise
        return "never"

    service, executor = serve(agent)

    async def main() -> None:
        for _ in range(3):
            await service.send_message(ALICE, send("x"))
        assert executor.session_count() == 3
        await executor.aclose()
        assert executor.session_count() == 0
        assert closed.is_set()

    run(main())


def test_to_parts() -> None:
    part = TextPart(text="p")
    assert to_parts(None) == ()
    assert to_parts("s") == (TextPart(text="s"),)
    assert to_parts(part) == (part,)
    assert to_parts([part, part]) == (part, part)
    assert to_parts((part,)) == (part,)
    assert to_parts(["a", 1]) == (DataPart(data=["a", 1], media_type="application/json"),)
    assert to_parts(ARTIFACT) == ARTIFACT.parts
