"""`parley proxy`'s option handling in process: the handler its options build (public
URL, gRPC address, forwarded authentication, upstream timeout), an upstream whose card
cannot be read, and `run_proxy` up to the server it hands the app to (uvicorn's `run`
and the gRPC pairing replaced by recorders, so no server process starts)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest

from parley.asgi import A2AApp
from parley.cli import proxy as proxy_command
from parley.cli.main import build_parser
from parley.cli.proxy import proxy_handler, run_proxy
from tests.client.sdk_server import Gates
from tests.interop.live import serving
from tests.ports import free_port
from tests.proxy.test_proxy import jsonrpc_only_app


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    make_sdk = cast("Callable[[str], A2AApp]", lambda url: jsonrpc_only_app(url, Gates()))
    with serving(make_sdk) as url:
        yield url


def test_the_public_url_names_the_grpc_host_and_the_upstream_options_are_kept(
    upstream: str,
) -> None:
    options = ["--url", "https://agents.example/a2a", "--grpc-port", "9444"]
    options += ["--upstream-bearer", "t0ken", "--upstream-header", "X-Team=blue"]
    options += ["--forward-auth", "--upstream-timeout", "3"]
    arguments = build_parser().parse_args(["proxy", "--to", upstream, *options])
    handler = proxy_handler(arguments)
    urls = {each.url for each in handler.card.supported_interfaces}
    assert urls == {"https://agents.example/a2a", "agents.example:9444"}
    assert handler.upstream == upstream
    assert handler.forward_auth is True
    assert handler.timeout == 3


def test_an_upstream_without_a_card_stops_the_command() -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"
    arguments = build_parser().parse_args(["proxy", "--to", nowhere])
    with pytest.raises(SystemExit, match=f"cannot read the card at {nowhere}"):
        proxy_handler(arguments)


def test_run_proxy_serves_the_app_on_the_chosen_port(
    upstream: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn  # noqa: PLC0415

    served: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.append((app, options)))
    port = free_port()
    arguments = build_parser().parse_args(["proxy", "--to", upstream, "--port", str(port)])
    assert run_proxy(arguments) == 0
    [(app, options)] = served
    assert callable(app)
    assert (options["host"], options["port"]) == ("127.0.0.1", port)


class Recorded:
    def __init__(self) -> None:
        self.ran = False

    def run(self) -> None:
        self.ran = True


def test_run_proxy_with_grpc_reports_a_grpc_failure(
    upstream: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Recorded()
    paired: list[tuple[Any, Any]] = []

    def with_grpc(config: Any, grpc_server: Any) -> tuple[Recorded, list[BaseException]]:
        paired.append((config, grpc_server))
        return server, [OSError("port taken")]

    monkeypatch.setattr(proxy_command, "with_grpc", with_grpc)
    port, grpc_port = free_port(), free_port()
    arguments = build_parser().parse_args(
        ["proxy", "--to", upstream, "--port", str(port), "--grpc-port", str(grpc_port)]
    )
    assert run_proxy(arguments) == 1
    assert server.ran
    [(config, grpc_server)] = paired
    assert config.port == port
    assert grpc_server.port == grpc_port


def test_run_proxy_without_the_server_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    arguments = build_parser().parse_args(["proxy", "--to", "http://127.0.0.1:9"])
    with pytest.raises(SystemExit, match=r"needs the server extra"):
        run_proxy(arguments)
