"""The echo agent of `sdk_echo` (echo, 100-chunk stream, wait) served over gRPC by the
official a2a-sdk: its `GrpcHandler` over `DefaultRequestHandler` and the in-memory task
store, on a `grpc.aio` server, as its documentation shows. Only the public SDK API is used.

    python -m benchmarks.servers.sdk_grpc PORT
"""

from __future__ import annotations

import asyncio
import sys

import grpc
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import a2a_pb2_grpc

from benchmarks.servers.sdk_echo import EchoExecutor, card


async def main(port: int) -> None:
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover
        pass
    asyncio.run(main(int(sys.argv[1])))
