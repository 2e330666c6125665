"""`parley serve --rate-limit` holds across processes (issue: deployable security II):
two servers of one agent counting in the same Redis (`--rate-limit-storage`, or the
`--bus` URL by default) share each caller's allowance — 4 a minute here, whichever
process and binding the requests reach; the fifth is refused by both, with 429 over
HTTP and RESOURCE_EXHAUSTED over gRPC."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
import redis

from tests.cli.test_serve_hosts import SEND, V1
from tests.cli.test_serve_hosts import _serve as serve_echo
from tests.ports import free_port

REDIS = "redis://127.0.0.1:6379/0"


@pytest.fixture
def namespace() -> Iterator[str]:
    """The agent's namespace, new to Redis; its counters deleted afterwards."""
    name = f"rate-{uuid.uuid4().hex[:12]}"
    yield name
    client = redis.Redis.from_url(REDIS)
    try:
        for key in client.scan_iter(match=f"*{name}*"):
            client.delete(key)
    finally:
        client.close()


def _serve(port: int, namespace: str, *options: str) -> subprocess.Popen[str]:
    limits = ("--rate-limit", "4/minute", "--rate-limit-storage", REDIS)
    return serve_echo(port, *limits, "--namespace", namespace, *options)


def test_two_processes_share_one_allowance(namespace: str) -> None:
    ports = [free_port(), free_port()]
    grpc_port = free_port()
    servers = [
        _serve(ports[0], namespace),
        _serve(ports[1], namespace, "--grpc-port", str(grpc_port)),
    ]
    try:
        remaining = []
        for n in range(4):
            answer = httpx.post(f"http://127.0.0.1:{ports[n % 2]}/", json=SEND, headers=V1)
            assert answer.status_code == 200, answer.text
            assert "result" in answer.json()
            remaining.append(answer.headers["X-RateLimit-Remaining"])
        assert remaining == ["3", "2", "1", "0"]
        for port in ports:
            refused = httpx.post(f"http://127.0.0.1:{port}/", json=SEND, headers=V1)
            assert refused.status_code == 429
            assert refused.json()["error"]["code"] == -31429
            assert int(refused.headers["Retry-After"]) >= 1
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            get_card: Any = channel.unary_unary("/lf.a2a.v1.A2AService/GetExtendedAgentCard")
            with pytest.raises(grpc.RpcError) as over:
                get_card(b"", metadata=(("a2a-version", "1.0"),))
            assert over.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.communicate(timeout=20)
