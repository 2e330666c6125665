"""`RedactingFilter`: what it redacts in a record's message, arguments and traceback,
what it leaves alone, and `parley serve`'s logging configuration built around it."""

from __future__ import annotations

import io
import logging
import sys

import pytest
from uvicorn.logging import AccessFormatter

from parley.cli.logs import log_config, redaction_options
from parley.cli.main import build_parser
from parley.server.redaction import REDACTED, RedactingFilter, install_redaction

JWT = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.MEUCIQDsignature-part_x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("GET /x?api_key=k-1&page=2 HTTP/1.1", "GET /x?api_key=[redacted]&page=2 HTTP/1.1"),
        ("/cb?CODE=abc;state=s", "/cb?CODE=[redacted];state=s"),
        ("/?access_token=t1&id_token=t2", "/?access_token=[redacted]&id_token=[redacted]"),
        ("/?Sig=abc&Signature=def", "/?Sig=[redacted]&Signature=[redacted]"),
        ("/?password=p&client_secret=s", "/?password=[redacted]&client_secret=[redacted]"),
        ("Authorization: Bearer abc.def\r\nHost: x", "Authorization: Bearer [redacted]\r\nHost: x"),
        ("proxy-authorization: Basic dXNlcjpw", "proxy-authorization: Basic [redacted]"),
        ("{'Cookie': 'sid=1; theme=dark'}", "{'Cookie': '[redacted]'}"),
        ('{"set-cookie": "sid=9"}', '{"set-cookie": "[redacted]"}'),
        ("[(b'x-api-key', b'k-2'), (b'a', b'b')]", "[(b'x-api-key', b'[redacted]'), (b'a', b'b')]"),
        ("X-A2A-Notification-Token: tok", "X-A2A-Notification-Token: [redacted]"),
        ("sent Bearer s3cr3t-Token to", "sent Bearer [redacted] to"),
        ("got Basic dXNlcjpwYXNz=", "got Basic [redacted]"),
        (f"token {JWT} refused", "token [redacted] refused"),
        ("https://user:pa55@hooks.example.com/h", "https://user:[redacted]@hooks.example.com/h"),
    ],
)  # fmt: skip
def test_credentials_are_redacted(text: str, expected: str) -> None:
    assert RedactingFilter().redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        '127.0.0.1:5000 - "POST /v1/message:send HTTP/1.1" 200',
        "The bearer token is not valid",
        "Malformed Authorization header: expected 'Bearer TOKEN'",
        'Bearer realm="a2a", error="invalid_token"',
        "tasks are stored in postgresql://agents@db.internal:5432/agents",
        "/tasks?pageSize=10&status=working",
        "Anything else?",
        "cookie, then cake",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert RedactingFilter().redact(text) == text


def test_configured_names_and_literal_secrets() -> None:
    redaction = RedactingFilter(
        parameters=["session"], headers=["X-Tenant-Key"], secrets=["k-live-91ab", "x"]
    )
    assert redaction.redact("/?SESSION=abc") == "/?SESSION=[redacted]"
    assert redaction.redact("x-tenant-key: abc") == "x-tenant-key: [redacted]"
    assert redaction.redact("echoed k-live-91ab back") == "echoed [redacted] back"
    assert redaction.redact("x marks it") == "x marks it"  # too short to look for


def _record(msg: str, *args: object, exc: bool = False) -> logging.LogRecord:
    info = None
    if exc:
        try:
            raise ValueError(f"bad header Authorization: Bearer {JWT}")
        except ValueError:
            info = sys.exc_info()
    return logging.LogRecord("t", logging.INFO, __file__, 1, msg, args or None, info)


def test_an_access_record_keeps_its_arguments_for_uvicorns_formatter() -> None:
    record = _record('%s - "%s %s HTTP/%s" %d', "1.2.3.4:5", "GET", "/?api_key=k", "1.1", 200)
    assert RedactingFilter().filter(record)
    assert record.args == ("1.2.3.4:5", "GET", f"/?api_key={REDACTED}", "1.1", 200)
    formatted = AccessFormatter("%(client_addr)s %(request_line)s", use_colors=False)
    assert formatted.format(record) == f"1.2.3.4:5 GET /?api_key={REDACTED} HTTP/1.1"


def test_a_secret_split_between_format_and_arguments_becomes_the_message() -> None:
    record = _record("Authorization: %s", "abc")
    record.color_message = "Authorization: %s"
    RedactingFilter().filter(record)
    assert (record.getMessage(), record.args) == ("Authorization: [redacted]", None)
    assert "color_message" not in record.__dict__


def test_a_clean_record_is_untouched_and_a_traceback_is_redacted() -> None:
    record = _record("%s sent %d messages", "alice", 3)
    RedactingFilter().filter(record)
    assert (record.msg, record.args) == ("%s sent %d messages", ("alice", 3))
    failed = _record("request failed", exc=True)
    RedactingFilter().filter(failed)
    assert failed.exc_text is not None
    assert "ValueError: bad header Authorization: Bearer [redacted]" in failed.exc_text
    assert JWT not in logging.Formatter().format(failed)


def test_install_redaction_filters_every_handler_of_a_logger() -> None:
    logger = logging.getLogger("tests.redaction")
    logger.propagate = False
    stream = io.StringIO()
    logger.addHandler(logging.StreamHandler(stream))
    try:
        redaction = install_redaction(logger)
        assert install_redaction(logger, redaction) is redaction  # once per handler
        assert logger.handlers[0].filters == [redaction]
        logger.warning("calling %s", f"https://a.example/?token={JWT}")
        logger.warning("with %r", {"authorization": "Bearer abcdef"})
    finally:
        logger.handlers.clear()
    assert stream.getvalue().splitlines() == [
        "calling https://a.example/?token=[redacted]",
        "with {'authorization': 'Bearer [redacted]'}",
    ]


def test_serves_configuration_filters_each_handler_and_the_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PARLEY_API_KEYS", "env-key-1:bob,env-key-2:carol")
    arguments = build_parser().parse_args(
        ["serve", "examples.echo:agent", "--api-key", "flag-key:alice", "--api-key-name", "k"]
    )
    arguments.log_level = "debug"
    config = log_config(arguments)
    assert all(h["filters"] == ["redact"] for h in config["handlers"].values())
    assert config["root"] == {"handlers": ["default"], "level": logging.DEBUG}
    assert config["disable_existing_loggers"] is False
    redaction = RedactingFilter(**redaction_options(arguments))
    text = "flag-key env-key-1 env-key-2 /?k=v"
    assert redaction.redact(text) == "[redacted] [redacted] [redacted] /?k=[redacted]"
