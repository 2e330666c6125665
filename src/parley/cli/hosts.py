"""Which Host names `parley serve` answers to (DNS rebinding: a web page must not reach a
loopback agent under a name of its own)."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(bind: str, url: str, given: Sequence[str] | None) -> list[str] | None:
    """The Host names the HTTP server answers to (None: any): `--allowed-host`'s (`*`:
    any), else on a loopback `--host` the loopback names, so that a web page cannot reach
    the agent under a name of its own (DNS rebinding); with either, the `--url` host, which
    the card gives clients. A server on another interface answers any Host unless told."""
    if given:
        names = list(given)
    elif is_loopback(bind):
        names = list(LOOPBACK_HOSTS)
    else:
        return None
    if "*" in names:
        return None
    url_host = urlsplit(url).hostname
    return list(dict.fromkeys([*names, url_host] if url_host else names))
