"""`parley` against an agent on the official a2a-sdk server: the command talks to any A2A
agent, in both versions, and its `--json` has the same 1.0 shape whoever answered."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import cast

import pytest

from parley.asgi import A2AApp
from tests.cli.runner import ok, run_all
from tests.client.sdk_server import Gates, sdk_app
from tests.interop.agent import STREAM_CHUNKS
from tests.interop.live import serving


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    make = cast("Callable[[str], A2AApp]", lambda served: sdk_app(served, Gates()))
    with serving(make) as served:
        yield served


def test_card_send_and_stream(url: str) -> None:
    card, sent, streamed, streamed_json = run_all(
        ["card", url],
        ["send", url, "hi", "--skill", "echo", "--version", "0.3", "--json"],
        ["send", url, "go", "--skill", "chunks", "--stream"],
        ["send", url, "go", "--skill", "chunks", "--stream", "--json", "--binding", "rest"],
    )
    assert "interfaces:" in ok(card).lines
    task = ok(sent).json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert ok(streamed).lines[-2:] == ["".join(STREAM_CHUNKS), "● completed"]
    events = ok(streamed_json).json_lines()
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
