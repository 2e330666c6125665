"""What a request must show before a binding reads it (`parley.asgi.guard`), check by
check: the media types taken as JSON (parameters and case included), the 415 that names
what would be accepted (RFC 9110 §15.5.16), the cross-site refusal, and how Host values
and configured host names are compared (ports, IPv6 brackets, case). The app-level
behaviour is in test_browser_safety."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from parley.asgi.guard import (
    JSON_MEDIA_TYPES,
    Refused,
    allowed_host_names,
    check_content_type,
    check_host,
    check_site,
    check_untyped_body,
    host_name,
    media_type,
    without_port,
)
from parley.protocol.errors import ContentTypeNotSupportedError, InvalidRequestError

ACCEPT = ("Accept", "application/a2a+json, application/json")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("application/json", "application/json"),
        ("Application/JSON; charset=utf-8", "application/json"),
        ("  application/a2a+json ;charset=UTF-8", "application/a2a+json"),
        ("text/plain", "text/plain"),
        ("", ""),
    ],
)
def test_media_type_drops_parameters_and_case(value: str, expected: str) -> None:
    assert media_type(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "application/json",
        "application/a2a+json",
        "application/json; charset=utf-8",
        "APPLICATION/A2A+JSON",
        'application/json;charset="utf-8"',
    ],
)
def test_json_bodies_pass(value: str) -> None:
    check_content_type({"content-type": value})


def test_no_content_type_passes_the_early_check() -> None:
    """Whether a body is there is known only once read: `check_untyped_body` decides."""
    check_content_type({})


@pytest.mark.parametrize(
    "value",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonp",
        "application/json-seq",
        "text/json",
        "",
    ],
)
def test_other_bodies_are_refused_with_415_naming_the_accepted_types(value: str) -> None:
    """The bodies a page can send cross-site without a preflight never reach a binding."""
    with pytest.raises(Refused) as caught:
        check_content_type({"content-type": value})
    refused = caught.value
    assert refused.status == 415
    assert isinstance(refused.error, ContentTypeNotSupportedError)
    assert refused.error.metadata == {"contentType": value}
    assert refused.headers == (ACCEPT,)
    assert str(refused) == refused.error.message


def test_a_long_refused_value_is_shown_cut() -> None:
    value = "text/" + "x" * 500
    with pytest.raises(Refused) as caught:
        check_content_type({"content-type": value})
    assert caught.value.error.metadata["contentType"] == value[:100]
    assert "x" * 101 not in caught.value.error.message


def test_an_untyped_body_is_refused_but_an_empty_one_is_not() -> None:
    check_untyped_body({}, b"")
    check_untyped_body({"content-type": "application/json"}, b"{}")
    with pytest.raises(Refused) as caught:
        check_untyped_body({}, b"{}")
    assert caught.value.status == 415
    assert caught.value.headers == (ACCEPT,)


@pytest.mark.parametrize("site", [None, "same-origin", "same-site", "none"])
def test_requests_that_are_not_cross_site_pass(site: str | None) -> None:
    check_site({} if site is None else {"sec-fetch-site": site})


def test_a_cross_site_request_is_forbidden() -> None:
    with pytest.raises(Refused) as caught:
        check_site({"sec-fetch-site": "cross-site"})
    assert caught.value.status == 403
    assert isinstance(caught.value.error, InvalidRequestError)
    assert caught.value.headers == ()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("localhost:8000", "localhost"),
        ("localhost", "localhost"),
        ("[::1]:8000", "[::1]"),
        ("[::1]", "[::1]"),
        ("example.com:", "example.com:"),
        ("example.com:http", "example.com:http"),
        ("", ""),
    ],
)
def test_without_port_cuts_only_a_numeric_port(value: str, expected: str) -> None:
    assert without_port(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Example.COM", "example.com"),
        (" example.com:443 ", "example.com"),
        ("::1", "[::1]"),
        ("[::1]:80", "[::1]"),
        ("fe80::1", "[fe80::1]"),
        ("127.0.0.1:9", "127.0.0.1"),
    ],
)
def test_configured_names_are_compared_as_requests_are(value: str, expected: str) -> None:
    assert host_name(value) == expected


@pytest.mark.parametrize("hosts", [None, ["*"], ["a.example", "*"], [" * "]])
def test_any_host_is_answered_without_a_list_or_with_a_star(hosts: list[str] | None) -> None:
    assert allowed_host_names(hosts) is None


def test_a_single_string_is_one_name() -> None:
    assert allowed_host_names("localhost") == frozenset({"localhost"})


@pytest.mark.parametrize("hosts", [[], [""], ["  ", ""]])
def test_an_empty_list_is_a_configuration_error(hosts: list[str]) -> None:
    with pytest.raises(ValueError, match="at least one host"):
        allowed_host_names(hosts)


def test_blank_entries_beside_names_are_dropped() -> None:
    assert allowed_host_names(["", "A.example:80"]) == frozenset({"a.example"})


ALLOWED = frozenset({"localhost", "[::1]", "agent.example"})


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8000", "[::1]:9", "agent.example", "AGENT.example:443"]
)
def test_hosts_the_app_answers_to_pass(host: str) -> None:
    check_host({"host": host}, ALLOWED)


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8000", "localhost.evil.example", "[::2]", ""]
)
def test_other_hosts_are_refused_with_400_naming_the_host(host: str) -> None:
    """DNS rebinding: a page's own name resolving to 127.0.0.1 shows in the Host header."""
    headers = {"host": host} if host else {}
    with pytest.raises(Refused) as caught:
        check_host(headers, ALLOWED)
    assert caught.value.status == 400
    assert isinstance(caught.value.error, InvalidRequestError)
    assert caught.value.error.metadata == {"host": host}
    assert "--allowed-host" in caught.value.error.message


def test_without_a_list_every_host_passes() -> None:
    check_host({"host": "anything.example"}, None)
    check_host({}, None)


@given(st.sampled_from(sorted(JSON_MEDIA_TYPES)), st.text(max_size=20))
def test_any_parameters_after_a_json_type_pass(kind: str, parameters: str) -> None:
    check_content_type({"content-type": f"{kind};{parameters}"})


@given(st.text(min_size=1, max_size=30))
def test_a_value_whose_type_is_not_json_is_refused(value: str) -> None:
    assume(media_type(value) not in JSON_MEDIA_TYPES)
    with pytest.raises(Refused):
        check_content_type({"content-type": value})
