"""The webhook SSRF guard: every spelling of a non-public address refused when a config is
set, names checked again after resolution (one bad answer refuses), the allow-list, and
delivery pinned to the checked address (Host header, TLS server name) that never follows
a redirect, against real listeners on 127.0.0.1 that count the connections they get."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import re
import socket
import ssl
from collections.abc import Sequence
from ipaddress import IPv4Address, ip_address

import pytest
import trustme
from hypothesis import given
from hypothesis import strategies as st

from parley.server.push import (
    Allow,
    Answer,
    HostResolutionError,
    Resolver,
    SendError,
    UnsafeUrlError,
    check_url,
    refusal,
    resolve_and_check,
    send_pinned,
    system_resolver,
    webhook_client,
)
from tests.contracts.support import run


def wide(text: str) -> str:
    """`text` in fullwidth forms (U+FF01 to U+FF5E), which clients map back to ASCII."""
    return "".join(chr(ord(char) + 0xFEE0) for char in text)


# (url, what the refusal says): each is also delivered through a resolver that answers
# every name with a counting listener, which must see no connection.
REFUSED: list[tuple[str, str]] = [
    # IPv4 loopback in every spelling a URL parser, a browser or inet_aton accepts
    ("http://127.0.0.1/", "loopback"),
    ("http://127.0.0.1:8080/hook", "loopback"),
    ("HTTP://127.0.0.1/", "loopback"),
    ("http://127.1/", "loopback"),
    ("http://127.0.1/", "loopback"),
    ("http://2130706433/", "loopback"),
    ("http://0177.0.0.1/", "loopback"),
    ("http://0177.1/", "loopback"),
    ("http://017700000001/", "loopback"),
    ("http://0x7f.1/", "loopback"),
    ("http://0x7f000001/", "loopback"),
    ("http://0X7F.0.0.1/", "loopback"),
    ("http://0x7f.0x0.0x0.0x1/", "loopback"),
    ("http://0177.0x0.0.1/", "loopback"),
    ("http://127.000.000.001/", "loopback"),
    ("http://127.0.0.1./", "loopback"),
    ("http://0x7f.1./", "loopback"),
    ("http://127.255.255.254/", "loopback"),
    # Unicode: fullwidth digits and dots, ideographic full stops, ignorable characters
    (f"http://{wide('127.0.0.1')}/", "loopback"),
    ("http://127。0。0。1/", "loopback"),
    ("http://" + "127.0.0.1".replace(".", wide(".")) + "/", "loopback"),
    ("http://127｡0｡0｡1/", "loopback"),
    ("http://127.0.0.1。/", "loopback"),
    ("http://①②⑦.0.0.1/", "loopback"),
    ("http://127.0.0\u00ad.1/", "loopback"),
    ("http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", "this host"),
    (f"http://{wide('localhost')}/", "this host"),
    (f"http://{wide('127%2E0.0.1')}/", "not an IPv4 address"),
    ("http://exa\u200dmple.com/", "not a valid international name"),
    # percent-encoded hosts
    ("http://%31%32%37.0.0.1/", "percent-encoded"),
    ("http://127%2e0%2e0%2e1/", "percent-encoded"),
    ("http://loc%61lhost/", "percent-encoded"),
    ("http://ex%61mple.com/", "percent-encoded"),
    ("http://evil.com%00.127.0.0.1/", "percent-encoded"),
    # names of this host or a private network
    ("http://localhost/", "this host"),
    ("http://LOCALHOST./", "this host"),
    ("http://localhost:8080/", "this host"),
    ("http://api.localhost/", "this host"),
    ("http://localhost.localdomain/", "host-local"),
    ("http://printer.local/", "multicast DNS"),
    ("http://db.internal/", "private-use"),
    ("http://router.home.arpa/", "home-network"),
    ("http://intranet/", "single-label"),
    ("http://metadata/", "single-label"),
    # private, shared, link-local and special-purpose IPv4
    ("http://10.0.0.1/", "private"),
    ("http://10.1/", "private"),
    ("http://167772161/", "private"),
    ("http://172.16.0.1/", "private"),
    ("http://172.31.255.255/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://0xc0a80101/", "private"),
    ("http://0300.0250.1.1/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://0xa9fea9fe/", "link-local"),
    ("http://2852039166/", "link-local"),
    ("http://169.254.43518/", "link-local"),
    ("http://0251.0376.0251.0376/", "link-local"),
    ("http://100.64.0.1/", "carrier-grade NAT"),
    ("http://100.127.255.254/", "carrier-grade NAT"),
    ("http://198.18.0.1/", "benchmarking"),
    ("http://198.19.255.255/", "benchmarking"),
    ("http://192.0.2.1/", "documentation"),
    ("http://198.51.100.7/", "documentation"),
    ("http://203.0.113.9/", "documentation"),
    ("http://192.0.0.170/", "IETF protocol"),
    ("http://192.88.99.1/", "6to4 relay"),
    ("http://0.0.0.0/", "this network"),
    ("http://0/", "this network"),
    ("http://0x/", "this network"),
    ("http://0.0.0.0:8080/", "this network"),
    ("http://224.0.0.1/", "multicast"),
    ("http://239.255.255.250/", "multicast"),
    ("http://240.0.0.1/", "reserved"),
    ("http://255.255.255.255/", "reserved"),
    # IPv6, and IPv4 inside IPv6
    ("http://[::1]/", "loopback"),
    ("http://[::1]:8080/", "loopback"),
    ("http://[0:0:0:0:0:0:0:1]/", "loopback"),
    ("http://[0000:0000:0000:0000:0000:0000:0000:0001]/", "loopback"),
    ("http://[::]/", "unspecified"),
    ("http://[::ffff:127.0.0.1]/", "embeds 127.0.0.1, loopback"),
    ("http://[::FFFF:127.0.0.1]/", "embeds 127.0.0.1, loopback"),
    ("http://[::ffff:7f00:1]/", "embeds 127.0.0.1, loopback"),
    ("http://[::ffff:169.254.169.254]/", "link-local"),
    ("http://[::ffff:a9fe:a9fe]/", "link-local"),
    ("http://[::ffff:10.0.0.1]:443/", "private"),
    ("http://[::127.0.0.1]/", "IPv4-compatible"),
    ("http://[::a9fe:a9fe]/", "IPv4-compatible"),
    ("http://[::2]/", "IPv4-compatible"),
    ("http://[::ffff:0:127.0.0.1]/", "IPv4-translated"),
    ("http://[64:ff9b::127.0.0.1]/", "embeds 127.0.0.1, loopback"),
    ("http://[64:ff9b::a00:1]/", "embeds 10.0.0.1, private"),
    ("http://[64:ff9b::169.254.169.254]/", "link-local"),
    ("http://[64:ff9b:1::a00:1]/", "local-use NAT64"),
    ("http://[2002:7f00:1::]/", "embeds 127.0.0.1, loopback"),
    ("http://[2002:a9fe:a9fe::1]/", "link-local"),
    ("http://[2002:c0a8:101::]/", "private"),
    ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "Teredo"),
    ("http://[2001::1]/", "Teredo"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[fe80::1%25eth0]/", "zone id"),
    ("http://[fe80::1%eth0]/", "zone id"),
    ("http://[fe80::a9fe:a9fe%251]/", "zone id"),
    ("http://[fc00::1]/", "unique local"),
    ("http://[fd12:3456:789a::1]/", "unique local"),
    ("http://[fec0::1]/", "site-local"),
    ("http://[ff02::1]/", "multicast"),
    ("http://[2001:db8::1]/", "documentation"),
    ("http://[3fff::1]/", "documentation"),
    ("http://[100::1]/", "discard-only"),
    ("http://[5f00::1]/", "not global unicast"),
    # user information, fragments and backslashes: what a reader might take for the host
    ("http://public.example@127.0.0.1/", "user information"),
    ("http://user:pass@hooks.example.com/", "user information"),
    ("http://@hooks.example.com/", "user information"),
    ("http://127.0.0.1:80@hooks.example.com/", "user information"),
    ("http://hooks.example.com@169.254.169.254/", "user information"),
    ("http://a@b@hooks.example.com/", "user information"),
    ("http://127.0.0.1#@hooks.example.com/", "loopback"),
    ("http://127.0.0.1?@hooks.example.com/", "loopback"),
    ("http://127.0.0.1/#@hooks.example.com/", "loopback"),
    ("http://hooks.example.com\\@127.0.0.1/", "backslash"),
    ("http://127.0.0.1\\@hooks.example.com/", "backslash"),
    ("http://127.0.0.1\\.hooks.example.com/", "backslash"),
    ("http:\\\\127.0.0.1\\", "backslash"),
    # other schemes, and URLs without an authority
    ("file:///etc/passwd", "scheme 'file'"),
    ("gopher://127.0.0.1:6379/_INFO", "scheme 'gopher'"),
    ("ftp://hooks.example.com/", "scheme 'ftp'"),
    ("ws://hooks.example.com/", "scheme 'ws'"),
    ("wss://hooks.example.com/", "scheme 'wss'"),
    ("dict://127.0.0.1:11211/", "scheme 'dict'"),
    ("ldap://127.0.0.1/", "scheme 'ldap'"),
    ("javascript:alert(1)", "scheme 'javascript'"),
    ("data:text/plain,hi", "scheme 'data'"),
    ("jar:http://hooks.example.com!/", "scheme 'jar'"),
    ("http+unix://%2Fvar%2Frun%2Fdocker.sock/", "scheme 'http\\+unix'"),
    ("//127.0.0.1/", "scheme"),
    ("127.0.0.1", "scheme"),
    ("", "scheme"),
    ("http:////127.0.0.1/", "no host"),
    ("http:/127.0.0.1/", "no host"),
    ("http:127.0.0.1/", "no host"),
    # what cannot be read one way only
    ("http://[::1/", "not a URL"),
    ("http://[127.0.0.1]/", "not a URL|not an IPv6"),
    ("http://[v1.fe]/", "not a URL|not an IPv6"),
    ("http://[::ffff:0177.0.0.1]/", "not a URL|not an IPv6"),
    ("http://::1/", "port"),
    ("http://hooks.example.com:99999/", "port"),
    ("http://hooks.example.com:0/", "port"),
    ("http://hooks.example.com:-1/", "port"),
    ("http://hooks.example.com:80:80/", "port"),
    (f"http://hooks.example.com:{wide('80')}/", "port"),
    ("http://1.2.3.4.5/", "not an IPv4 address"),
    ("http://08.0.0.1/", "not an IPv4 address"),
    ("http://0xg.0.0.1/", "not an IPv4 address"),
    ("http://hooks.123/", "not an IPv4 address"),
    ("http://256.0.0.1/", "out of range"),
    ("http://1.2.3.256/", "out of range"),
    ("http://4294967296/", "out of range"),
    ("http://1.16777216/", "out of range"),
    ("http://0x100.0.0.1/", "out of range"),
    ("http://hooks.example.com../", "empty label"),
    ("http://.hooks.example.com/", "empty label"),
    ("http://hooks..example.com/", "empty label"),
    ("http://" + "a" * 250 + ".com/", "too long"),
    ("http://-hooks.example.com/", "not a valid host name"),
    ("http://xn--/", "not a valid host name"),
    ("http://hooks.example.com$/", "not a valid host name"),
    ("http://exa mple.com/", "whitespace"),
    (" http://hooks.example.com/", "whitespace"),
    ("http://hooks.example.com/\n", "whitespace"),
    ("http://hooks.example.com\t/", "whitespace"),
    ("http://hooks.example.com\u3000/", "whitespace"),
    ("http://hooks.example.com\x00/", "control characters"),
]

# (url, the normalized URL): public hosts in any spelling pass, normalized.
ACCEPTED: list[tuple[str, str]] = [
    ("https://hooks.example.com/a2a/webhook", "https://hooks.example.com/a2a/webhook"),
    ("HTTPS://Hooks.Example.COM./a2a?x=1#frag", "https://hooks.example.com/a2a?x=1"),
    ("https://hooks.example.com:443/", "https://hooks.example.com/"),
    ("http://hooks.example.com:8080", "http://hooks.example.com:8080/"),
    ("http://hooks.example.com:/x", "http://hooks.example.com/x"),
    ("https://hooks.example.com/?", "https://hooks.example.com/"),
    ("https://hooks.example.com/p%20q?r=%40", "https://hooks.example.com/p%20q?r=%40"),
    ("https://_hooks.example.com/", "https://_hooks.example.com/"),
    ("https://localhost.example.com/", "https://localhost.example.com/"),
    ("https://internal.example.com/", "https://internal.example.com/"),
    ("https://1.2.3.example/", "https://1.2.3.example/"),
    ("https://0x7f.example/", "https://0x7f.example/"),
    ("https://bücher.example/", "https://xn--bcher-kva.example/"),
    ("https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"),
    (f"https://{wide('EXAMPLE')}.com/", "https://example.com/"),
    ("https://hooks。example。com/", "https://hooks.example.com/"),
    ("https://a\u200bb.com/", "https://ab.com/"),
    ("http://8.8.8.8/", "http://8.8.8.8/"),
    ("http://134744072/", "http://8.8.8.8/"),
    ("http://0x8080808/", "http://8.8.8.8/"),
    ("http://010.010.010.010/", "http://8.8.8.8/"),
    ("http://8.8.2056/", "http://8.8.8.8/"),
    (f"http://{wide('8.8.8.8')}/", "http://8.8.8.8/"),
    ("https://1.1.1.1:8443/hook", "https://1.1.1.1:8443/hook"),
    ("http://[2606:4700:4700::1111]/", "http://[2606:4700:4700::1111]/"),
    ("http://[2606:4700:4700:0:0:0:0:1111]:8080/", "http://[2606:4700:4700::1111]:8080/"),
    ("http://[::ffff:8.8.8.8]/", "http://[::ffff:808:808]/"),
    ("http://[64:ff9b::8.8.8.8]/", "http://[64:ff9b::808:808]/"),
    ("http://[2002:808:808::1]/", "http://[2002:808:808::1]/"),
]

# (answers of the resolver, what the refusal says)
RESOLVED_REFUSED: list[tuple[list[str], str]] = [
    (["127.0.0.1"], "loopback"),
    (["169.254.169.254"], "link-local"),
    (["93.184.215.14", "10.0.0.1"], "private"),
    (["10.0.0.1", "93.184.215.14"], "private"),
    (["8.8.8.8", "1.1.1.1", "192.168.0.1"], "private"),
    (["2606:4700::6810:84e5", "::1"], "loopback"),
    (["::ffff:127.0.0.1"], "embeds 127.0.0.1"),
    (["64:ff9b::a9fe:a9fe"], "link-local"),
    (["2002:c0a8:101::1"], "private"),
    (["fd00::1"], "unique local"),
    (["fe80::1%2"], "zone id"),
    (["2606:4700::6810:84e5%3"], "zone id"),
    (["0.0.0.0"], "this network"),
    (["100.64.1.1"], "carrier-grade NAT"),
    (["2001:0:4136:e378:8000:63bf:3fff:fdd2"], "Teredo"),
    (["224.0.0.251"], "multicast"),
    (["not-an-address"], "not an address"),
]

# (answers of the resolver, the address delivery connects to: the first)
RESOLVED_PUBLIC: list[tuple[list[str], str]] = [
    (["93.184.215.14"], "93.184.215.14"),
    (["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"], "93.184.215.14"),
    (["2606:4700::6810:84e5", "93.184.215.14"], "2606:4700::6810:84e5"),
    (["64:ff9b::808:808"], "64:ff9b::808:808"),
    (["::ffff:8.8.8.8"], "::ffff:8.8.8.8"),
    (["2002:808:808::1"], "2002:808:808::1"),
]

NO_CONTENT = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
KEEP_ALIVE = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"
_LENGTH = re.compile(rb"\r\ncontent-length: *(\d+)", re.IGNORECASE)


def redirect(location: str) -> bytes:
    return (
        f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n"
        "Connection: close\r\n\r\n"
    ).encode()


class Listener:
    """A TCP listener on 127.0.0.1 that counts connections and answers each request with
    `answer` (after reading it whole; more on the connection unless the answer closes
    it), or closes at once when there is none."""

    def __init__(
        self, answer: bytes | None = None, tls: ssl.SSLContext | None = None, *, once: bool = False
    ) -> None:
        self.answer = answer
        self.tls = tls
        self.once = once
        """Answer one request per connection; close at the next one, unanswered."""
        self.connections = 0
        self.heads: list[bytes] = []
        self.port = 0
        self._open: set[asyncio.StreamWriter] = set()

    def drop(self) -> None:
        """Close every open connection (as a server does with idle ones)."""
        for writer in self._open:
            writer.close()

    async def __aenter__(self) -> Listener:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._open.add(writer)
        answered = 0
        try:
            while self.answer is not None:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    break  # the client (or `drop`) closed a kept-alive connection
                self.heads.append(head)
                length = _LENGTH.search(head)
                await reader.readexactly(int(length.group(1)) if length else 0)
                if self.once and answered:
                    break
                answered += 1
                writer.write(self.answer)
                await writer.drain()
                if b"connection: close" in self.answer.lower():
                    break
        finally:
            self._open.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError, ssl.SSLError):
                await writer.wait_closed()


def answering(*addresses: str, port: int | None = None, asked: list[str] | None = None) -> Resolver:
    """A resolver answering every name with `addresses` (on `port`, else the one asked)."""

    async def resolve(host: str, asked_port: int) -> Sequence[tuple[str, int]]:
        if asked is not None:
            asked.append(f"{host}:{asked_port}")
        return [(address, asked_port if port is None else port) for address in addresses]

    return resolve


async def unused(host: str, port: int) -> Sequence[tuple[str, int]]:
    raise AssertionError(f"an address needs no resolution, asked for {host}")


async def deliver(url: str, listener: Listener, allow: Allow | None = None) -> Answer:
    """What a delivery does: check the URL again, resolve (every name answers the
    listener), connect to the checked address."""
    resolver = answering("127.0.0.1", port=listener.port)
    checked = await resolve_and_check(url, allow=allow or Allow(), resolver=resolver)
    async with webhook_client(timeout=5) as client:
        return await send_pinned(client, checked, content=b"{}")


@pytest.mark.parametrize(("url", "why"), REFUSED)
def test_config_time_check_refuses(url: str, why: str) -> None:
    with pytest.raises(UnsafeUrlError, match=why):
        check_url(url)


@pytest.mark.parametrize(("url", "why"), REFUSED)
def test_a_refused_url_makes_no_connection(url: str, why: str) -> None:
    async def scenario() -> None:
        async with Listener(NO_CONTENT) as listener:
            with pytest.raises(UnsafeUrlError, match=why):
                await deliver(url, listener)
        assert listener.connections == 0

    run(scenario())


def test_the_counting_listener_sees_what_the_guard_lets_through() -> None:
    """The control for the test above: the same path, allowed, reaches the listener."""

    async def scenario() -> None:
        async with Listener(NO_CONTENT) as listener:
            with pytest.raises(UnsafeUrlError, match=r"resolves to 127\.0\.0\.1"):
                await deliver("http://hooks.example.com/hook", listener)
            assert listener.connections == 0
            allow = Allow(["127.0.0.1"])
            response = await deliver("http://hooks.example.com/hook?x=1", listener, allow)
        assert response.status == 204
        assert listener.connections == 1
        head = listener.heads[0].lower()
        assert head.startswith(b"post /hook?x=1 http/1.1\r\n")
        assert b"\r\nhost: hooks.example.com\r\n" in head

    run(scenario())


@pytest.mark.parametrize(("url", "normalized"), ACCEPTED)
def test_public_urls_pass_normalized(url: str, normalized: str) -> None:
    target = check_url(url)
    assert target.url == normalized
    assert check_url(target.url) == target
    if target.address is not None:  # pinned to itself, no resolver asked
        checked = run(resolve_and_check(url, resolver=unused))
        assert (checked.address, checked.port) == (target.address, target.port)


@pytest.mark.parametrize(("answers", "why"), RESOLVED_REFUSED)
def test_a_name_is_refused_if_any_answer_is(answers: list[str], why: str) -> None:
    resolver = answering(*answers)
    with pytest.raises(UnsafeUrlError, match=f"hooks.example.com resolve.*{why}"):
        run(resolve_and_check("https://hooks.example.com/hook", resolver=resolver))


@pytest.mark.parametrize(("answers", "first"), RESOLVED_PUBLIC)
def test_a_name_with_public_answers_is_pinned_to_the_first(answers: list[str], first: str) -> None:
    asked: list[str] = []
    url = "https://Hooks.Example.com:8443/a2a"
    checked = run(resolve_and_check(url, resolver=answering(*answers, asked=asked)))
    assert asked == ["hooks.example.com:8443"]
    assert (checked.address, checked.port) == (ip_address(first), 8443)
    assert checked.server_name == "hooks.example.com"
    assert checked.target.authority == "hooks.example.com:8443"


def test_names_that_spell_an_address_are_judged_by_their_answers() -> None:
    resolver = answering("127.0.0.1")
    for url in ("http://127.0.0.1.nip.io/", "http://localtest.me/", "http://7f000001.rbndr.us/"):
        with pytest.raises(UnsafeUrlError, match="loopback"):
            run(resolve_and_check(url, resolver=resolver))


def test_a_name_that_does_not_resolve_is_a_failed_attempt() -> None:
    async def failing(host: str, port: int) -> Sequence[tuple[str, int]]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(HostResolutionError, match="did not resolve"):
        run(resolve_and_check("https://hooks.example.com/", resolver=failing))
    with pytest.raises(HostResolutionError, match="no address"):
        run(resolve_and_check("https://hooks.example.com/", resolver=answering()))


def test_the_system_resolver_answers_addresses_with_the_port() -> None:
    assert run(system_resolver("127.0.0.1", 8080)) == [("127.0.0.1", 8080)]


def test_allow_lets_exactly_its_entries_through() -> None:
    allow = Allow(["127.0.0.1", "10.0.0.0/8", "hooks.internal", "[::1]", "receiver"])
    for url in (
        "http://127.0.0.1:8080/",
        "http://0x7f.1/",
        "http://2130706433/",
        "http://[::ffff:127.0.0.1]/",
        "http://10.1.2.3/",
        "http://[::1]/",
        "http://hooks.internal/",
        "http://HOOKS.INTERNAL./",
        "http://receiver:9000/",
    ):
        check_url(url, allow=allow)
    for url, why in (
        ("http://127.0.0.2/", "loopback"),
        ("http://localhost/", "this host"),
        ("http://192.168.0.1/", "private"),
        ("http://other.internal/", "private-use"),
        ("http://receiver2/", "single-label"),
        ("http://[::2]/", "IPv4-compatible"),
        ("http://user@127.0.0.1/", "user information"),
        ("ftp://127.0.0.1/", "scheme"),
        ("http://[fe80::1%25lo]/", "zone id"),
    ):
        with pytest.raises(UnsafeUrlError, match=why):
            check_url(url, allow=allow)


def test_allow_at_resolution_time() -> None:
    allow = Allow(["10.0.0.0/8", "hooks.internal"])

    def resolve(url: str, *answers: str) -> str:
        checked = run(resolve_and_check(url, allow=allow, resolver=answering(*answers)))
        return str(checked.address)

    assert resolve("http://hooks.internal/", "172.17.0.2", "fd00::2") == "172.17.0.2"
    assert resolve("http://hooks.example.com/", "10.0.0.5") == "10.0.0.5"
    assert resolve("http://hooks.example.com/", "::ffff:10.0.0.5") == "::ffff:a00:5"
    with pytest.raises(UnsafeUrlError, match=r"192\.168\.0\.1, refused: private"):
        resolve("http://hooks.example.com/", "10.0.0.5", "192.168.0.1")


@pytest.mark.parametrize(
    "entry", ["", "10.0.0.1/8", "10.0.0.0/33", "http://hooks.example.com", "a b", "host:80"]
)
def test_allow_refuses_entries_it_cannot_read(entry: str) -> None:
    with pytest.raises(ValueError, match="push allow-list entry"):
        Allow([entry])


def spellings(value: int) -> list[str]:
    """One IPv4 address as inet_aton reads it: dotted, integer, hex, octal, short forms."""
    a, b, c, d = value.to_bytes(4, "big")
    return [
        f"{a}.{b}.{c}.{d}",
        str(value),
        hex(value),
        "0" + format(value, "o"),
        f"{a}.{(b << 16) | (c << 8) | d}",
        f"{a}.{b}.{(c << 8) | d}",
        f"{a:#x}.{b:#x}.{c:#x}.{d:#x}",
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
        f"{a:#x}.0{b:o}.{(c << 8) | d}",
    ]


@given(st.integers(0, 2**32 - 1))
def test_every_ipv4_spelling_gets_the_verdict_of_its_address(value: int) -> None:
    address = IPv4Address(value)
    expected = refusal(address)
    for spelled in [*spellings(value), f"{address}."]:
        if expected is None:
            assert check_url(f"http://{spelled}/").address == address
        else:
            with pytest.raises(UnsafeUrlError, match=re.escape(expected)):
                check_url(f"http://{spelled}/")


@given(st.integers(0, 2**32 - 1))
def test_the_ipv4_reading_is_the_c_librarys(value: int) -> None:
    everything = Allow(["0.0.0.0/0"])
    for spelled in spellings(value):
        ours = check_url(f"http://{spelled}/", allow=everything).address
        assert ours is not None
        assert ours.packed == socket.inet_aton(spelled)


@given(st.integers(0, 2**32 - 1))
def test_ipv4_inside_ipv6_gets_the_verdict_of_the_ipv4_address(value: int) -> None:
    v4 = IPv4Address(value)
    for v6 in (f"::ffff:{v4}", f"64:ff9b::{v4}", f"2002:{value >> 16:x}:{value & 0xFFFF:x}::1"):
        assert (refusal(ip_address(v6)) is None) == (refusal(v4) is None), v6


def test_a_redirect_is_returned_not_followed() -> None:
    """The first hop is allowed (127.0.0.1); where it points is never contacted, even when
    the next hop is allowed too: a 3xx is a failed delivery, returned as it is."""

    async def scenario() -> None:
        allow = Allow(["127.0.0.1"])
        async with Listener() as target:
            for location in (
                "http://169.254.169.254/latest/meta-data/",
                f"http://127.0.0.1:{target.port}/",
            ):
                async with Listener(redirect(location)) as first:
                    response = await deliver(f"http://127.0.0.1:{first.port}/hook", first, allow)
                    assert (response.status, response.is_success) == (302, False)
                    assert (b"location", location.encode()) in response.headers
                    assert first.connections == 1
        assert target.connections == 0

    run(scenario())


def test_a_kept_connection_serves_only_its_own_name() -> None:
    """Answered connections are kept, but per name: a connection made (and, with TLS,
    verified) for one name never carries a request for another name pinned to the same
    address. The listener keeps connections open; a.example.com's second request reuses
    its connection, b.example.com gets its own."""
    names = [b"a.example.com", b"b.example.com", b"a.example.com", b"b.example.com"]

    async def deliveries() -> tuple[int, list[bytes]]:
        async with Listener(KEEP_ALIVE) as listener, webhook_client() as client:
            resolver = answering("127.0.0.1", port=listener.port)
            for name in names:
                url = f"http://{name.decode()}/"
                checked = await resolve_and_check(
                    url, allow=Allow(["127.0.0.1"]), resolver=resolver
                )
                assert (await send_pinned(client, checked, content=b"")).status == 204
        found = [re.search(rb"\r\nhost: ([^\r]+)", head.lower()) for head in listener.heads]
        return listener.connections, [host.group(1) for host in found if host]

    assert run(deliveries()) == (2, names)


def test_a_kept_connection_the_receiver_closed_is_replaced() -> None:
    """A receiver that closes a kept connection while it is idle, or as the next request
    comes, costs no failed attempt: the request goes once more, on a new connection."""

    async def scenario() -> None:
        async with Listener(KEEP_ALIVE) as listener, webhook_client() as client:
            checked = await resolve_and_check(
                f"http://127.0.0.1:{listener.port}/", allow=Allow(["127.0.0.1"])
            )
            assert (await send_pinned(client, checked, content=b"{}")).status == 204
            listener.drop()
            await asyncio.sleep(0.05)
            assert (await send_pinned(client, checked, content=b"{}")).status == 204
            assert (listener.connections, len(listener.heads)) == (2, 2)

    async def closed_at_the_request() -> None:  # closed as the request came: sent again
        async with Listener(KEEP_ALIVE, once=True) as listener, webhook_client() as client:
            checked = await resolve_and_check(
                f"http://127.0.0.1:{listener.port}/", allow=Allow(["127.0.0.1"])
            )
            for _ in range(3):
                assert (await send_pinned(client, checked, content=b"{}")).status == 204
            assert (listener.connections, len(listener.heads)) == (3, 5)

    run(scenario())
    run(closed_at_the_request())


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def test_tls_checks_the_url_host_at_the_pinned_address(ca: trustme.CA) -> None:
    """SNI and certificate verification use the URL's host, not the address dialled: a
    certificate for hooks.example.com passes, the same server for another name fails."""
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("hooks.example.com").configure_cert(server)
    names: list[str] = []

    def remember(_sock: ssl.SSLObject, name: str, _context: ssl.SSLContext) -> None:
        names.append(name)

    server.sni_callback = remember
    trusting = ssl.create_default_context()
    ca.configure_trust(trusting)

    async def scenario() -> None:
        async with Listener(NO_CONTENT, tls=server) as listener:
            resolver = answering("127.0.0.1", port=listener.port)
            allow = Allow(["127.0.0.1"])
            good = await resolve_and_check(
                "https://hooks.example.com/a2a", allow=allow, resolver=resolver
            )
            other = await resolve_and_check(
                "https://other.example.com/a2a", allow=allow, resolver=resolver
            )
            async with webhook_client(tls=trusting) as client:
                assert (await send_pinned(client, good, content=b"{}")).status == 204
                with pytest.raises(SendError, match="certificate"):
                    await send_pinned(client, other, content=b"{}")
        assert listener.connections == 1
        assert b"\r\nhost: hooks.example.com\r\n" in listener.heads[0].lower()

    run(scenario())
    assert names == ["hooks.example.com", "other.example.com"]


def test_the_push_package_exports_a_curated_api() -> None:
    module = importlib.import_module("parley.server.push")
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), name
