"""The real `parley proxy` command (a subprocess) in front of the official a2a-sdk server's
JSON-RPC-only 1.0 agent: reached over gRPC and HTTP+JSON, in 1.0 and 0.3, through the
proxy's own authentication."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import cast

import pytest

from parley.asgi import A2AApp
from parley.client import GRPC_BINDING, HTTP_JSON_BINDING, APIKeyAuth, Client, user_message
from parley.model import Task, TaskState
from parley.protocol.errors import UnauthenticatedError
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from tests.cli.runner import ROOT
from tests.client.sdk_server import Gates
from tests.interop.live import serving
from tests.ports import free_port
from tests.proxy.test_proxy import jsonrpc_only_app
from tests.serving import wait_for_card

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def proxy() -> Iterator[str]:
    make_sdk = cast("Callable[[str], A2AApp]", lambda url: jsonrpc_only_app(url, Gates()))
    with serving(make_sdk) as upstream:
        port, grpc_port = free_port(), free_port()
        command = [sys.executable, "-m", "parley.cli", "proxy", "--to", upstream]
        command += ["--port", str(port), "--grpc-port", str(grpc_port), "--api-key", "k:alice"]
        process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
        address = f"http://127.0.0.1:{port}"
        try:
            wait_for_card(address, process)
            yield address
        finally:
            process.terminate()
            process.wait(20)


@pytest.mark.parametrize("binding", [GRPC_BINDING, HTTP_JSON_BINDING])
@pytest.mark.parametrize("version", RELEASED_VERSIONS, ids=lambda v: v.value)
async def test_the_command_serves_the_upstream_behind_its_own_keys(
    proxy: str, version: Version, binding: str
) -> None:
    async with Client.connect(
        proxy, auth=APIKeyAuth("k"), versions=[version], bindings=[binding]
    ) as client:
        result = await client.send(user_message("hi", metadata={"skill": "echo"}))
        assert isinstance(result, Task)
        assert result.status.state is TaskState.COMPLETED
        assert client.card.security_schemes
    async with Client.connect(proxy, versions=[version], bindings=[binding]) as anonymous:
        with pytest.raises(UnauthenticatedError):
            await anonymous.get_task(result.id)
