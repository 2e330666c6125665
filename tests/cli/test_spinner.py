"""The spinner (`parley.cli.spinner`): drawn only on a terminal, its line telling the label,
the whole seconds spent from the first one on, and the task once known; erased when the
wait ends, however it ends. A fake terminal stands for stderr; no real waiting."""

from __future__ import annotations

import asyncio
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.cli.spinner import CLEAR, FRAMES, Progress, spinning


class Terminal(io.StringIO):
    """A stream that says it is a terminal and tells when something is drawn."""

    def __init__(self) -> None:
        super().__init__()
        self.drawn = asyncio.Event()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.drawn.set()
        return super().write(text)


@pytest.mark.parametrize(
    ("elapsed", "task_id", "line"),
    [
        (0.0, "", "connecting"),
        (0.99, "", "connecting"),
        (1.0, "", "connecting · 1 s"),
        (61.7, "", "connecting · 61 s"),
        (0.5, "t-1", "connecting · task t-1"),
        (3.2, "t-1", "connecting · 3 s · task t-1"),
    ],
)
def test_the_line_tells_the_time_from_the_first_second_and_the_task(
    elapsed: float, task_id: str, line: str
) -> None:
    progress = Progress("connecting", task_id=task_id, started=100.0)
    assert progress.line(now=100.0 + elapsed) == line


@given(st.floats(min_value=0, max_value=1e6), st.floats(min_value=0, max_value=1e6))
def test_the_seconds_shown_never_go_back(first: float, second: float) -> None:
    progress = Progress("waiting", started=0.0)
    earlier, later = sorted((first, second))

    def shown(now: float) -> int:
        pieces = progress.line(now=now).split(" · ")
        return int(pieces[1].removesuffix(" s")) if len(pieces) > 1 else 0

    assert shown(earlier) <= shown(later)
    assert shown(later) == int(later)


def test_the_line_defaults_to_the_time_now() -> None:
    assert Progress("waiting").line() == "waiting"


async def _wait_in(stream: io.StringIO, label: str | Progress) -> Progress:
    async with spinning(label, stream) as progress:
        if isinstance(stream, Terminal):
            await stream.drawn.wait()
        progress.task_id = "t-9"
    return progress


def test_nothing_is_drawn_when_the_stream_is_not_a_terminal() -> None:
    stream = io.StringIO()
    progress = asyncio.run(_wait_in(stream, "sending"))
    assert stream.getvalue() == ""
    assert (progress.label, progress.task_id) == ("sending", "t-9")


def test_on_a_terminal_a_frame_is_drawn_and_the_line_erased_at_the_end() -> None:
    terminal = Terminal()
    asyncio.run(_wait_in(terminal, "sending"))
    text = terminal.getvalue()
    assert text.startswith(f"{CLEAR}{FRAMES[0]} sending")
    assert text.endswith(CLEAR)


def test_a_given_progress_is_the_one_the_block_gets() -> None:
    mine = Progress("waiting for t-1", task_id="t-1")
    assert asyncio.run(_wait_in(io.StringIO(), mine)) is mine


def test_the_line_is_erased_when_the_block_fails() -> None:
    terminal = Terminal()

    async def failing() -> None:
        async with spinning("sending", terminal):
            await terminal.drawn.wait()
            raise LookupError("the command failed")

    with pytest.raises(LookupError):
        asyncio.run(failing())
    assert terminal.getvalue().endswith(CLEAR)


def test_the_spinner_stops_with_its_block() -> None:
    terminal = Terminal()

    async def scenario() -> set[asyncio.Task[object]]:
        async with spinning("sending", terminal):
            await terminal.drawn.wait()
        return {task for task in asyncio.all_tasks() if task is not asyncio.current_task()}

    assert asyncio.run(scenario()) == set()


def test_the_frames_are_distinct_single_characters() -> None:
    assert len(set(FRAMES)) == len(FRAMES) > 1
    assert all(len(frame) == 1 for frame in FRAMES)
