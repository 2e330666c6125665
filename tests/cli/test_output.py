"""`parley.cli.output`: what people and scripts see, for the shapes a live agent seldom
sends (file URLs, unnamed files, reconnections, bare cards), in-process."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

from msgspec.structs import replace

from parley.cli.output import Output, card_lines, list_lines, part_text, parts_text
from parley.client import Reconnected
from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    Artifact,
    DataPart,
    ListTasksResponse,
    Message,
    RawPart,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UrlPart,
)

WORKING = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.WORKING))


def _printed(as_json: bool, *items: object) -> str:
    out = io.StringIO()
    output = Output(as_json=as_json, out=out)
    for item in items:
        output.event(item)  # type: ignore[arg-type]
    output.end_line()
    return out.getvalue()


def _chunk(text: str, *, append: bool, last: bool = False, artifact: str = "a1") -> object:
    return TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(artifact_id=artifact, parts=(TextPart(text=text),)),
        append=append,
        last_chunk=last,
    )


def test_parts_as_text() -> None:
    assert part_text(UrlPart(url="https://x/y.pdf", filename="y.pdf")) == (
        "[file y.pdf (unknown type) at https://x/y.pdf]"
    )
    assert part_text(RawPart(raw=b"abc")) == "[file (unnamed) (unknown type), 3 bytes]"
    assert part_text(DataPart(data=["é", 1])) == '["é",1]'
    chunked = (TextPart(text="1 "), TextPart(text="2"), DataPart(data={}), TextPart(text="3"))
    assert parts_text(chunked) == "1 2\n{}\n3"
    assert parts_text(chunked, " ") == "1 2 {} 3"


def test_chunks_share_a_line_until_something_else_arrives() -> None:
    file = TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(
            artifact_id="a2", parts=(TextPart(text="x"), RawPart(raw=b"1", filename="f"))
        ),
        append=True,
    )
    printed = _printed(
        False,
        _chunk("one ", append=False),
        _chunk("two\n", append=True),  # a chunk ending its own line adds no blank line
        _chunk("three", append=True),
        _chunk("other", append=False, artifact="a2"),  # another artifact: a new line
        file,  # text continues the line; a file gets its own
        _chunk("last", append=False, last=True),
        _chunk("", append=False, artifact="a3"),
    )
    assert printed == "one two\nthree\notherx\n[file f (unknown type), 1 bytes]\nlast\n"


def test_reconnections_and_direct_messages() -> None:
    reply = Message(message_id="m", role=Role.AGENT, parts=(TextPart(text="hi"),))
    finished = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.COMPLETED))
    readable = _printed(
        False, WORKING, Reconnected(None, "dropped"), Reconnected(finished, "gone"), reply
    )
    assert readable.splitlines() == [
        "task t1  context c1",
        "● working",
        "↻ reconnected: dropped",
        "↻ reconnected: gone",
        "● completed",
        "hi",
    ]
    lines = _printed(True, Reconnected(None, "dropped"), Reconnected(finished, "gone"), reply)
    assert [next(iter(json.loads(line))) for line in lines.splitlines()] == ["task", "message"]


def test_a_status_message_without_parts_is_just_the_state() -> None:
    empty = Message(message_id="m", role=Role.AGENT, parts=())
    update = TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=TaskStatus(state=TaskState.FAILED, message=empty)
    )
    assert _printed(False, update) == "● failed\n"


def test_a_bare_card_and_a_secured_one() -> None:
    bare = AgentCard(
        name="Bare",
        description="Nothing more.",
        version="2",
        supported_interfaces=(
            AgentInterface(url="http://x", protocol_binding="GRPC", protocol_version="9.9"),
        ),
        capabilities=AgentCapabilities(),
        default_input_modes=("text/plain",),
        default_output_modes=("application/json",),
        skills=(),
    )
    assert card_lines(bare) == [
        "Bare 2",
        "Nothing more.",
        "interfaces:",
        "  GRPC       9.9  http://x",
        "capabilities: none",
        "input: text/plain   output: application/json",
        "skills: none",
    ]
    secured = replace(
        bare,
        skills=(AgentSkill(id="plain", name="plain", description="As named.", tags=()),),
        security_schemes={"key": APIKeySecurityScheme(name="X-Key", location="header")},
        supported_interfaces=(
            AgentInterface(
                url="http://x", protocol_binding="JSONRPC", protocol_version="9.9", tenant="t"
            ),
        ),
    )
    lines = card_lines(secured)
    assert "security: key" in lines
    assert lines[-2:] == ["skills:", "  plain: As named."]
    assert "  JSONRPC    9.9  http://x  (tenant t)" in lines


def test_a_page_of_tasks() -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    dated = Task(
        id="t2", context_id="c2", status=TaskStatus(state=TaskState.REJECTED, timestamp=when)
    )
    page = ListTasksResponse(tasks=(WORKING, dated), next_page_token="", page_size=2, total_size=2)
    assert list_lines(page) == [
        "t1  working         c1  ",
        "t2  rejected        c2  2026-01-02T03:04:05+00:00",
        "2 of 2 tasks",
    ]
