"""`parley send|get -o DIR` (`parley.cli.files`): the files an agent sends are saved under
their own names — never outside DIR, never over an existing file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.cli.files import safe_name
from tests.cli.agents import cli_app
from tests.cli.runner import Run, ok, parley
from tests.interop.live import serving

TEXT = b"Paris, 2100000 people\nLyon, 520000 people\n"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(cli_app) as served:
        yield served


def test_a_file_the_agent_sends_back_is_saved_under_its_name(url: str, tmp_path: Path) -> None:
    source = tmp_path / "notes.txt"
    source.write_bytes(TEXT)
    out = tmp_path / "out"
    first = ok_saving(parley("send", url, "--file", str(source), "-o", str(out)))
    assert "[file notes.txt (text/plain), 42 bytes]" in first.lines
    assert first.err == f"saved {out / 'notes.txt'} (42 bytes)\n"
    assert (out / "notes.txt").read_bytes() == TEXT
    task_id = first.lines[0].split()[1]

    streamed = ok_saving(parley("send", url, "--file", str(source), "--stream", "-o", str(out)))
    assert streamed.err == f"saved {out / 'notes-1.txt'} (42 bytes)\n"
    fetched = ok_saving(parley("get", url, task_id, "--output", str(out)))
    assert fetched.err == f"saved {out / 'notes-2.txt'} (42 bytes)\n"
    assert sorted(p.name for p in out.iterdir()) == ["notes-1.txt", "notes-2.txt", "notes.txt"]
    assert all(p.read_bytes() == TEXT for p in out.iterdir())


def test_without_files_nothing_is_saved(url: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    ok(parley("send", url, "hello", "-o", str(out)))
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("report.csv", "report.csv"),
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\me\\notes.txt", "notes.txt"),
        ("..", ""),
        (".bashrc", ""),
        ("", ""),
        ("reports/", "reports"),
    ],
)
def test_only_the_last_component_of_a_name_is_used(given: str, used: str) -> None:
    assert safe_name(given) == used


def ok_saving(run: Run) -> Run:
    """A run that succeeded, whatever it said on stderr (what it saved)."""
    assert run.code == 0, run
    return run
