"""SSE framing: what the encoder writes, the incremental parser reads back, however the
bytes are chunked."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.protocol.errors import JSONParseError
from parley.wire import sse

payloads = st.text(
    alphabet=st.characters(
        blacklist_categories=["Cs"], blacklist_characters="\r\n\x85\u2028\u2029\x0b\x0c\x1c\x1d\x1e"
    ),
    max_size=40,
)
events = st.lists(
    st.tuples(
        payloads,
        st.none() | st.sampled_from(["error", "message"]),
        st.none() | st.text("0123456789", min_size=1, max_size=4),
    ),
    max_size=6,
)


@given(
    events, st.lists(st.integers(1, 7), min_size=1, max_size=50), st.sampled_from([b"\n", b"\r\n"])
)
def test_round_trip_under_any_chunking(
    items: list[tuple[str, str | None, str | None]], cuts: list[int], newline: bytes
) -> None:
    stream = b"".join(sse.encode(data, event=kind, event_id=ident) for data, kind, ident in items)
    stream = stream.replace(b"\n", newline) + sse.comment()
    parser = sse.SSEParser()
    got: list[sse.SSEEvent] = []
    position, index = 0, 0
    while position < len(stream):
        size = cuts[index % len(cuts)]
        got.extend(parser.feed(stream[position : position + size]))
        position += size
        index += 1
    expected_ids: list[str] = []
    last = ""
    for _, _, ident in items:
        last = ident if ident is not None else last
        expected_ids.append(last)
    assert [g.data for g in got] == [data for data, _, _ in items]
    assert [g.event for g in got] == [kind or "message" for _, kind, _ in items]
    assert [g.id for g in got] == expected_ids


def test_multiline_data_bom_comments_and_cr() -> None:
    parser = sse.SSEParser()
    stream = b"\xef\xbb\xbf: hello\rdata: a\rdata:b\r\rid: 7\nretry: 50\nevent: e\ndata\n\n"
    got = []
    for byte in stream:
        got.extend(parser.feed(bytes([byte])))
    assert [(g.data, g.event, g.id, g.retry) for g in got] == [
        ("a\nb", "message", "", None),
        ("", "e", "7", 50),
    ]
    assert parser.last_event_id == "7"


def test_encoder_splits_lines_and_sanitizes_fields() -> None:
    assert sse.encode('{"a":1}') == b'data: {"a":1}\n\n'
    assert (
        sse.encode("x\ny", event="ev\nil", event_id="1")
        == b"id: 1\nevent: ev il\ndata: x\ndata: y\n\n"
    )
    assert sse.comment() == b": keep-alive\n\n"


def test_utf8_split_inside_a_character() -> None:
    parser = sse.SSEParser()
    frame = sse.encode("héllo €")
    got = [event for i in range(len(frame)) for event in parser.feed(frame[i : i + 1])]
    assert [g.data for g in got] == ["héllo €"]


def test_oversized_event_is_refused() -> None:
    parser = sse.SSEParser(max_event_bytes=64)
    with pytest.raises(JSONParseError):
        parser.feed(b"data: " + b"x" * 100)
    parser = sse.SSEParser(max_event_bytes=64)
    for _ in range(5):
        parser.feed(b"data: " + b"y" * 10 + b"\n")
    with pytest.raises(JSONParseError):
        parser.feed(b"data: " + b"y" * 10 + b"\n")
