"""The SSRF guard for push-notification webhooks (DESIGN 10, R-PUSH-17): which URLs the
server may deliver to, checked when a config is set and again before each delivery, and
the one address a delivery may then connect to.

Theory of operation. `check_url` (no I/O) reads the host as the most lenient client
would: the URL parser, UTS #46 mapping (fullwidth digits, ideographic dots), and every
IPv4 form of the C library's `inet_aton` (decimal, octal, hex, short). It refuses the
addresses of `REFUSED_V4`/`REFUSED_V6`, also embedded in IPv4-mapped, NAT64 or 6to4
ones; local names; user information; whatever it cannot read one way only.
`resolve_and_check` resolves a name, refuses it if any answer is refused, and pins the
first: `send_pinned` connects to that address with the URL's host as Host header and TLS
server name, and never follows a redirect. Connecting to what was checked defeats DNS
rebinding; refusing on any bad answer defeats mixed answers. `Allow` makes exceptions.
"""

from __future__ import annotations

import asyncio
import functools
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Final
from urllib.parse import urlsplit

import msgspec

Address = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network
Resolver = Callable[[str, int], Awaitable[Sequence[tuple[str, int]]]]
"""(host, port) to the (address, port) pairs to dial, like `system_resolver`."""


class UnsafeUrlError(ValueError):
    """A webhook URL the guard refuses; the message names the part and the reason. When a
    push config is set, report it as InvalidParamsError on the config's `url` field."""


class HostResolutionError(OSError):
    """A webhook host that did not resolve: a failed delivery attempt, not a refusal."""


DEFAULT_PORTS: Final[Mapping[str, int]] = {"http": 80, "https": 443}

REFUSED_V4: Final[Mapping[IPv4Network, str]] = {
    IPv4Network("0.0.0.0/8"): "'this network' (unspecified)",
    IPv4Network("10.0.0.0/8"): "private",
    IPv4Network("100.64.0.0/10"): "shared address space (carrier-grade NAT)",
    IPv4Network("127.0.0.0/8"): "loopback",
    IPv4Network("169.254.0.0/16"): "link-local (cloud metadata services)",
    IPv4Network("172.16.0.0/12"): "private",
    IPv4Network("192.0.0.0/24"): "IETF protocol assignments",
    IPv4Network("192.0.2.0/24"): "documentation",
    IPv4Network("192.88.99.0/24"): "6to4 relay anycast (deprecated)",
    IPv4Network("192.168.0.0/16"): "private",
    IPv4Network("198.18.0.0/15"): "benchmarking",
    IPv4Network("198.51.100.0/24"): "documentation",
    IPv4Network("203.0.113.0/24"): "documentation",
    IPv4Network("224.0.0.0/4"): "multicast",
    IPv4Network("240.0.0.0/4"): "reserved (and broadcast)",
}
"""IPv4 networks never delivered to: IANA's special-purpose registry (less the few blocks
it marks globally reachable, which no webhook needs), multicast, reserved."""

REFUSED_V6: Final[Mapping[IPv6Network, str]] = {
    IPv6Network("::/128"): "unspecified",
    IPv6Network("::1/128"): "loopback",
    IPv6Network("::/96"): "IPv4-compatible (deprecated)",
    IPv6Network("::ffff:0:0:0/96"): "IPv4-translated",
    IPv6Network("64:ff9b:1::/48"): "local-use NAT64",
    IPv6Network("100::/64"): "discard-only",
    IPv6Network("2001::/23"): "IETF protocol assignments (Teredo, benchmarking, ORCHID)",
    IPv6Network("2001:db8::/32"): "documentation",
    IPv6Network("3fff::/20"): "documentation",
    IPv6Network("fc00::/7"): "unique local (private)",
    IPv6Network("fe80::/10"): "link-local",
    IPv6Network("fec0::/10"): "site-local (deprecated)",
    IPv6Network("ff00::/8"): "multicast",
}
"""IPv6 networks never delivered to, the first match naming the reason. Beyond them only
global unicast (2000::/3) passes, and an IPv4-mapped (::ffff:0:0/96), NAT64
(64:ff9b::/96) or 6to4 (2002::/16) address is judged by the IPv4 address it embeds."""

LOCAL_NAMES: Final[Mapping[str, str]] = {
    "localhost": "this host (RFC 6761)",
    "localdomain": "a host-local name by convention",
    "local": "a multicast DNS name of the local link (RFC 6762)",
    "internal": "a private-use name (.internal)",
    "home.arpa": "a home-network name (RFC 8375)",
}
"""Names, and their subdomains, that designate this host or a private network."""

_GLOBAL_UNICAST: Final = IPv6Network("2000::/3")
_MAPPED: Final = IPv6Network("::ffff:0:0/96")
_NAT64: Final = IPv6Network("64:ff9b::/96")
_SIXTOFOUR: Final = IPv6Network("2002::/16")
_REFUSED_CHARS: Final = re.compile(r"[\x00-\x20\x7f-\x9f\\]|\s")
_LABEL: Final = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_PORT: Final = re.compile(r"[0-9]{1,5}")
_DIGITS: Final = {8: re.compile(r"[0-7]+"), 10: re.compile(r"[0-9]+"), 16: re.compile(r"[0-9a-f]*")}


