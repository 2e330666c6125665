"""What the framework adapters share (`parley.adapters.conversation`): the conversation key
scopes the A2A context by caller so that no two (caller, context) pairs share a
conversation — anonymous callers included, whatever context id they name (DESIGN 8:
scope before lookup) — and text pieces stream as artifact chunks, the last piece of each
artifact marked `lastChunk` (REFERENCE §4.5: chunks appended to one artifact id)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.adapters.conversation import TextArtifacts, conversation_key
from parley.server.context import ANONYMOUS, Caller
from parley.server.task_context import TaskContext


@dataclass
class Sent:
    text: str
    artifact_id: str
    name: str
    append: bool
    last_chunk: bool


@dataclass
class FakeTask:
    """The part of a TaskContext the adapters' helpers use: who calls, in which context,
    and the artifacts they emit (recorded, each new artifact given the next id)."""

    caller: Caller = field(default_factory=Caller)
    context_id: str = "ctx"
    sent: list[Sent] = field(default_factory=list)

    async def artifact(
        self,
        content: Any,
        *,
        artifact_id: str = "",
        name: str = "",
        append: bool = False,
        last_chunk: bool = False,
    ) -> str:
        self.sent.append(Sent(content, artifact_id, name, append, last_chunk))
        return artifact_id or f"a{sum(not s.artifact_id for s in self.sent)}"


def _key(caller_id: str, context_id: str) -> str:
    task = FakeTask(caller=Caller(id=caller_id), context_id=context_id)
    return conversation_key(cast(TaskContext, task))


def test_an_anonymous_callers_conversation_is_its_context() -> None:
    assert Caller().id == ANONYMOUS
    assert _key(ANONYMOUS, "c-1") == "c-1"


@pytest.mark.parametrize(
    ("caller", "context", "key"),
    [
        ("alice", "c-1", "alice/c-1"),
        ("alice@example.com", "c-1", "alice%40example.com/c-1"),
        ("a/b", "c", "a%2Fb/c"),
        ("spiffe://org/ns/svc", "c", "spiffe%3A%2F%2Forg%2Fns%2Fsvc/c"),
        ("émile", "c", "%C3%A9mile/c"),
    ],
)
def test_an_authenticated_callers_conversation_is_scoped_by_its_encoded_id(
    caller: str, context: str, key: str
) -> None:
    assert _key(caller, context) == key


def test_two_callers_naming_one_context_have_two_conversations() -> None:
    assert _key("alice", "shared") != _key("bob", "shared")
    assert _key("alice", "shared") != _key(ANONYMOUS, "shared")


def test_an_anonymous_caller_cannot_name_an_authenticated_callers_conversation() -> None:
    """A context id is the client's to choose: an anonymous caller naming `alice/shared`
    must not reach Alice's conversation in context `shared`."""
    assert _key(ANONYMOUS, "alice/shared") != _key("alice", "shared")
    assert _key(ANONYMOUS, "a%2Fb/c") != _key("a/b", "c")
    assert _key(ANONYMOUS, "alice/shared") == ":alice/shared"


@given(st.text(max_size=8).filter(lambda caller: caller != ANONYMOUS), st.text(max_size=8))
def test_no_context_id_an_anonymous_caller_names_is_an_authenticated_key(
    caller: str, context: str
) -> None:
    key = _key(caller, context)
    assert _key(ANONYMOUS, key) != key


callers = st.sampled_from([ANONYMOUS, "alice", "a/b", "a%2Fb", "", "x:y"]) | st.text(max_size=6)
contexts = st.sampled_from(["c", "alice/c", "a%2Fb/c", "/c", ":c", ""]) | st.text(max_size=6)


@given(callers, contexts, callers, contexts)
def test_no_two_caller_context_pairs_share_a_key(
    caller: str, context: str, other_caller: str, other_context: str
) -> None:
    if (caller, context) != (other_caller, other_context):
        assert _key(caller, context) != _key(other_caller, other_context)


# ---------------------------------------------------------------------- text artifacts


