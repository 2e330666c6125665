"""Waiting for a `parley serve` subprocess a test started."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import httpx


def wait_for_card(
    url: str,
    process: subprocess.Popen[bytes],
    why: Callable[[], str] = lambda: "",
    timeout: float = 30.0,
) -> None:
    """Until the server's agent card answers at `url`; AssertionError if the process
    exits first (with `why()`, e.g. its log) or after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, f"the server exited: {why()}"
        try:
            httpx.get(url + "/.well-known/agent-card.json", timeout=1).raise_for_status()
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline, f"the server did not start: {why()}"
            time.sleep(0.05)
