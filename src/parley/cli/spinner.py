"""A spinner on stderr while a command waits for a blocking answer — only when stderr is a
terminal, so pipes, files and tests never see it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TextIO

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
INTERVAL = 0.1
"""Seconds between frames."""
CLEAR = "\r\x1b[K"
"""Back to the line's start, and erase it."""


@asynccontextmanager
async def spinning(label: str, stream: TextIO | None = None) -> AsyncIterator[None]:
    """Spin with `label` while the block runs; the line is erased when it ends."""
    out = stream or sys.stderr
    if not out.isatty():
        yield
        return
    spinner = asyncio.get_running_loop().create_task(_spin(label, out))
    try:
        yield
    finally:
        spinner.cancel()
        with suppress(asyncio.CancelledError):
            await spinner
        out.write(CLEAR)
        out.flush()


async def _spin(label: str, out: TextIO) -> None:
    frame = 0
    while True:
        out.write(f"{CLEAR}{FRAMES[frame % len(FRAMES)]} {label}")
        out.flush()
        frame += 1
        await asyncio.sleep(INTERVAL)
