"""The talking commands' `--json` output (`parley.cli.output.Output`, docs/cli.md: "print A2A
1.0 JSON: one document, or one line per stream event") as round trips: whatever the task,
message, card or stream event, what is printed reads back as the same model through the
1.0 JSON codec, one document per result and exactly one line per event; a reconnection
prints its task snapshot as a `task` line, or nothing without one. The readable form's
line handling is in test_output.py."""

from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from parley.cli.output import Output
from parley.client import Reconnected
from parley.model import AgentCard, Message, Role, StreamEvent, Task, TextPart
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.codec_table import JSONRPC
from tests.strategies import Flavor, cards, messages, stream_events, tasks

V1 = Flavor.V1_0
CODEC = JSONRPC[Version.V1_0]
"""The 1.0 JSON codec every JSON binding, and `--json`, speak."""


def printed(call: str, *values: object) -> str:
    out = io.StringIO()
    output = Output(as_json=True, out=out)
    for value in values:
        arguments = value if isinstance(value, tuple) else (value,)
        getattr(output, call)(*arguments)
    return out.getvalue()


@settings(max_examples=40, deadline=None)
@given(st.one_of(tasks(V1), messages(V1)))
def test_a_send_result_is_one_document_of_its_1_0_form(result: Task | Message) -> None:
    text = printed("result", (Operation.SEND_MESSAGE, result))
    assert text.endswith("}\n")
    document = json.loads(text)
    assert CODEC.decode_response(Operation.SEND_MESSAGE, document) == result


@settings(max_examples=40, deadline=None)
@given(tasks(V1))
def test_a_task_result_reads_back(task: Task) -> None:
    document = json.loads(printed("result", (Operation.GET_TASK, task)))
    assert CODEC.decode_response(Operation.GET_TASK, document) == task


@settings(max_examples=25, deadline=None)
@given(cards(V1))
def test_a_card_reads_back(card: AgentCard) -> None:
    assert CODEC.decode_card(json.loads(printed("card", card))) == card


@settings(max_examples=40, deadline=None)
@given(st.lists(stream_events(V1), min_size=1, max_size=4))
def test_each_stream_event_is_one_line_that_reads_back(events: list[StreamEvent]) -> None:
    text = printed("event", *events)
    assert text.endswith("\n")
    lines = text.split("\n")[:-1]  # JSON Lines: "\n" ends each (U+2028 may be in a string)
    assert len(lines) == len(events)
    assert [CODEC.decode_event(json.loads(line)) for line in lines] == events


@settings(max_examples=25, deadline=None)
@given(tasks(V1))
def test_a_reconnection_prints_its_snapshot_as_a_task_line(task: Task) -> None:
    [line, end] = printed("event", Reconnected(task, "dropped")).split("\n")
    assert end == ""
    assert "task" in json.loads(line)
    assert CODEC.decode_event(json.loads(line)) == task


def test_a_reconnection_without_a_snapshot_prints_nothing() -> None:
    assert printed("event", Reconnected(None, "dropped")) == ""


def test_non_ascii_text_is_printed_as_it_is() -> None:
    said = Message(message_id="m", role=Role.AGENT, parts=(TextPart(text="héllo ✓"),))
    assert "héllo ✓" in printed("result", (Operation.SEND_MESSAGE, said))
    assert "héllo ✓" in printed("event", said)
