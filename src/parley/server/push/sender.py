"""How a delivery reaches a webhook: one HTTP request to the address the SSRF guard checked
(`ssrf.resolve_and_check`), never to a second resolution of the name, never following a
redirect, reading at most a bounded prefix of the answer."""

from __future__ import annotations

import ssl
from collections.abc import Mapping

import httpx

from parley.server.push.ssrf import CheckedTarget


def webhook_client(
    *, timeout: float = 10.0, verify: ssl.SSLContext | bool = True
) -> httpx.AsyncClient:
    """An httpx client for `send_pinned`: no redirects; no proxy, netrc or CA settings from
    the environment (a proxy would dial the name itself); no idle connection kept, so one
    verified for a name never carries a request for another name at the same address."""
    return httpx.AsyncClient(
        timeout=timeout,
        verify=verify,
        follow_redirects=False,
        trust_env=False,
        limits=httpx.Limits(max_keepalive_connections=0),
    )


async def send_pinned(
    client: httpx.AsyncClient,
    checked: CheckedTarget,
    *,
    content: bytes,
    headers: Mapping[str, str] | None = None,
    method: str = "POST",
) -> httpx.Response:
    """One request to exactly the checked address, with the URL's host as Host header and
    TLS server name; a redirect is returned, never followed. The client's own headers,
    cookies and auth are not added. The answer's body is not read (see `post`)."""
    response, _ = await post(client, checked, content=content, headers=headers, method=method)
    return response


async def post(
    client: httpx.AsyncClient,
    checked: CheckedTarget,
    *,
    content: bytes,
    headers: Mapping[str, str] | None = None,
    method: str = "POST",
    read: int = 0,
) -> tuple[httpx.Response, bytes]:
    """`send_pinned`, and at most the first `read` bytes of the answer's body (as sent, not
    decoded): an endless or huge answer costs no more than that."""
    sent = httpx.Headers(headers)
    sent["Host"] = checked.target.authority
    extensions: dict[str, object] = {"timeout": client.timeout.as_dict()}
    if checked.server_name is not None:
        extensions["sni_hostname"] = checked.server_name
    request = httpx.Request(
        method, checked.dial_url, headers=sent, content=content, extensions=extensions
    )
    response = await client.send(request, follow_redirects=False, stream=True)
    prefix = b""
    try:
        if read:
            async for chunk in response.aiter_raw():
                prefix += chunk
                if len(prefix) >= read:
                    break
    finally:
        await response.aclose()
    return response, prefix[:read]
