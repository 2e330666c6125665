"""The options every command that talks to an agent shares (`--json`, `--version`,
`--binding`, credentials, `--header`, `--timeout`), their argument types, and the
connection they describe. Credentials come from flags or the environment, never echoed."""

from __future__ import annotations

import argparse
import json
import mimetypes
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from parley.cli.spinner import spinning
from parley.client import (
    GRPC_BINDING,
    HTTP_JSON_BINDING,
    JSONRPC_BINDING,
    APIKeyAuth,
    Auth,
    BearerAuth,
    Client,
    StreamPolicy,
)
from parley.model import JSONValue, RawPart
from parley.protocol.negotiation import Version

API_KEY_ENV = "PARLEY_API_KEY"
TOKEN_ENV = "PARLEY_TOKEN"  # noqa: S105 - the variable's name, not a token
BINDINGS = {"jsonrpc": JSONRPC_BINDING, "rest": HTTP_JSON_BINDING, "grpc": GRPC_BINDING}
"""The `--binding` choices (gRPC needs the grpc extra)."""
VERSIONS = sorted((version.value for version in Version), reverse=True)
"""The `--version` choices, newest first."""


# ---------------------------------------------------------------------- argument types


def agent_url(text: str) -> str:
    """An http(s) URL with a host: the agent's base URL, or its card's (`….json`);
    `localhost:8000` (no scheme) is taken as `http://localhost:8000`."""
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not an http:// or https:// URL")
    return text


def header(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value


def json_value(text: str) -> JSONValue:
    try:
        value: JSONValue = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"invalid JSON: {exc}") from None
    return value


def file_part(path: str) -> RawPart:
    """The file's bytes, its name, and a media type guessed from the name."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {path}: {exc.strerror}") from None
    media_type = mimetypes.guess_type(path)[0] or "application/octet-stream"
    return RawPart(raw=raw, media_type=media_type, filename=Path(path).name)


def count(text: str) -> int:
    """A whole number, 0 or more."""
    if not text.isdecimal():
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(text)


def positive_count(text: str) -> int:
    number = count(text)
    if number == 0:
        raise argparse.ArgumentTypeError("expected a number above 0")
    return number


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds above 0, got {text!r}")
    return value


# ---------------------------------------------------------------------- the shared options


def common_options() -> argparse.ArgumentParser:
    """A parent parser: URL first, then the options every talking command takes."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("url", metavar="URL", type=agent_url, help="the agent's base URL")
    common.add_argument(
        "--json",
        action="store_true",
        help=f"print A2A {Version.V1_0.value} JSON: one document, or one line per stream event",
    )
    common.add_argument(
        "--version",
        "--a2a-version",
        dest="protocol_version",
        choices=VERSIONS,
        help="speak only this protocol version (default: the newest the card offers)",
    )
    common.add_argument(
        "--binding",
        "--transport",
        choices=sorted(BINDINGS),
        help="use only this binding (default: the card's order)",
    )
    common.add_argument(
        "--api-key", metavar="KEY", help=f"send an X-API-Key header (default: ${API_KEY_ENV})"
    )
    common.add_argument(
        "--bearer", metavar="TOKEN", help=f"send a bearer token (default: ${TOKEN_ENV})"
    )
    common.add_argument(
        "--header",
        metavar="NAME=VALUE",
        type=header,
        action="append",
        default=[],
        help="add an HTTP header to every request (repeatable)",
    )
    common.add_argument(
        "--timeout",
        metavar="S",
        type=seconds,
        help="seconds to wait for an answer, or for a stream's next event "
        "(default: 300 for an answer, none for streams)",
    )
    return common


def credentials(arguments: argparse.Namespace) -> Auth | None:
    """The flags' credentials, else the environment's; None without any."""
    key = arguments.api_key or os.environ.get(API_KEY_ENV)
    token = arguments.bearer or os.environ.get(TOKEN_ENV)
    found: list[Auth] = []
    if key:
        found.append(APIKeyAuth(key))
    if token:
        found.append(BearerAuth(token))
    if not found:
        return None
    return found[0] if len(found) == 1 else Credentials(found)


class Credentials:
    """Several credentials at once (an API key and a bearer token): all their headers."""

    def __init__(self, parts: list[Auth]) -> None:
        self.parts = parts

    async def headers(self) -> Mapping[str, str]:
        merged: dict[str, str] = {}
        for part in self.parts:
            merged.update(await part.headers())
        return merged


def connect_options(arguments: argparse.Namespace) -> dict[str, Any]:
    """`Client.connect`'s keyword arguments for the options given."""
    options: dict[str, Any] = {"auth": credentials(arguments)}
    if arguments.protocol_version:
        options["versions"] = [Version(arguments.protocol_version)]
    if arguments.binding:
        options["bindings"] = [BINDINGS[arguments.binding]]
    if arguments.timeout is not None:
        options["timeout"] = arguments.timeout
        options["connect_timeout"] = arguments.timeout
        options["streaming"] = StreamPolicy(idle_timeout=arguments.timeout)
    return options


@asynccontextmanager
async def http_client(arguments: argparse.Namespace) -> AsyncIterator[httpx.AsyncClient]:
    """The one httpx client of a command: `--header`s go on every request, the card's
    fetch included."""
    async with httpx.AsyncClient(headers=dict(arguments.header)) as http:
        yield http


@asynccontextmanager
async def connected(arguments: argparse.Namespace, **extra: Any) -> AsyncIterator[Client]:
    """A Client for the agent at `arguments.url`, closed on exit."""
    async with http_client(arguments) as http:
        async with spinning(f"connecting to {arguments.url}"):
            client = await Client.connect(
                arguments.url, http=http, **connect_options(arguments), **extra
            )
        async with client:
            yield client
