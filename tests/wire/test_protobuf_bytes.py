"""The directly written artifact-update bytes against the protobuf runtime's serialization,
shape by shape, and read back by the protobuf runtime as the same event."""

from __future__ import annotations

import pytest

from parley import model as m
from parley.wire.v1_0 import protobuf_bytes
from parley.wire.v1_0 import protobuf_codec as v10
from parley.wire.v1_0._pb import a2a_pb2 as pb10

CODEC = v10.CODEC
UUID = "0192f3a4-5b6c-7d8e-9f00-112233445566"


def _event(*parts: m.Part, **fields: object) -> m.TaskArtifactUpdateEvent:
    artifact = {k: fields.pop(k) for k in ("name", "description", "extensions") if k in fields}
    artifact_id = str(fields.pop("artifact_id", UUID))
    return m.TaskArtifactUpdateEvent(
        task_id=str(fields.pop("task_id", UUID)),
        context_id=str(fields.pop("context_id", UUID)),
        artifact=m.Artifact(artifact_id=artifact_id, parts=parts, **artifact),  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


COVERED = {
    "chunk": _event(m.TextPart(text="hello")),
    "append": _event(m.TextPart(text="hello"), append=True),
    "last-chunk": _event(m.TextPart(text="hello"), last_chunk=True),
    "append-last-chunk": _event(m.TextPart(text="x"), append=True, last_chunk=True),
    "empty-text": _event(m.TextPart(text="")),
    "unicode": _event(m.TextPart(text="héllo ✓ 𝄞 日本"), artifact_id="é", task_id="ü"),
    "empty-task-id": _event(m.TextPart(text="a"), task_id=""),
    "empty-context-id": _event(m.TextPart(text="a"), context_id=""),
    "empty-artifact-id": _event(m.TextPart(text="a"), artifact_id=""),
    "empty-ids": _event(m.TextPart(text="a"), task_id="", context_id="", artifact_id=""),
    "text-127": _event(m.TextPart(text="t" * 127), task_id="t", context_id="c", artifact_id="a"),
    "text-128": _event(m.TextPart(text="t" * 128), task_id="t", context_id="c", artifact_id="a"),
    "body-near-128": _event(m.TextPart(text="t" * 110), task_id="t", context_id="c"),
    "long-text": _event(m.TextPart(text="é" * 70000), append=True),
    "long-ids": _event(m.TextPart(text="x"), task_id="t" * 200, context_id="c" * 16500),
    "no-parts": _event(),
    "several-parts": _event(m.TextPart(text="a"), m.TextPart(text="b" * 300), m.TextPart(text="")),
    "text-with-media-type": _event(m.TextPart(text="# x", media_type="text/markdown")),
    "text-with-filename": _event(m.TextPart(text="x", filename="notes.txt")),
    "raw": _event(m.RawPart(raw=b"\x00\xff" * 100, media_type="image/png", filename="a.png")),
    "empty-raw": _event(m.RawPart(raw=b"")),
    "url": _event(m.UrlPart(url="https://example.com/f", media_type="application/pdf")),
    "mixed-parts": _event(m.TextPart(text="see"), m.UrlPart(url="https://e.x/a"), last_chunk=True),
    "name-description": _event(m.TextPart(text="x"), name="Report", description="The réport"),
    "name-only": _event(m.TextPart(text="x"), name="n"),
    "description-only": _event(m.TextPart(text="x"), description="d"),
    "extensions": _event(
        m.TextPart(text="x"), extensions=("https://e.x/ext/1", "https://e.x/ext/2"), append=True
    ),
    "everything": _event(
        m.TextPart(text="x", filename="f"),
        m.RawPart(raw=b"r"),
        name="n",
        description="d",
        extensions=("e",),
        append=True,
        last_chunk=True,
    ),
}

NOT_COVERED = {
    "event-metadata": _event(m.TextPart(text="x"), metadata={"k": 1}),
    "artifact-metadata": m.TaskArtifactUpdateEvent(
        task_id="t",
        context_id="c",
        artifact=m.Artifact(artifact_id="a", parts=(m.TextPart(text="x"),), metadata={"k": "v"}),
    ),
    "part-metadata": _event(m.TextPart(text="x", metadata={"k": [1, None]})),
    "data-part": _event(m.DataPart(data={"k": [1, None]})),
    "data-after-text": _event(m.TextPart(text="x"), m.DataPart(data=[1])),
    "raw-metadata": _event(m.TextPart(text="x"), m.RawPart(raw=b"x", metadata={"a": True})),
}


@pytest.mark.parametrize("event", COVERED.values(), ids=COVERED.keys())
def test_the_written_bytes_are_the_runtimes(event: m.TaskArtifactUpdateEvent) -> None:
    expected = CODEC.encode_event(event).SerializeToString()
    written = protobuf_bytes.artifact_update(event)
    assert written == expected
    assert CODEC.event_bytes(event) == expected
    parsed = pb10.StreamResponse.FromString(written)
    assert parsed == CODEC.encode_event(event)
    artifact = event.artifact
    if event.task_id and event.context_id and artifact.artifact_id and artifact.parts:  # required
        assert CODEC.decode_event(parsed) == event


@pytest.mark.parametrize("event", NOT_COVERED.values(), ids=NOT_COVERED.keys())
def test_metadata_and_data_parts_take_the_message_route(event: m.TaskArtifactUpdateEvent) -> None:
    assert protobuf_bytes.artifact_update(event) is None
    assert CODEC.event_bytes(event) == CODEC.encode_event(event).SerializeToString()


def test_chunks_of_streams_in_turn_carry_their_own_ids() -> None:
    """The ids' fields kept from the last chunk are another stream's when the ids differ."""
    first = _event(m.TextPart(text="a"), task_id="t1", context_id="c1", artifact_id="a1")
    second = _event(m.TextPart(text="b"), task_id="t2", context_id="c1", artifact_id="a1")
    third = _event(m.TextPart(text="c"), task_id="t1", context_id="c1", artifact_id="a2")
    empty = _event(m.TextPart(text="d"), task_id="", context_id="c1", artifact_id="a2")
    for event in (first, second, first, third, empty, third, empty, first):
        expected = CODEC.encode_event(event).SerializeToString()
        assert protobuf_bytes.artifact_update(event) == expected


def test_the_kept_ids_are_emptied_past_their_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protobuf_bytes, "_KEPT", 2)
    monkeypatch.setattr(protobuf_bytes, "_IDS", {})
    for n in range(5):
        event = _event(m.TextPart(text=str(n)), task_id=f"t{n}")
        assert (
            protobuf_bytes.artifact_update(event) == CODEC.encode_event(event).SerializeToString()
        )
        assert len(protobuf_bytes._IDS) <= 2
