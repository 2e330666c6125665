"""`--output DIR`'s file names and writes as properties (`parley.cli.files`): whatever name an
agent gives a file, what is used is one plain component — no separator of either system,
no `.`/`..` or hidden name, no NUL — so a file never lands outside the folder or replaces
one; any number of files of one name are all kept, each with its own bytes."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parley.cli.files import Saver, parts_of, safe_name
from parley.model import (
    Artifact,
    Message,
    RawPart,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TextPart,
    UrlPart,
)

pieces = st.sampled_from(["..", ".", "", "a", "b.txt", ".hidden", "C:", "x\x00y", " ", "évé"])
names = st.lists(pieces, max_size=5).flatmap(
    lambda parts: st.sampled_from(["/", "\\"]).map(lambda sep: sep.join(parts))
) | st.text(max_size=20)


@given(names)
def test_a_used_name_is_one_plain_component(name: str) -> None:
    used = safe_name(name)
    if not used:
        return
    assert "/" not in used
    assert "\\" not in used
    assert "\x00" not in used
    assert not used.startswith(".")
    assert used == used.strip()
    assert used in name


@pytest.mark.parametrize(
    "name", ["", "..", ".", "../..", "/", "\\", ".env", "dir/.ssh", "a\x00b", "   ", "C:\\"]
)
def test_names_with_nothing_usable_give_nothing(name: str) -> None:
    assert safe_name(name) == ""


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["r.csv", "../r.csv", "C:\\tmp\\r.csv", "", ".x"]), max_size=6))
def test_every_file_is_kept_inside_the_folder_with_its_own_bytes(given_names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where) / "out"
        folder.mkdir()
        saver = Saver(folder)
        parts = [
            RawPart(raw=f"file {n}".encode(), filename=name, media_type="text/csv")
            for n, name in enumerate(given_names)
        ]
        message = Message(message_id="m", role=Role.AGENT, parts=tuple(parts))
        saved = saver.save(message)
        assert len(saved) == len(parts)
        assert len(set(saved)) == len(saved)
        for n, path in enumerate(saved):
            assert path.parent == folder
            assert path.read_bytes() == f"file {n}".encode()
        assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in saved)
        assert list(Path(where).iterdir()) == [folder]


def test_a_nameless_file_is_named_by_its_media_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saver = Saver(tmp_path)
    parts = (
        RawPart(raw=b"{}", media_type="application/json; charset=utf-8"),
        RawPart(raw=b"?", media_type=""),
        RawPart(raw=b"png", media_type="image/png", filename="../"),
    )
    saved = saver.save(Message(message_id="m", role=Role.AGENT, parts=parts))
    assert [path.name for path in saved] == ["file-1.json", "file-2", "file-3.png"]
    assert capsys.readouterr().err.splitlines() == [
        f"saved {tmp_path / 'file-1.json'} (2 bytes)",
        f"saved {tmp_path / 'file-2'} (1 bytes)",
        f"saved {tmp_path / 'file-3.png'} (3 bytes)",
    ]


def test_files_come_from_a_tasks_artifacts_a_message_or_an_artifact_update() -> None:
    raw = RawPart(raw=b"x", filename="x.bin")
    url = UrlPart(url="https://files.example/y.pdf")
    text = TextPart(text="hello")
    artifact = Artifact(artifact_id="a", parts=(raw, text))
    done = Task(
        id="t", context_id="c", status=TaskStatus(state=TaskState.COMPLETED), artifacts=(artifact,)
    )
    update = TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=artifact)
    message = Message(message_id="m", role=Role.AGENT, parts=(url, raw))
    assert list(parts_of(done)) == [raw, text]
    assert list(parts_of(update)) == [raw, text]
    assert list(parts_of(message)) == [url, raw]
    status_only = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    assert list(parts_of(status_only)) == []


def test_files_given_by_url_are_not_fetched(tmp_path: Path) -> None:
    message = Message(
        message_id="m", role=Role.AGENT, parts=(UrlPart(url="https://files.example/y.pdf"),)
    )
    assert Saver(tmp_path).save(message) == []
    assert list(tmp_path.iterdir()) == []
