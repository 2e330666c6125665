"""A spinner on stderr while a command waits for a blocking answer — only when stderr is a
terminal, so pipes, files and tests never see it. Past a second it shows the time spent,
and the task's id once known (`Progress`)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import TextIO

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
INTERVAL = 0.1
"""Seconds between frames."""
CLEAR = "\r\x1b[K"
"""Back to the line's start, and erase it."""


@dataclass(slots=True)
class Progress:
    """What the spinner's line says: `label`, the seconds since `started` (from the first
    whole second on), and `task_id` once the command knows it."""

    label: str
    task_id: str = ""
    started: float = field(default_factory=time.monotonic)

    def line(self, now: float | None = None) -> str:
        elapsed = int((time.monotonic() if now is None else now) - self.started)
        pieces = [self.label]
        if elapsed >= 1:
            pieces.append(f"{elapsed} s")
        if self.task_id:
            pieces.append(f"task {self.task_id}")
        return " · ".join(pieces)


@asynccontextmanager
async def spinning(label: str | Progress, stream: TextIO | None = None) -> AsyncIterator[Progress]:
    """Spin with `label` while the block runs; the line is erased when it ends. The block
    may tell the task's id to the `Progress` it gets."""
    progress = label if isinstance(label, Progress) else Progress(label)
    out = stream or sys.stderr
    if not out.isatty():
        yield progress
        return
    spinner = asyncio.get_running_loop().create_task(_spin(progress, out))
    try:
        yield progress
    finally:
        spinner.cancel()
        with suppress(asyncio.CancelledError):
            await spinner
        out.write(CLEAR)
        out.flush()


async def _spin(progress: Progress, out: TextIO) -> None:
    frame = 0
    while True:
        out.write(f"{CLEAR}{FRAMES[frame % len(FRAMES)]} {progress.line()}")
        out.flush()
        frame += 1
        await asyncio.sleep(INTERVAL)
