"""Fixtures for the ASGI binding: the fake handler, an in-process client (httpx's ASGI
transport) and a real uvicorn server on 127.0.0.1 for streaming and disconnects."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack

import httpx
import pytest

from parley.asgi import A2AApp, build_app
from tests.asgi.fakes import FakeHandler
from tests.asgi.live import running


@pytest.fixture
def handler() -> FakeHandler:
    return FakeHandler()


@pytest.fixture
def app(handler: FakeHandler) -> A2AApp:
    return build_app(handler)


@pytest.fixture
async def client(app: A2AApp) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest.fixture
def serve() -> Iterator[Callable[[A2AApp], str]]:
    """Start a live server for an app; every server stops at the end of the test."""
    with ExitStack() as stack:
        yield lambda app: stack.enter_context(running(app))
