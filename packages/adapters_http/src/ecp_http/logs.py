"""Structured logs: one JSON object per line on stderr, tied to the request by its id.

:func:`configure` installs one handler on the root logger (``ecp serve`` calls it once; an
embedding program may call it too). Every line has ``ts`` (RFC 3339, UTC), ``level`` and
``event``; the request id comes from a context variable set by the request middleware, and
``tenant_id``, ``run_id``, ``node_id``, ``delivery_id``, ``task_id`` and other facts come from the
call's ``extra=``.
"""

import contextvars
import json
import logging
import sys
import traceback
from datetime import UTC, datetime
from typing import IO, Any

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "ecp_request_id", default=None
)
"""The id of the request being served (None outside a request)."""

FORMATS = ("json", "console")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# Attributes every LogRecord has; anything else on a record came from ``extra=`` (except
# uvicorn's ``color_message``, the same message with terminal colour codes).
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}
_MARK = "_ecp_handler"
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=True)
"""One encoder for every line (``json.dumps`` with options builds one per call)."""


def _facts(record: logging.LogRecord) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    current = request_id.get()
    if current is not None:
        facts["request_id"] = current
    facts.update(
        (name, value)
        for name, value in record.__dict__.items()
        if name not in _STANDARD and not name.startswith("_")
    )
    return facts


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON: ``ts``, ``level``, ``event``, ``logger``, then the facts."""

    def format(self, record: logging.LogRecord) -> str:
        """Render ``record``; an exception becomes ``error`` and a one-string ``traceback``."""
        line: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "event": record.getMessage(),
            "logger": record.name,
            **_facts(record),
        }
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            line["error"] = f"{type(error).__name__}: {error}"
            line["traceback"] = "".join(traceback.format_exception(error)).rstrip()
        return _ENCODER.encode(line)


class ConsoleFormatter(logging.Formatter):
    """A record for a person at a terminal: time, level, event, then ``key=value`` facts."""

    def format(self, record: logging.LogRecord) -> str:
        """Render ``record``; an exception's traceback follows on its own lines."""
        facts = " ".join(f"{name}={value}" for name, value in _facts(record).items())
        text = f"{_timestamp(record)} {record.levelname:<7} {record.getMessage()}"
        text = f"{text}  {facts}" if facts else text
        if record.exc_info and record.exc_info[1] is not None:
            text += "\n" + "".join(traceback.format_exception(record.exc_info[1])).rstrip()
        return text


def default_format(stream: IO[str]) -> str:
    """``console`` when ``stream`` is a terminal, else ``json``."""
    isatty = getattr(stream, "isatty", None)
    return "console" if isatty is not None and isatty() else "json"


def configure(
    log_format: str | None = None, level: str = "INFO", stream: IO[str] | None = None
) -> logging.Handler:
    """Send every logger's lines to ``stream`` (stderr) in one format; calling again replaces.

    ``log_format`` None picks :func:`default_format`. Returns the installed handler.
    """
    stream = sys.stderr if stream is None else stream
    chosen = log_format or default_format(stream)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if chosen == "json" else ConsoleFormatter())
    setattr(handler, _MARK, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        # uvicorn's own lines go through the same handler (log_config=None leaves them bare).
        uvicorn_logger = logging.getLogger(name)
        uvicorn_logger.handlers.clear()
        uvicorn_logger.propagate = True
    return handler
