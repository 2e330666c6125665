"""The echo agent of `parley_echo` (echo, 100-chunk stream, wait) served over gRPC by Parley
(`parley.grpc.GrpcServer`, both versions' A2AService on one port).

    python -m benchmarks.servers.parley_grpc PORT
"""

from __future__ import annotations

import asyncio
import sys

from benchmarks.servers.parley_echo import agent
from parley.grpc import serve_grpc
from parley.server.service import AgentService


async def main(port: int) -> None:
    address = f"127.0.0.1:{port}"
    service = AgentService(
        agent.executor(), agent.card("http://127.0.0.1:1/", grpc_address=address)
    )
    await serve_grpc(service, port)


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover
        pass
    asyncio.run(main(int(sys.argv[1])))
