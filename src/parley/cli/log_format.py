"""`parley serve --log-format json`: one JSON object per log line, with the time, level,
logger and message, the ids of the task being worked on (`parley.server.log_context`),
the OpenTelemetry trace and span ids when the `opentelemetry` API is installed and a span
is recording, the traceback if any, and an access line's request. A field that is not
known is left out.

    {"time": "2026-01-05T10:00:00.123Z", "level": "ERROR", "logger": "parley.server.runner",
     "message": "agent failed on task 7c1…", "task_id": "7c1…", "context_id": "a90…",
     "exception": "Traceback …"}
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from parley.server.log_context import current_task

TraceIds = Callable[[], "tuple[str, str] | None"]


def _otel_ids() -> TraceIds | None:
    """A reader of the current span's (trace id, span id), or None without the API."""
    try:
        from opentelemetry import trace  # noqa: PLC0415 - optional: the telemetry extra
    except ImportError:
        return None

    def ids() -> tuple[str, str] | None:
        span = trace.get_current_span()
        context = span.get_span_context()
        if not span.is_recording() or not context.is_valid:
            return None
        return format(context.trace_id, "032x"), format(context.span_id, "016x")

    return ids


class JsonFormatter(logging.Formatter):
    """Formats a record as one line of JSON (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()  # uvicorn's fmt and use_colors do not apply
        self._trace_ids = _otel_ids()

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _utc(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        task = current_task() or (None, None)
        task_id = getattr(record, "task_id", None) or task[0]
        context_id = getattr(record, "context_id", None) or task[1]
        if task_id:
            line["task_id"] = task_id
        if context_id:
            line["context_id"] = context_id
        trace = self._trace_ids() if self._trace_ids is not None else None
        if trace is not None:
            line["trace_id"], line["span_id"] = trace
        if record.name == "uvicorn.access" and isinstance(record.args, tuple):
            line.update(_access(record.args))
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = record.stack_info
        return json.dumps(line, ensure_ascii=False, default=str)


def _utc(record: logging.LogRecord) -> str:
    when = datetime.fromtimestamp(record.created, UTC)
    return f"{when:%Y-%m-%dT%H:%M:%S}.{int(record.msecs):03d}Z"


def _access(args: tuple[Any, ...]) -> dict[str, Any]:
    """uvicorn's access record: (client, method, path, HTTP version, status)."""
    if len(args) != 5:
        return {}
    client, method, path, _version, status = args
    return {"client": client, "method": method, "path": path, "status": status}
