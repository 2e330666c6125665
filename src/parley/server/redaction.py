"""Secrets kept out of logs: `RedactingFilter`, a `logging.Filter` for handlers, rewrites a
record's message (and its traceback text) with every credential it finds replaced by
`[redacted]`: the values of credential-bearing query parameters (`?api_key=…`), of
credential headers written as `name: value` or inside a headers dict or list
(`Authorization`, `Cookie`, an API key's header), `Bearer …` and `Basic …` tokens,
JWT-shaped strings, the password of a URL's userinfo, and the literal secrets the filter
is given (e.g. the configured API keys).

A record nothing could match is left alone after a few substring tests of its message
(each pattern runs only when a substring it needs is there); a redacted record keeps its
arguments when redacting each one gives the same text (uvicorn's access log formats from
them), else its message becomes the redacted text.

    handler.addFilter(RedactingFilter(parameters=["sig"], secrets=[api_key]))
    install_redaction()  # on each handler of the root logger
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterable

REDACTED = "[redacted]"

PARAMETERS = (
    "api_key",
    "api-key",
    "apikey",
    "x-api-key",
    "key",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "password",
    "passwd",
    "secret",
    "client_secret",
    "sig",
    "signature",
    "code",
)
"""Query parameters whose values are redacted (names compare without case)."""
HEADERS = (
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "x-a2a-notification-token",
)
"""Headers whose values are redacted (names compare without case)."""
MIN_SECRET = 4
"""A literal secret shorter than this is not looked for (it would match ordinary text)."""

_CREDENTIAL = r"[A-Za-z0-9\-._~+/]+=*"
_SCHEMES = re.compile(
    rf"\b(Bearer|Basic|bearer|basic|BEARER|BASIC)(\s+)"
    rf"(?!(?:realm|token|tokens|TOKEN|auth|authentication|credentials)\b){_CREDENTIAL}"
)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/@:]*:)[^\s/@]+@")


def _names(names: Iterable[str]) -> str:
    unique = sorted({name.lower() for name in names if name}, key=len, reverse=True)
    return "|".join(re.escape(name) for name in unique)


class RedactingFilter(logging.Filter):
    """Redacts credentials in the records it sees (never drops one). `parameters` and
    `headers` add names to `PARAMETERS` and `HEADERS` (an API key's configured name goes
    in both); `secrets` are literal values redacted wherever they appear."""

    def __init__(
        self,
        *,
        parameters: Iterable[str] = (),
        headers: Iterable[str] = (),
        secrets: Iterable[str] = (),
    ) -> None:
        super().__init__()
        parameter_names = _names([*PARAMETERS, *parameters])
        header_names = _names([*HEADERS, *headers])
        literal = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
        self._query = re.compile(rf"(?i)([?&;](?:{parameter_names})=)[^&;#\s\"'<>]*")
        self._header = re.compile(
            rf"(?i)\b({header_names})(['\"]?\s*(?:[:=]|,)\s*b?)"
            r"(?:(['\"])(.*?)\3|([^\r\n]*))"
        )
        self._literal = re.compile("|".join(map(re.escape, literal))) if literal else None
        self._secrets = tuple(secret.lower() for secret in literal)
        self._headers = tuple({name.lower() for name in (*HEADERS, *headers) if name})

    def redact(self, text: str) -> str:
        """`text` with every credential found replaced by `[redacted]`. Each pattern runs
        only when a substring it needs is there: most records cost a few `in` tests."""
        low = text.lower()
        query = "=" in text and ("?" in text or "&" in text or ";" in text)
        header = any(name in low for name in self._headers)
        schemes = "bearer" in low or "basic" in low
        jwt = "eyJ" in text
        userinfo = "@" in text and "://" in text
        literal = any(secret in low for secret in self._secrets)
        if not (query or header or schemes or jwt or userinfo or literal):
            return text
        if literal and self._literal is not None:
            text = self._literal.sub(REDACTED, text)
        if header:
            text = self._header.sub(_header_value, text)
        if query:
            text = self._query.sub(rf"\1{REDACTED}", text)
        if schemes:
            text = _SCHEMES.sub(rf"\1\2{REDACTED}", text)
        if jwt:
            text = _JWT.sub(REDACTED, text)
        return _USERINFO.sub(rf"\1{REDACTED}@", text) if userinfo else text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = self.redact(message)
        if redacted != message:
            self._rewrite(record, redacted)
        if record.exc_info and not record.exc_text:
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True

    def _rewrite(self, record: logging.LogRecord, redacted: str) -> None:
        record.__dict__.pop("color_message", None)  # uvicorn's coloured copy of the message
        args = record.args
        if isinstance(args, tuple) and args:
            each = tuple(self.redact(a) if isinstance(a, str) else a for a in args)
            try:
                same = str(record.msg) % each == redacted
            except (TypeError, ValueError):
                same = False
            if same:
                record.args = each
                return
        record.msg, record.args = redacted, None


def _header_value(match: re.Match[str]) -> str:
    name, separator, quote, quoted, bare = match.groups()
    if quote is not None:
        return f"{name}{separator}{quote}{_scheme_kept(quoted)}{quote}"
    if ":" not in separator or not bare.strip():  # `name=value`: a query parameter
        return match.group(0)
    return f"{name}{separator}{_scheme_kept(bare)}"


def _scheme_kept(value: str) -> str:
    """`Bearer [redacted]` for a credential with its scheme, else `[redacted]`."""
    scheme, space, rest = value.strip().partition(" ")
    if space and rest and scheme.isalpha() and len(scheme) <= 16:
        return f"{scheme} {REDACTED}"
    return REDACTED


def install_redaction(
    logger: logging.Logger | None = None, redaction: RedactingFilter | None = None
) -> RedactingFilter:
    """Add `redaction` (default: a `RedactingFilter()`) to each handler of `logger`
    (default: the root logger), and return it. Records of every logger that propagates
    to those handlers pass through it; a handler added later needs its own `addFilter`."""
    redaction = redaction or RedactingFilter()
    for handler in (logger or logging.getLogger()).handlers:
        if redaction not in handler.filters:
            handler.addFilter(redaction)
    return redaction


__all__ = ["HEADERS", "PARAMETERS", "REDACTED", "RedactingFilter", "install_redaction"]
