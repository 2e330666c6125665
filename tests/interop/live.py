"""A real uvicorn server in a thread on 127.0.0.1, for the interop and stream tests, with
a gRPC server in its event loop if asked, and `Live`: what a test needs of it (its URL,
its service, the agent's probe).

Like `tests.asgi.live.running`, but the free ports are reserved before the app is built,
so the agent card can name the server's real URLs (the SDK client connects to the URL of
the interface it selects from the card).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import uvicorn

from parley.asgi import A2AApp
from parley.server.agent import FunctionExecutor
from parley.server.service import AgentService
from tests.interop.agent import Probe


class Beside(Protocol):
    """A server run in uvicorn's event loop beside the app (a `GrpcServer`, or another's)."""

    async def start(self) -> object: ...

    async def stop(self, grace: float | None = None) -> None: ...


class _Server(uvicorn.Server):
    """uvicorn, running `grpc` (if any) in its event loop: started once the app has
    started, stopped before the app shuts down; `ready` is set when both serve."""

    def __init__(self, config: uvicorn.Config, grpc: Beside | None) -> None:
        super().__init__(config)
        self.grpc = grpc
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.grpc is not None and self.started:
            await self.grpc.start()
        self.ready.set()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.grpc is not None:
            await self.grpc.stop(0)
        await super().shutdown(sockets=sockets)


@contextmanager
def serving(
    make_app: Callable[[str], A2AApp], grpc: Callable[[], Beside] | None = None
) -> Iterator[str]:
    """Reserve a free port, build the app for its URL, serve it (h11, lifespan on), and
    the gRPC server `grpc` makes (called after `make_app`) beside it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        make_app(url),
        lifespan="on",
        log_config=None,
        log_level="warning",
        loop="asyncio",
        http="h11",
        ws="none",
        timeout_graceful_shutdown=2,
    )
    server = _Server(config, grpc() if grpc is not None else None)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.ready.is_set():
        if time.monotonic() > deadline or not thread.is_alive():
            sock.close()
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@dataclass(frozen=True)
class Live:
    """The running server: its base URL, its service and the agent's probe."""

    url: str
    service: AgentService
    probe: Probe

    @property
    def executor(self) -> FunctionExecutor:
        executor = self.service.runner.executor
        assert isinstance(executor, FunctionExecutor)
        return executor

    def leftovers(self) -> tuple[int, int, int]:
        """(live tasks, subscribers, suspended agent functions): all 0 when idle."""
        return (
            self.service.runner.live_count(),
            self.service.broker.subscriber_count(),
            self.executor.session_count(),
        )
