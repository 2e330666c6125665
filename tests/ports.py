"""Ports for servers a test starts and that must be named before they bind (a subprocess's
`--port`, a card written first).

Asking the kernel for a free port (binding port 0, then closing) races: the port goes back
to the ephemeral pool, and another worker's server or client can take it before ours binds
it. So each pytest-xdist worker hands out ports from its own block below the kernel's
ephemeral range (32768 and up on Linux), one port at most once per process, skipping any
that something else holds: no worker, and no outgoing connection, can be given the same
port.
"""

from __future__ import annotations

import itertools
import os
import socket

BASE, BLOCK, BLOCKS = 20_000, 1_000, 12


def _block() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ...; "" unsplit
    number = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else -1
    return BASE + BLOCK * ((number + 1) % BLOCKS)


_next = itertools.count(os.getpid() % BLOCK)


def free_port(host: str = "127.0.0.1") -> int:
    """A port on `host` that nothing holds now and that no other test is given."""
    block = _block()
    for _ in range(BLOCK):
        port = block + next(_next) % BLOCK
        with socket.socket() as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port left in {block}..{block + BLOCK - 1}")