async def _stream(pieces: list[tuple[object, str]]) -> tuple[FakeTask, TextArtifacts]:
    task = FakeTask()
    artifacts = TextArtifacts(cast(TaskContext, task), "answer")
    for key, text in pieces:
        await artifacts.add(key, text)
    await artifacts.close()
    return task, artifacts


@pytest.mark.anyio
async def test_pieces_of_one_key_are_chunks_of_one_artifact_the_last_marked() -> None:
    task, artifacts = await _stream([("m1", "Once "), ("m1", "upon "), ("m1", "a time")])
    assert [(s.text, s.artifact_id, s.append, s.last_chunk) for s in task.sent] == [
        ("Once ", "", False, False),
        ("upon ", "a1", True, False),
        ("a time", "a1", True, True),
    ]
    assert {s.name for s in task.sent} == {"answer"}
    assert artifacts.keys == {"m1"}


@pytest.mark.anyio
async def test_a_new_key_closes_the_previous_artifact() -> None:
    task, artifacts = await _stream([("m1", "one"), ("m2", "two"), ("m2", "three")])
    assert [(s.text, s.artifact_id, s.append, s.last_chunk) for s in task.sent] == [
        ("one", "", False, True),
        ("two", "", False, False),
        ("three", "a2", True, True),
    ]
    assert artifacts.keys == {"m1", "m2"}


@pytest.mark.anyio
async def test_empty_pieces_send_nothing_but_their_key_is_seen() -> None:
    task, artifacts = await _stream([("m1", ""), ("m1", "hi"), ("m1", ""), ("m2", "")])
    assert [(s.text, s.append, s.last_chunk) for s in task.sent] == [("hi", False, True)]
    assert artifacts.keys == {"m1", "m2"}


@pytest.mark.anyio
async def test_closing_twice_or_with_nothing_held_sends_nothing() -> None:
    task = FakeTask()
    artifacts = TextArtifacts(cast(TaskContext, task), "answer")
    await artifacts.close()
    await artifacts.add("m1", "x")
    await artifacts.close()
    await artifacts.close()
    assert [(s.text, s.last_chunk) for s in task.sent] == [("x", True)]


@pytest.mark.anyio
async def test_after_a_close_the_same_key_starts_a_new_artifact() -> None:
    task = FakeTask()
    artifacts = TextArtifacts(cast(TaskContext, task), "answer")
    await artifacts.add("m1", "a")
    await artifacts.close()
    await artifacts.add("m1", "b")
    await artifacts.close()
    assert [(s.text, s.artifact_id, s.append, s.last_chunk) for s in task.sent] == [
        ("a", "", False, True),
        ("b", "", False, True),
    ]


pieces = st.lists(st.tuples(st.sampled_from(["m1", "m2", "m3"]), st.text(max_size=3)), max_size=12)


@given(pieces)
def test_any_stream_of_pieces_rebuilds_each_artifacts_text(
    stream: list[tuple[object, str]],
) -> None:
    """Whatever the pieces: each run of one key is one artifact, its chunks joined are the
    run's text, the first chunk opens it, the others append, and only the last is final."""
    import asyncio  # noqa: PLC0415 - hypothesis runs this synchronously

    task, artifacts = asyncio.run(_stream(stream))
    expected: list[str] = []
    previous: object = None
    for key, text in stream:
        if key != previous:
            expected.append("")
            previous = key
        expected[-1] += text
    expected = [text for text in expected if text]
    built: list[str] = []
    for sent in task.sent:
        if not sent.append:
            assert sent.artifact_id == ""
            built.append("")
        else:
            assert sent.artifact_id != ""
        built[-1] += sent.text
    assert built == expected
    finals = [index for index, sent in enumerate(task.sent) if sent.last_chunk]
    opens = [index for index, sent in enumerate(task.sent) if not sent.append]
    assert finals == [index - 1 for index in opens[1:]] + (
        [len(task.sent) - 1] if task.sent else []
    )
    assert artifacts.keys == {key for key, _ in stream}
