"""The root page a browser gets (`parley.asgi.root`): nothing an agent's card says (its
name, description, a mounted agent's path) reaches the page unescaped, the links follow the
app's root path, and `Accept` ranges are weighed by their specificity (RFC 9110 §12.5.1).
The app-level behaviour is tests/inspector/test_app."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.asgi.root import agent_page, index_page, page, prefers_html

SCRIPT = "<script>alert(1)</script>"


def test_an_agents_name_and_description_are_escaped() -> None:
    html = agent_page(SCRIPT, f'"{SCRIPT}" & more').decode()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&quot;&lt;script&gt;" in html
    assert "&amp; more" in html


def test_the_card_link_follows_the_root_path() -> None:
    html = agent_page("A", "B", root_path="/agents/a").decode()
    assert '<a href="/agents/a/.well-known/agent-card.json">' in html


def test_a_root_path_cannot_break_out_of_the_link() -> None:
    html = agent_page("A", "B", root_path='/x"><script>').decode()
    assert "<script>" not in html
    assert 'href="/x&quot;&gt;&lt;script&gt;/.well-known/agent-card.json"' in html


def test_the_index_lists_each_agent_escaped() -> None:
    index = {
        "agents": [
            {"name": "echo", "agentName": "Echo", "card": "/echo/.well-known/agent-card.json"},
            {"name": "x", "agentName": SCRIPT, "card": '/x/"onmouseover="bad'},
        ]
    }
    html = index_page(index, root_path="/root").decode()
    assert '<a href="/root/echo/">Echo</a>' in html
    assert "<script>" not in html
    assert '"onmouseover="' not in html
    assert html.count("<p>") == 2


def test_an_empty_index_says_so() -> None:
    assert "<p>No agents.</p>" in index_page({"agents": []}).decode()


def test_a_page_is_a_complete_small_document() -> None:
    html = page("T<itle>", ["<b>given as HTML</b>"]).decode()
    assert html.startswith("<!doctype html>")
    assert "<title>T&lt;itle&gt;</title>" in html
    assert "<h1>T&lt;itle&gt;</h1>" in html
    assert "<p><b>given as HTML</b></p>" in html  # paragraphs are the caller's HTML


@pytest.mark.parametrize(
    ("accept", "html"),
    [
        ("text/*, text/html;q=0.95, application/json;q=0.9", True),
        ("text/*, application/json;q=0.1", False),  # a browser always names text/html
        ("text/html;q=0.1, text/*;q=1, application/json;q=0.5", False),
        ("text/html, */*;q=0.9, application/json;q=0.95", True),
        ("TEXT/HTML, application/json;q=0.9", True),
        ("text/html;level=1;q=0.8, application/*;q=0.9", False),
        ("text/html; q=1.0 , application/json ; q=1.0", False),
        ("application/xml, text/plain", False),
    ],
)
def test_the_most_specific_range_decides(accept: str, html: bool) -> None:
    assert prefers_html(accept) is html


@given(st.floats(min_value=0.0, max_value=1.0), st.floats(min_value=0.0, max_value=1.0))
def test_html_wins_exactly_when_ranked_strictly_higher(html_q: float, json_q: float) -> None:
    accept = f"text/html;q={html_q!r}, application/json;q={json_q!r}"
    assert prefers_html(accept) is (html_q > json_q)
