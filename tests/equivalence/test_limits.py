"""Configured input limits hold on every binding and in both versions (issue: deployable
security II, "every limit real"): a server built with `Limits(max_parts=2,
max_value_depth=3)` (`build_app(limits=)`, `GrpcServer(limits=)`) refuses a message of
three parts, and metadata nested four levels deep, with InvalidParamsError naming the
field — over JSON-RPC, HTTP+JSON and gRPC, in 1.0 and 0.3 — and takes what is within
them."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from parley.client import Client, user_message
from parley.model import Task, TextPart
from parley.protocol.errors import InvalidParamsError
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.wire.limits import Limits
from tests.client.agents import EXTENSION
from tests.equivalence.conftest import all_bindings
from tests.equivalence.test_bindings import BINDINGS
from tests.interop.agent import Probe

pytestmark = pytest.mark.anyio

LIMITS = Limits(max_parts=2, max_value_depth=3)
CASES = [(version, binding) for version in RELEASED_VERSIONS for binding in BINDINGS]


@pytest.fixture(scope="module")
async def url() -> AsyncIterator[str]:
    async with all_bindings(Probe(), LIMITS) as (address, _):
        yield address


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"inner": value}
    return value


@pytest.mark.parametrize(("version", "binding"), CASES, ids=[f"{v.value}-{b}" for v, b in CASES])
async def test_parts_and_depth_limits_hold(url: str, version: Version, binding: str) -> None:
    connecting = Client.connect(url, versions=[version], bindings=[binding], extensions=[EXTENSION])
    async with connecting as client:
        assert client.interface is not None
        assert client.interface.protocol_binding == binding
        skill = {"skill": "echo"}
        within = user_message(
            [TextPart(text="a"), TextPart(text="b")], metadata={**skill, "deep": nested(2)}
        )
        assert isinstance(await client.send(within), Task)
        three = user_message([TextPart(text=t) for t in "abc"], metadata=skill)
        with pytest.raises(InvalidParamsError) as parts:
            await client.send(three)
        # 0.3's protobuf-shaped bindings name the parts `content`, as their wire form does
        assert parts.value.message.endswith(": more than 2 parts")
        deep = user_message(uuid.uuid4().hex, metadata={**skill, "deep": nested(3)})
        with pytest.raises(InvalidParamsError) as depth:
            await client.send(deep)
        assert depth.value.message == "message.metadata: nested deeper than 3 levels"
