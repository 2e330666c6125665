"""What a request must show before a binding reads it: a Host the app answers to, a JSON
body, and no cross-site browser origin. Together they keep web pages from driving an agent
on the user's machine: a page can post a form or a `text/plain` body anywhere without a
CORS preflight, but not `application/json`, and Parley approves no preflight (an OPTIONS
request gets an error without `Access-Control-*` headers); DNS rebinding (a page's own
name resolving to 127.0.0.1) shows in the Host header.

Each check runs on every request, so each is a dict lookup and a string compare or two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from parley.protocol.errors import A2AError, ContentTypeNotSupportedError, InvalidRequestError

JSON_MEDIA_TYPES = frozenset({"application/json", "application/a2a+json"})
"""The bodies the bindings read: JSON-RPC's `application/json` and the `application/a2a+json`
HTTP+JSON SHOULD use (REFERENCE §2.1); parameters (`; charset=utf-8`) are allowed."""

ANY_HOST = "*"
_ACCEPT = (("Accept", ", ".join(sorted(JSON_MEDIA_TYPES))),)
"""RFC 9110 §15.5.16: a 415 names the media types that would have been accepted."""
_SHOWN = 100
"""Characters of a refused header value repeated in the error message."""


class Refused(Exception):  # noqa: N818 (a condition the app answers, like Disconnected)
    """A request refused before any binding reads it: the HTTP status, the protocol error
    for the body and extra response headers. Not an A2AError, so it passes the bindings'
    error handlers to the app, which answers in the shape of the binding the request was
    for (a JSON-RPC error for a POST to the JSON-RPC URL, else a REST error)."""

    def __init__(
        self, status: int, error: A2AError, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        super().__init__(error.message)
        self.status = status
        self.error = error
        self.headers = headers


def media_type(value: str) -> str:
    """The type of a Content-Type value, without parameters, lower-cased."""
    return value.partition(";")[0].strip().lower()


def check_content_type(headers: Mapping[str, str]) -> None:
    """Refuse (415) a body declared as anything but JSON, before it is read."""
    value = headers.get("content-type")
    if value is None or value in JSON_MEDIA_TYPES or media_type(value) in JSON_MEDIA_TYPES:
        return
    error = ContentTypeNotSupportedError(
        f"Content-Type {value[:_SHOWN]!r} is not accepted: send a JSON body as "
        "application/json or application/a2a+json",
        metadata={"contentType": value[:_SHOWN]},
    )
    raise Refused(415, error, _ACCEPT)


def check_untyped_body(headers: Mapping[str, str], body: bytes) -> None:
    """Refuse (415) a body sent without a Content-Type. An empty body needs none: clients
    send a body-less POST (`POST /tasks/{id}:cancel`) without one."""
    if body and "content-type" not in headers:
        error = ContentTypeNotSupportedError(
            "A request body needs a Content-Type: application/json or application/a2a+json"
        )
        raise Refused(415, error, _ACCEPT)


def check_site(headers: Mapping[str, str]) -> None:
    """Refuse (403) a browser request another site's page made (`Sec-Fetch-Site:
    cross-site`); other clients send no such header."""
    if headers.get("sec-fetch-site") == "cross-site":
        error = InvalidRequestError(
            "A page of another site may not call this agent (Sec-Fetch-Site: cross-site)"
        )
        raise Refused(403, error)


def without_port(value: str) -> str:
    """A Host value without its port: `localhost:8000` → `localhost`, `[::1]:8000` →
    `[::1]` (a bracketed IPv6 address keeps its colons)."""
    head, colon, port = value.rpartition(":")
    return head if colon and port.isdigit() else value


def host_name(value: str) -> str:
    """A configured host name as requests are compared with it: lower-case, without a
    port, an IPv6 address in brackets (`::1`, as `urlsplit` gives it, → `[::1]`)."""
    name = value.strip().lower()
    if name.count(":") > 1 and not name.startswith("["):
        return f"[{name}]"
    return without_port(name)


def allowed_host_names(hosts: Iterable[str] | None) -> frozenset[str] | None:
    """The names to allow, as `host_name` gives them; None (answer any Host) for None or
    a list holding `*`. A single string is one name, not its characters."""
    if hosts is None:
        return None
    if isinstance(hosts, str):
        hosts = (hosts,)
    names = [host.strip() for host in hosts]
    if ANY_HOST in names:
        return None
    if not any(names):
        raise ValueError("allowed_hosts must name at least one host (or '*' for any)")
    return frozenset(host_name(name) for name in names if name)


def check_host(headers: Mapping[str, str], allowed: frozenset[str] | None) -> None:
    """Refuse (400) a request for a host name the app does not answer to (DNS rebinding:
    `evil.example` resolving to 127.0.0.1 reaches the app with `Host: evil.example`)."""
    if allowed is None:
        return
    value = headers.get("host", "")
    name = without_port(value)
    if name in allowed or name.lower() in allowed:
        return
    shown = value[:_SHOWN]
    error = InvalidRequestError(
        f"This server does not answer to host {shown!r}; allow it with "
        "`parley serve --allowed-host` or build_app(allowed_hosts=...)",
        metadata={"host": shown},
    )
    raise Refused(400, error)
