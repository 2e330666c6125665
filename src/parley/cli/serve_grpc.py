"""`parley serve --grpc-port`: a uvicorn server that also runs a gRPC server, in one
event loop."""

from __future__ import annotations

import logging
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import uvicorn

    from parley.grpc import GrpcServer

log = logging.getLogger("parley")


def with_grpc(
    config: uvicorn.Config, grpc_server: GrpcServer
) -> tuple[uvicorn.Server, list[BaseException]]:
    """A uvicorn server that also runs `grpc_server`: gRPC starts once the app has started
    (its lifespan hooks ran) and stops before the app shuts down. A gRPC server that
    cannot start stops the whole server; its error lands in the returned list."""
    import uvicorn  # noqa: PLC0415 - an optional extra

    failures: list[BaseException] = []

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if not self.started:
                return
            try:
                await grpc_server.start()
            except (OSError, RuntimeError) as exc:
                log.error("cannot serve gRPC on port %s: %s", grpc_server.port, exc)
                failures.append(exc)
                self.should_exit = True
                return
            log.info("serving gRPC at %s", grpc_server.address)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            await grpc_server.stop()
            await super().shutdown(sockets=sockets)

    return Server(config), failures
