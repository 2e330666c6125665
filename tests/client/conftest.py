"""Shared fixtures of the client tests: the asyncio backend and the modes a client can be
pinned to (protocol version by binding): the four HTTP ones, and the six with gRPC."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from parley.client import GRPC_BINDING, HTTP_JSON_BINDING, JSONRPC_BINDING
from parley.protocol.negotiation import Version


@dataclass(frozen=True)
class Mode:
    """One (protocol version, binding) pair."""

    version: Version
    binding: str

    def __str__(self) -> str:
        return f"{self.version.value}-{self.binding}"


MODES = [
    Mode(v, b) for v in (Version.V1_0, Version.V0_3) for b in (JSONRPC_BINDING, HTTP_JSON_BINDING)
]
EVERY_MODE = [
    Mode(v, b)
    for v in (Version.V1_0, Version.V0_3)
    for b in (JSONRPC_BINDING, HTTP_JSON_BINDING, GRPC_BINDING)
]


@pytest.fixture(params=MODES, ids=str)
def mode(request: pytest.FixtureRequest) -> Mode:
    value: Mode = request.param
    return value
