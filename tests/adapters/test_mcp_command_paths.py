"""`parley mcp` in process: the warning for a non-loopback `--http` host, the missing
extras, and `--http` up to the uvicorn server it hands the MCP app to (its `Server`
replaced by a recorder, so nothing listens)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, cast

import pytest

import parley.adapters
from parley.asgi import A2AApp
from parley.cli.main import build_parser
from parley.cli.mcp import run_mcp
from tests.client.sdk_server import Gates
from tests.interop.live import serving
from tests.ports import free_port
from tests.proxy.test_proxy import jsonrpc_only_app


@pytest.fixture(scope="module")
def agent() -> Iterator[str]:
    make_sdk = cast("Callable[[str], A2AApp]", lambda url: jsonrpc_only_app(url, Gates()))
    with serving(make_sdk) as url:
        yield url


class Recorder:
    configs: ClassVar[list[Any]] = []

    def __init__(self, config: Any) -> None:
        self.configs.append(config)

    async def serve(self) -> None:
        return None


def test_http_hands_the_mcp_app_to_uvicorn_on_the_chosen_path(
    agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn  # noqa: PLC0415

    Recorder.configs.clear()
    monkeypatch.setattr(uvicorn, "Server", Recorder)
    port = free_port()
    arguments = build_parser().parse_args(
        ["mcp", agent, "--http", "--port", str(port), "--path", "/tools"]
    )
    assert run_mcp(arguments) == 0
    [config] = Recorder.configs
    assert (config.host, config.port) == ("127.0.0.1", port)
    paths = {getattr(route, "path", None) for route in config.app.routes}
    assert "/tools" in paths


def test_a_non_loopback_host_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"
    arguments = build_parser().parse_args(["mcp", nowhere, "--http", "--host", "0.0.0.0"])
    with caplog.at_level(logging.WARNING, logger="parley"):
        code = run_mcp(arguments)
    assert code != 0  # no agent there
    assert "serving on 0.0.0.0" in caplog.text


def test_without_the_server_extra_http_says_what_to_install(
    agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    arguments = build_parser().parse_args(["mcp", agent, "--http"])
    with pytest.raises(SystemExit, match="needs the server extra"):
        run_mcp(arguments)


def test_without_the_mcp_extra_the_command_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "parley.adapters.mcp_bridge", None)
    monkeypatch.delattr(parley.adapters, "mcp_bridge", raising=False)
    arguments = build_parser().parse_args(["mcp", "http://127.0.0.1:9"])
    with pytest.raises(SystemExit, match="parley mcp: "):
        run_mcp(arguments)
