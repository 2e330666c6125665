"""The server root as a browser sees it: a request that prefers HTML to JSON (`Accept`)
gets a short page naming the agent and linking its card; every other client keeps the
JSON it got before (the card, or the mounted agents' index)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from parley.asgi.http import Exchange, Request

HTML_TYPE = "text/html; charset=utf-8"
PAGE_HEADERS = (
    ("Cache-Control", "no-cache"),
    ("Vary", "Accept"),
    ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"),
    ("X-Content-Type-Options", "nosniff"),
)
_STYLE = "body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}"


def _quality(accept: str, wanted: tuple[str, ...]) -> float:
    """The q of the most specific range in `accept` matching one of `wanted` (RFC 9110
    §12.5.1; only type and subtype ranges are compared)."""
    best, found = 0.0, -1
    for item in accept.split(","):
        range_, *parameters = (part.strip() for part in item.split(";"))
        range_ = range_.lower()
        if range_ not in wanted:
            continue
        q = 1.0
        for parameter in parameters:
            key, _, value = parameter.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        specificity = len(wanted) - wanted.index(range_)
        if specificity > found:
            best, found = q, specificity
    return best


def prefers_html(accept: str | None) -> bool:
    """Whether a request's `Accept` ranks HTML above JSON, as browsers' navigations do
    (`text/html,…,*/*;q=0.8`); `*/*` alone, or no header (curl, HTTP libraries), does not."""
    if not accept or "html" not in accept.lower():
        return False
    html = _quality(accept, ("text/html", "text/*", "*/*"))
    json = _quality(accept, ("application/json", "application/*", "*/*"))
    return html > json


def wants_page(request: Request) -> bool:
    return prefers_html(request.headers.get("accept"))


def escape(text: str) -> str:
    """`html.escape`, imported on first use: `html` loads its entity tables, which a server
    that never shows a page need not pay for at start."""
    from html import escape as html_escape  # noqa: PLC0415 - loaded on first use

    return html_escape(text)


def page(title: str, paragraphs: Iterable[str]) -> bytes:
    """A small HTML page; `paragraphs` are HTML already (callers escape what they put in)."""
    body = "".join(f"<p>{each}</p>" for each in paragraphs)
    return (
        f'<!doctype html><html lang="en"><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style>"
        f"<h1>{escape(title)}</h1>{body}</html>"
    ).encode()


def agent_page(name: str, description: str, root_path: str = "") -> bytes:
    """The root page of one agent served under `root_path` (the ASGI scope's)."""
    card = escape(f"{root_path}/.well-known/agent-card.json")
    return page(
        name,
        (
            escape(description),
            f'This is an A2A agent. Its agent card: <a href="{card}">{card}</a>.',
            "Talk to it with an A2A client, e.g. <code>parley talk URL</code>.",
        ),
    )


def index_page(index: Any, root_path: str = "") -> bytes:
    """The page of several mounted agents (`mount_agents`' index): each agent's root, where
    a browser finds its inspector or its page, and its card."""
    items = []
    for agent in index["agents"]:
        home = escape(f"{root_path}/{agent['name']}/")
        card = escape(agent["card"])
        name = escape(agent["agentName"])
        items.append(f'<a href="{home}">{name}</a> (<a href="{card}">agent card</a>)')
    return page("A2A agents", items or ["No agents."])


async def serve_page(exchange: Exchange, body: bytes) -> None:
    await exchange.respond(200, body, PAGE_HEADERS, HTML_TYPE)
