"""structlog setup for the monitor: JSON off a TTY, console on one, routed through stdlib `logging`."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO

import structlog

LOGGER_NAME = "torch_compile_contract.monitor"
"""The stdlib logger every monitor event goes through (route or silence it like any other logger)."""
_RANK_ENV = (("rank", "RANK"), ("local_rank", "LOCAL_RANK"), ("world_size", "WORLD_SIZE"))


def rank_fields(environ: Mapping[str, str] | None = None) -> dict[str, int]:
    """rank, local_rank, world_size from torchrun's environment, only those that are set and numeric."""
    env = os.environ if environ is None else environ
    return {key: int(env[var]) for key, var in _RANK_ENV if env.get(var, "").strip().lstrip("-").isdigit()}


def renderer(fmt: str, stream: TextIO) -> Any:
    """JSON for `json` (and `auto` off a TTY), colourless console for `console` (and `auto` on a TTY)."""
    tty = fmt == "console" or (fmt == "auto" and hasattr(stream, "isatty") and stream.isatty())
    return structlog.dev.ConsoleRenderer(colors=False) if tty else structlog.processors.JSONRenderer(sort_keys=False)


class FallbackHandler(logging.StreamHandler):
    """Writes monitor events only while the application has no root handler; once it configures logging (even after
    the monitor started), events reach it by propagation instead, never twice."""

    def emit(self, record: logging.LogRecord) -> None:
        if not logging.getLogger().handlers:
            super().emit(record)


def make_logger(fmt: str = "auto", *, stream: TextIO | None = None, environ: Mapping[str, str] | None = None) -> Any:
    """A structlog logger bound to rank fields, writing through stdlib logger `torch_compile_contract.monitor`."""
    stream = stream or sys.stderr
    std = logging.getLogger(LOGGER_NAME)
    if not std.handlers:
        handler = FallbackHandler(stream)
        handler.setFormatter(logging.Formatter("%(message)s"))
        std.addHandler(handler)
    if std.level == logging.NOTSET:
        std.setLevel(logging.INFO)
    processors = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        renderer(fmt, stream),
    ]
    log = structlog.wrap_logger(std, processors=processors, wrapper_class=structlog.stdlib.BoundLogger)
    return log.bind(**rank_fields(environ))
