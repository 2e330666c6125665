"""The options every talking command shares (`parley.cli.options`): the argument types
(URL, header, JSON, file, numbers), credentials from flags or the environment, and the
`Client.connect` arguments they make — in-process, no agent needed."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.cli.options import (
    API_KEY_ENV,
    BINDINGS,
    TOKEN_ENV,
    VERSIONS,
    Credentials,
    agent_url,
    common_options,
    connect_options,
    credentials,
    file_part,
    header,
    http_client,
    json_value,
)
from parley.client import (
    GRPC_BINDING,
    HTTP_JSON_BINDING,
    JSONRPC_BINDING,
    APIKeyAuth,
    BearerAuth,
    StreamPolicy,
)
from parley.protocol.negotiation import Version


@pytest.fixture(autouse=True)
def _no_credentials_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.delenv(TOKEN_ENV, raising=False)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(parents=[common_options()])
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("http://agent.example", "http://agent.example"),
        ("https://agent.example:8443/a2a", "https://agent.example:8443/a2a"),
        ("localhost:8000", "http://localhost:8000"),
        ("agent.example/card.json", "http://agent.example/card.json"),
        ("http://[::1]:9000/", "http://[::1]:9000/"),
    ],
)
def test_an_agent_url_is_http_with_a_host(text: str, url: str) -> None:
    assert agent_url(text) == url


@pytest.mark.parametrize("text", ["ftp://agent.example", "http://", "https:///path", "file:///x"])
def test_anything_else_is_not_an_agent_url(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"is not an http:// or https:// URL"):
        agent_url(text)


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("X-Trace=1", ("X-Trace", "1")),
        (" Authorization =Bearer a=b", ("Authorization", "Bearer a=b")),
        ("X-Empty=", ("X-Empty", "")),
    ],
)
def test_a_header_is_name_equals_value(text: str, pair: tuple[str, str]) -> None:
    assert header(text) == pair


@pytest.mark.parametrize("text", ["novalue", "=value", "  =value", ""])
def test_a_header_needs_a_name_and_an_equals_sign(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="expected NAME=VALUE"):
        header(text)


names = st.text(alphabet=st.characters(blacklist_characters="="), min_size=1).filter(str.strip)


@given(names, st.text())
def test_any_header_reads_back_its_name_and_value(name: str, value: str) -> None:
    assert header(f"{name}={value}") == (name.strip(), value)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=8,
    )
)
def test_json_values_read_back(value: object) -> None:
    assert json_value(json.dumps(value)) == value


@pytest.mark.parametrize("text", ["{nope", "", "'single'", "[1,]", "NaN-ish"])
def test_bad_json_is_a_usage_error(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="invalid JSON"):
        json_value(text)


@pytest.mark.parametrize(
    ("name", "media_type"),
    [
        ("report.csv", "text/csv"),
        ("photo.png", "image/png"),
        ("notes.json", "application/json"),
        ("blob.unknownext", "application/octet-stream"),
        ("noextension", "application/octet-stream"),
    ],
)
def test_a_file_part_has_the_bytes_the_name_and_a_guessed_type(
    tmp_path: Path, name: str, media_type: str
) -> None:
    path = tmp_path / name
    path.write_bytes(b"\x00\x01 data")
    part = file_part(str(path))
    assert (part.raw, part.filename, part.media_type) == (b"\x00\x01 data", name, media_type)


def test_an_unreadable_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"cannot read .*missing\.txt: No such"):
        file_part(str(tmp_path / "missing.txt"))
    with pytest.raises(argparse.ArgumentTypeError, match="cannot read"):
        file_part(str(tmp_path))  # a directory


def test_the_choices_are_the_documented_ones() -> None:
    assert sorted(BINDINGS) == ["grpc", "jsonrpc", "rest"]
    assert set(BINDINGS.values()) == {GRPC_BINDING, HTTP_JSON_BINDING, JSONRPC_BINDING}
    assert sorted(VERSIONS, reverse=True) == VERSIONS
    assert set(VERSIONS) == {version.value for version in Version}


def test_the_defaults_ask_nothing_of_the_connection() -> None:
    arguments = parse("localhost:9000")
    assert arguments.url == "http://localhost:9000"
    assert (arguments.json, arguments.protocol_version, arguments.binding) == (False, None, None)
    assert (arguments.header, arguments.timeout) == ([], None)
    assert connect_options(arguments) == {"auth": None}


@pytest.mark.parametrize("flag", ["--version", "--a2a-version"])
@pytest.mark.parametrize("binding_flag", ["--binding", "--transport"])
def test_the_version_and_binding_options_and_their_aliases(flag: str, binding_flag: str) -> None:
    options = connect_options(parse("http://a", flag, VERSIONS[-1], binding_flag, "rest"))
    assert options["versions"] == [Version(VERSIONS[-1])]
    assert options["bindings"] == [HTTP_JSON_BINDING]


def test_a_timeout_bounds_the_answer_the_connection_and_a_streams_silence() -> None:
    options = connect_options(parse("http://a", "--timeout", "2.5"))
    assert (options["timeout"], options["connect_timeout"]) == (2.5, 2.5)
    assert options["streaming"] == StreamPolicy(idle_timeout=2.5)


def test_headers_repeat_in_order() -> None:
    arguments = parse("http://a", "--header", "A=1", "--header", "B=2", "--header", "A=3")
    assert arguments.header == [("A", "1"), ("B", "2"), ("A", "3")]


def test_the_http_client_sends_the_headers_the_last_one_winning() -> None:
    arguments = parse(
        "http://a", "--header", "X-One=1", "--header", "X-Two=2", "--header", "X-One=3"
    )

    async def scenario() -> None:
        async with http_client(arguments) as http:
            assert (http.headers["X-One"], http.headers["X-Two"]) == ("3", "2")
        assert http.is_closed

    asyncio.run(scenario())


def _headers(arguments: argparse.Namespace) -> dict[str, str] | None:
    auth = credentials(arguments)
    return None if auth is None else dict(asyncio.run(_async_headers(auth)))


async def _async_headers(auth: object) -> dict[str, str]:
    headers = await auth.headers()  # type: ignore[attr-defined]
    return dict(headers)


def test_no_credentials_without_flags_or_variables() -> None:
    assert credentials(parse("http://a")) is None


@pytest.mark.parametrize(
    ("flags", "env", "expected"),
    [
        (["--api-key", "k1"], {}, {"X-API-Key": "k1"}),
        ([], {API_KEY_ENV: "k2"}, {"X-API-Key": "k2"}),
        (["--api-key", "flag"], {API_KEY_ENV: "env"}, {"X-API-Key": "flag"}),
        (["--bearer", "t1"], {}, {"Authorization": "Bearer t1"}),
        ([], {TOKEN_ENV: "t2"}, {"Authorization": "Bearer t2"}),
        (["--bearer", "flag"], {TOKEN_ENV: "env"}, {"Authorization": "Bearer flag"}),
        (
            ["--api-key", "k"],
            {TOKEN_ENV: "t"},
            {"X-API-Key": "k", "Authorization": "Bearer t"},
        ),
    ],
)
def test_credentials_come_from_flags_else_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    env: dict[str, str],
    expected: dict[str, str],
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert _headers(parse("http://a", *flags)) == expected


def test_one_credential_is_itself_and_two_are_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(credentials(parse("http://a", "--api-key", "k")), APIKeyAuth)
    assert isinstance(credentials(parse("http://a", "--bearer", "t")), BearerAuth)
    both = credentials(parse("http://a", "--api-key", "k", "--bearer", "t"))
    assert isinstance(both, Credentials)
    assert [type(part) for part in both.parts] == [APIKeyAuth, BearerAuth]


def test_an_empty_variable_is_no_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "")
    monkeypatch.setenv(TOKEN_ENV, "")
    assert credentials(parse("http://a")) is None


def test_credentials_are_never_in_the_options_help() -> None:
    text = common_options().format_help()
    assert f"${API_KEY_ENV}" in text
    assert f"${TOKEN_ENV}" in text
