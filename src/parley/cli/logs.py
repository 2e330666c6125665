"""`parley serve`'s logging: `--log-level` and `--log-format`. uvicorn's handlers (the
access log on stdout, the rest on stderr), each with a `RedactingFilter`, and the root
logger on the stderr one at `--log-level`, so that Parley's own records (where it serves,
where tasks are stored, an agent's failure and its traceback), and grpc's, httpx's and
asyncio's, get the same level, time stamp and filter. The filter knows the API key's
configured name and the secrets given as options. Every part of the configuration is
importable by name, so that `--reload` can hand it to the process it starts."""

from __future__ import annotations

import argparse
import copy
import logging
import logging.config
import os
from typing import Any

from parley.cli.security import API_KEYS_ENV
from parley.server.redaction import RedactingFilter

LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelprefix)s %(message)s"
ACCESS_FORMAT = '%(asctime)s %(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s'
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"


def add_log_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-level",
        default="info",
        type=str.lower,
        choices=LEVELS,
        help="the least severe records logged, Parley's and the server's (default info)",
    )
    parser.add_argument(
        "--log-format",
        default="text",
        choices=FORMATS,
        help="text lines (default), or one JSON object a line with the task id, context id "
        "and, with OpenTelemetry, trace id",
    )


def redaction_options(arguments: argparse.Namespace) -> dict[str, list[str]]:
    """A `RedactingFilter`'s arguments: also the `--api-key-name` parameter or header and
    the literal values of `--api-key` (and `$PARLEY_API_KEYS`) and
    `--push-credentials-key`."""
    name = getattr(arguments, "api_key_name", None) or "X-API-Key"
    given = getattr(arguments, "api_key", None) or []
    pairs = [*given, *os.environ.get(API_KEYS_ENV, "").split()]
    secrets = [pair.rpartition(":")[0] or pair for each in pairs for pair in each.split(",")]
    secrets += getattr(arguments, "push_credentials_key", None) or []
    return {"parameters": [name], "headers": [name], "secrets": secrets}


def log_config(arguments: argparse.Namespace) -> dict[str, Any]:
    """uvicorn's logging configuration, time-stamped or JSON, each handler filtered, the
    root and `parley` loggers at `--log-level`."""
    from uvicorn.config import LOG_LEVELS, LOGGING_CONFIG  # noqa: PLC0415 - the server extra

    level = LOG_LEVELS.get(str(arguments.log_level).lower(), logging.INFO)
    config = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"redact": {"()": RedactingFilter, **redaction_options(arguments)}}
    for handler in config["handlers"].values():
        handler["filters"] = ["redact"]
    if getattr(arguments, "log_format", "text") == "json":
        for formatter in config["formatters"].values():
            formatter.clear()
            formatter["()"] = "parley.cli.log_format.JsonFormatter"
    else:
        config["formatters"]["default"].update(fmt=TEXT_FORMAT, datefmt=DATE_FORMAT)
        config["formatters"]["access"].update(fmt=ACCESS_FORMAT, datefmt=DATE_FORMAT)
    config["root"] = {"handlers": ["default"], "level": level}
    config["loggers"]["parley"] = {"level": level}
    config["loggers"]["watchfiles"] = {"level": max(level, logging.WARNING)}  # (--reload)
    config["disable_existing_loggers"] = False
    return config


def configure_logging(arguments: argparse.Namespace) -> None:
    """Apply `log_config` now, for what is logged before uvicorn starts (uvicorn applies
    it again); not when the root logger has handlers already (a program running the
    command in its own process keeps its logging until uvicorn starts)."""
    if not logging.getLogger().handlers:
        logging.config.dictConfig(log_config(arguments))
