"""Properties of `RedactingFilter` (`parley.server.redaction`) over generated log lines:
no configured secret, credential header value, credential query value or bearer token
survives whatever text surrounds it; redacting twice changes nothing more; a record is
never dropped and its stack text is redacted too (R-OPS-5, R-OPS-13). The hand-picked
cases are tests/auth/test_redaction."""

from __future__ import annotations

import logging
import string

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from parley.server.redaction import HEADERS, MIN_SECRET, PARAMETERS, REDACTED, RedactingFilter

CREDENTIAL = string.ascii_letters + string.digits + "-._~+/"
secrets = st.text(alphabet=string.ascii_letters + string.digits, min_size=8, max_size=24)
tokens = st.text(alphabet=CREDENTIAL, min_size=8, max_size=40).filter(lambda t: t[0].isalnum())
prose = st.text(alphabet=string.ascii_letters + string.digits + " ,.:;()[]{}'\"-_/\n", max_size=40)


def found(secret: str, text: str) -> bool:
    return secret in text


@given(secret=secrets, before=prose, after=prose)
def test_a_configured_secret_never_survives(secret: str, before: str, after: str) -> None:
    text = f"{before}{secret}{after}"
    assert not found(secret, RedactingFilter(secrets=[secret]).redact(text))


@given(secret=st.text(alphabet=string.ascii_letters, min_size=1, max_size=MIN_SECRET - 1))
def test_a_secret_too_short_to_look_for_is_left(secret: str) -> None:
    """A two-letter "secret" would blank out ordinary words: it is not looked for."""
    text = f"value {secret} here"
    assert RedactingFilter(secrets=[secret]).redact(text) == text


ENDS = ["", " ", ",", ")", '"', "\n", ";"]
"""What may follow a token (not a character a token may hold)."""

HEADER_FORMS = [
    "{name}: {value}",
    "{name}:{value}",
    "'{name}': '{value}'",
    '"{name}": "{value}"',
    "(b'{name}', b'{value}')",
    "{{'{name}': '{value}', 'accept': '*/*'}}",
]


@pytest.mark.parametrize("form", HEADER_FORMS)
@pytest.mark.parametrize("name", [*HEADERS, "X-Api-Key", "AUTHORIZATION"])
@settings(max_examples=15)  # x 48 forms and names
@given(value=tokens, before=prose)
def test_a_credential_headers_value_never_survives(
    form: str, name: str, value: str, before: str
) -> None:
    assume(value not in before)
    text = before + " " + form.format(name=name, value=value)
    redacted = RedactingFilter().redact(text)
    assert not found(value, redacted)
    assert REDACTED in redacted


@pytest.mark.parametrize("name", PARAMETERS)
@settings(max_examples=20)
@given(value=tokens)
def test_a_credential_query_values_never_survives(name: str, value: str) -> None:
    text = f"GET /hook?page=2&{name}={value}&x=1 HTTP/1.1"
    redacted = RedactingFilter().redact(text)
    assert redacted == f"GET /hook?page=2&{name}={REDACTED}&x=1 HTTP/1.1"


@given(name=st.sampled_from(["sig_extra", "callback"]), value=tokens)
def test_a_configured_parameter_is_redacted_too(name: str, value: str) -> None:
    assume(value not in name)
    redacted = RedactingFilter(parameters=[name]).redact(f"/x?{name}={value}")
    assert redacted == f"/x?{name}={REDACTED}"


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "Basic"])
@settings(max_examples=50)
@given(token=tokens, before=prose, after=st.tuples(st.sampled_from(ENDS), prose).map("".join))
def test_a_token_after_its_scheme_never_survives(
    scheme: str, token: str, before: str, after: str
) -> None:
    assume(token.lower() not in {"realm", "token", "tokens", "auth", "authentication"})
    assume(token not in before and token not in after)
    text = f"{before} {scheme} {token}{after}"
    assert not found(token, RedactingFilter().redact(text))


@given(
    parts=st.lists(
        st.sampled_from(
            [
                "Authorization: Bearer abc.def-1",
                "?api_key=k-123&q=1",
                "https://u:pw12@h.example/x",
                "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln",
                "ordinary words",
                "cookie, then cake",
                "s3cr3t-literal",
            ]
        ),
        max_size=6,
    )
)
def test_redacting_twice_changes_nothing_more(parts: list[str]) -> None:
    redaction = RedactingFilter(secrets=["s3cr3t-literal"])
    once = redaction.redact(" | ".join(parts))
    assert redaction.redact(once) == once
    assert "s3cr3t-literal" not in once


def test_a_record_is_never_dropped_and_its_stack_text_is_redacted() -> None:
    redaction = RedactingFilter(secrets=["hunter2-secret"])
    record = logging.LogRecord(
        "parley", logging.INFO, __file__, 1, "calling with %s", ("hunter2-secret",), None
    )
    record.stack_info = "Stack (most recent call last):\n  token hunter2-secret"
    assert redaction.filter(record) is True
    assert record.getMessage() == f"calling with {REDACTED}"
    assert record.stack_info == f"Stack (most recent call last):\n  token {REDACTED}"


def test_a_record_with_non_string_arguments_keeps_them() -> None:
    redaction = RedactingFilter(secrets=["hunter2-secret"])
    record = logging.LogRecord(
        "parley", logging.INFO, __file__, 1, "%d tries with hunter2-secret", (3,), None
    )
    assert redaction.filter(record) is True
    assert record.getMessage() == f"3 tries with {REDACTED}"
