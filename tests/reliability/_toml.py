"""A small TOML writer for generated documents (tomli_w is not a dependency): enough for fuzzing the loader."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def key(name: str) -> str:
    """A bare key when possible, else a quoted one."""
    return name if _BARE.match(name) else string(name)


def string(text: str) -> str:
    """A TOML basic string (JSON escapes are TOML escapes; DEL must be escaped too)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def value(v: Any) -> str:
    """An inline TOML value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v).__name__)


def table_body(table: dict[str, Any]) -> str:
    """`key = value` lines of one table."""
    return "".join(f"{key(k)} = {value(v)}\n" for k, v in table.items())


def document(doc: dict[str, Any]) -> str:
    """Top-level scalars first, then `[table]`s, then `[[array]]`s of tables (inline for other shapes)."""
    head, tables = [], []
    for name, v in doc.items():
        if isinstance(v, dict):
            tables.append(f"[{key(name)}]\n{table_body(v)}")
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            tables.extend(f"[[{key(name)}]]\n{table_body(x)}" for x in v)
        else:
            head.append(f"{key(name)} = {value(v)}\n")
    return "".join(head) + "\n".join(tables)