class Allow:
    """Exceptions to the policy, for development and tests (`parley serve --push-allow`):
    each entry an address (`127.0.0.1`, `::1`), a network (`10.0.0.0/8`) or a host name
    (`hooks.internal`). An address or network lets exactly those addresses through, in any
    spelling and when a name resolves to them; a name is let through with whatever it
    resolves to. Other schemes, user information and malformed URLs stay refused."""

    __slots__ = ("names", "networks")

    def __init__(self, entries: Iterable[str] = ()) -> None:
        networks: list[Network] = []
        names: set[str] = set()
        for entry in entries:
            try:
                host = ip_network(entry) if "/" in entry else _read_host(entry)
            except ValueError as exc:  # UnsafeUrlError included
                raise ValueError(f"push allow-list entry {entry!r}: {exc}") from None
            if isinstance(host, str):
                names.add(host)
            else:
                networks.append(ip_network(host))
        self.networks: tuple[Network, ...] = tuple(networks)
        self.names: frozenset[str] = frozenset(names)

    def admits_address(self, address: Address) -> bool:
        """Whether `address` (or the IPv4 address an IPv4-mapped one carries) is listed."""
        mapped = address.ipv4_mapped if isinstance(address, IPv6Address) else None
        return any(
            candidate.version == network.version and candidate in network
            for network in self.networks
            for candidate in (address, mapped)
            if candidate is not None
        )

    def admits_name(self, name: str) -> bool:
        """Whether the normalized host name `name` is listed."""
        return name in self.names


NO_ALLOW: Final = Allow()


class Target(msgspec.Struct, frozen=True):
    """A webhook URL that passed `check_url`, normalized. `host` is ASCII: IDNA A-labels
    in lower case without a trailing dot, or the canonical spelling of `address`."""

    scheme: str
    host: str
    port: int
    path: str
    """The request target: path and query, `/` when empty (a fragment is never sent)."""
    address: Address | None
    """The host as an address, when the URL names one."""

    @property
    def authority(self) -> str:
        """`host[:port]` as the Host header carries it (the port only when not default)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        """The normalized URL, the one to store."""
        return f"{self.scheme}://{self.authority}{self.path}"


class CheckedTarget(msgspec.Struct, frozen=True):
    """A `Target` and the checked socket address a delivery connects to, and no other."""

    target: Target
    address: Address
    port: int

    @property
    def server_name(self) -> str | None:
        """The name TLS sends (SNI) and verifies the certificate for: https to a name."""
        target = self.target
        return target.host if target.scheme == "https" and target.address is None else None


def refusal(address: Address) -> str | None:
    """Why nothing may connect to `address`, or None for a public address."""
    table: Mapping[IPv4Network, str] | Mapping[IPv6Network, str] = REFUSED_V4
    if isinstance(address, IPv6Address):
        if address.scope_id:
            return "a scoped address (zone id)"
        embedded = _embedded_v4(address)
        if embedded is not None:
            why = refusal(embedded)
            return None if why is None else f"it embeds {embedded}, {why}"
        if address not in _GLOBAL_UNICAST and not any(address in n for n in REFUSED_V6):
            return f"not global unicast ({_GLOBAL_UNICAST})"
        table = REFUSED_V6
    return next((f"{why} ({net})" for net, why in table.items() if address in net), None)


def _embedded_v4(address: IPv6Address) -> IPv4Address | None:
    if address in _MAPPED or address in _NAT64:
        return IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour if address in _SIXTOFOUR else None


def check_url(url: str, *, allow: Allow = NO_ALLOW) -> Target:
    """The webhook URL normalized, or UnsafeUrlError saying why it is refused. Syntax
    only, no I/O: a name is checked again, with its addresses, by `resolve_and_check`.
    What it accepts is remembered (per `Allow` object; every send with a config and every
    delivery asks again)."""
    return _checked(url, allow)


@functools.lru_cache(maxsize=4096)
def _checked(url: str, allow: Allow) -> Target:
    found = _REFUSED_CHARS.search(url)
    if found is not None:
        raise UnsafeUrlError(
            f"{found.group()!r} at index {found.start()}: whitespace, control characters "
            "and backslashes are refused"
        )
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise UnsafeUrlError(f"not a URL: {exc}") from None
    if parts.scheme not in DEFAULT_PORTS:
        raise UnsafeUrlError(f"scheme {parts.scheme or '(none)'!r} refused: http or https only")
    if not parts.netloc:
        raise UnsafeUrlError("no host: expected http(s)://host/path")
    if "@" in parts.netloc:
        raise UnsafeUrlError("user information (user:password@) is refused")
    text, port = _split_authority(parts.netloc, DEFAULT_PORTS[parts.scheme])
    host = _read_host(text)
    address = None if isinstance(host, str) else host
    if address is None:
        _check_name(str(host), allow)
    elif (why := refusal(address)) is not None and not allow.admits_address(address):
        spelled = "" if text.strip("[]") == str(address) else f" (spelled {text})"
        raise UnsafeUrlError(f"host {address}{spelled} refused: {why}")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, str(host), port, path, address)


def _split_authority(netloc: str, default_port: int) -> tuple[str, int]:
    if netloc.startswith("["):
        end = netloc.find("]") + 1
        host, rest = netloc[:end], netloc[end:]
    else:
        host, colon, port = netloc.partition(":")
        rest = colon + port
    if rest in ("", ":"):
        return host, default_port
    if rest[0] != ":" or not _PORT.fullmatch(rest[1:]) or not 0 < int(rest[1:]) < 65536:
        raise UnsafeUrlError(f"port {rest[1:]!r} is not a number from 1 to 65535")
    return host, int(rest[1:])


def _read_host(text: str) -> Address | str:
    """A URL's host as a client reads it: an address, or a normalized ASCII name."""
    if text.startswith("["):
        if "%" in text:
            raise UnsafeUrlError(f"IPv6 zone id in {text} refused (a scoped, local address)")
        try:
            return IPv6Address(text[1:-1])
        except ValueError:
            raise UnsafeUrlError(f"{text} is not an IPv6 address") from None
    if "%" in text:
        raise UnsafeUrlError(f"percent-encoded host {text!r} refused")
    name = _to_ascii(text).removesuffix(".")
    labels = name.split(".")
    if len(name) > 253 or not all(labels):
        raise UnsafeUrlError(f"host {text!r} is empty, too long or has an empty label")
    if _number(labels[-1]) is not None:  # no name ends in a number: an IPv4 form
        return _ipv4(labels, text)
    if not all(_LABEL.fullmatch(label) for label in labels):
        raise UnsafeUrlError(f"{text!r} is not a valid host name")
    return name


