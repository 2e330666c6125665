"""`parley serve`'s logging: uvicorn's handlers (the access log on stdout, the rest on
stderr) with a `RedactingFilter` on each, and the root logger on the stderr one at
`--log-level`, so parley's, grpc's, httpx's and asyncio's records pass the same filter.
The filter knows the API key's configured name and the secrets given as options."""

from __future__ import annotations

import argparse
import copy
import logging
import logging.config
import os
from typing import Any

from parley.cli.security import API_KEYS_ENV
from parley.server.redaction import RedactingFilter


def redaction_from(arguments: argparse.Namespace) -> RedactingFilter:
    """A filter that also redacts the `--api-key-name` parameter or header and the literal
    values of `--api-key` (and `$PARLEY_API_KEYS`) and `--push-credentials-key`."""
    name = getattr(arguments, "api_key_name", None) or "X-API-Key"
    pairs = [*getattr(arguments, "api_key", []), *os.environ.get(API_KEYS_ENV, "").split()]
    secrets = [pair.rpartition(":")[0] or pair for each in pairs for pair in each.split(",")]
    secrets += getattr(arguments, "push_credentials_key", None) or []
    return RedactingFilter(parameters=[name], headers=[name], secrets=secrets)


def log_config(arguments: argparse.Namespace) -> dict[str, Any]:
    """uvicorn's logging configuration, each handler filtered, the root logger added."""
    from uvicorn.config import LOG_LEVELS, LOGGING_CONFIG  # noqa: PLC0415 - the server extra

    level = LOG_LEVELS.get(str(arguments.log_level).lower(), logging.INFO)
    config = copy.deepcopy(LOGGING_CONFIG)
    redaction = redaction_from(arguments)
    config["filters"] = {"redact": {"()": lambda: redaction}}
    for handler in config["handlers"].values():
        handler["filters"] = ["redact"]
    config["root"] = {"handlers": ["default"], "level": level}
    config["disable_existing_loggers"] = False
    return config


def configure_logging(arguments: argparse.Namespace) -> None:
    """Apply `log_config` now, for what is logged before uvicorn starts (uvicorn applies
    it again); not when the root logger has handlers already (a program running the
    command in its own process keeps its logging until uvicorn starts)."""
    if not logging.getLogger().handlers:
        logging.config.dictConfig(log_config(arguments))