def _to_ascii(text: str) -> str:
    if text.isascii():
        return text.lower()
    import idna  # noqa: PLC0415 - international names only: not loaded at every start

    try:
        mapped = idna.uts46_remap(text, std3_rules=False, transitional=False)
        if mapped.isascii():
            return mapped.lower()
        return idna.encode(mapped, uts46=False).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise UnsafeUrlError(f"host {text!r} is not a valid international name: {exc}") from None


def _number(part: str) -> int | None:
    """One part of an IPv4 host in any `inet_aton` base (0x hex, leading-zero octal)."""
    if part.startswith("0x"):
        base, digits = 16, part[2:]
    elif len(part) > 1 and part.startswith("0"):
        base, digits = 8, part[1:]
    else:
        base, digits = 10, part
    return int(digits or "0", base) if _DIGITS[base].fullmatch(digits) else None


def _ipv4(labels: list[str], text: str) -> IPv4Address:
    numbers = [n for n in map(_number, labels) if n is not None]
    if len(numbers) != len(labels) or len(numbers) > 4:
        raise UnsafeUrlError(f"host {text!r} ends in a number but is not an IPv4 address")
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        raise UnsafeUrlError(f"host {text!r}: an IPv4 part is out of range")
    return IPv4Address(sum(n << (8 * (3 - i)) for i, n in enumerate(head)) + last)


def _check_name(name: str, allow: Allow) -> None:
    local = next((s for s in LOCAL_NAMES if name == s or name.endswith(f".{s}")), None)
    if local is not None and not allow.admits_name(name):
        raise UnsafeUrlError(f"host {name} is {LOCAL_NAMES[local]}")
    if "." not in name and not allow.admits_name(name):
        raise UnsafeUrlError(f"host {name} is a single-label name (local search domains)")


async def resolve_and_check(
    url: str, *, allow: Allow = NO_ALLOW, resolver: Resolver | None = None
) -> CheckedTarget:
    """Check `url` again, resolve its host and return the address to connect to (the
    first answer). UnsafeUrlError if the URL or any answer is refused, unless `allow`
    admits that address or the name; HostResolutionError if the name does not resolve."""
    target = check_url(url, allow=allow)
    if target.address is not None:
        return CheckedTarget(target, target.address, target.port)
    try:
        answers = await (resolver or system_resolver)(target.host, target.port)
    except (OSError, UnicodeError) as exc:
        raise HostResolutionError(f"{target.host} did not resolve: {exc}") from exc
    if not answers:
        raise HostResolutionError(f"{target.host} resolved to no address")
    trusted = allow.admits_name(target.host)
    checked: list[tuple[Address, int]] = []
    for text, port in answers:
        try:
            address = ip_address(text)
        except ValueError:
            raise UnsafeUrlError(f"{target.host} resolved to {text!r}, not an address") from None
        why = refusal(address)
        if why is not None and not trusted and not allow.admits_address(address):
            raise UnsafeUrlError(f"{target.host} resolves to {address}, refused: {why}")
        checked.append((address, port))
    return CheckedTarget(target, *checked[0])


async def system_resolver(host: str, port: int) -> list[tuple[str, int]]:
    """The operating system's answers (getaddrinfo, off the event loop's thread)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [  # a scoped IPv6 answer keeps its zone, to be refused
        (f"{addr[0]}%{addr[3]}" if len(addr) == 4 and addr[3] else str(addr[0]), port)
        for *_, addr in infos
    ]
