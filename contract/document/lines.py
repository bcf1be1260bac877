"""Where each table and key of a contract document is written: contract locations (`region[2].mode`) -> lines.

tomllib drops positions, so a small scanner walks the text the way TOML reads it (comments, basic and literal strings,
multi-line strings, arrays spanning lines) and records every table header and key. Used to point a finding's
contract-key location at its line (SARIF) and by `compile-contract init --update` to edit single keys in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contract.document.load import format_loc

_HEADER = re.compile(r"^\s*(\[\[?)")


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One table header or key as written."""

    loc: str
    """Contract location, as findings name it (`region[1]`, `region[1].mode`, `cache.dir`)."""
    line: int
    """1-based line where it starts."""
    end: int
    """1-based line where its value ends (the header's own line for a table)."""
    table: str
    """Location of the table it belongs to (`""` for keys before any header)."""


def entries(text: str) -> list[Entry]:
    """Every table header and key of the document, in order (a syntax error stops the scan where it is)."""
    out: list[Entry] = []
    counts: dict[str, int] = {}
    table = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        head = _HEADER.match(line)
        if head:
            table = _header(line, head.group(1) == "[[", counts)
            if table:
                out.append(Entry(loc=table, line=i + 1, end=i + 1, table=table))
            i += 1
            continue
        key = _key(line)
        end = _value_end(lines, i, line.find("=") + 1) if key else i
        if key:
            loc = _join(table, key) if table else format_loc(key)
            out.append(Entry(loc=loc, line=i + 1, end=end + 1, table=table))
        i = end + 1
    return out


def line_of(text: str, loc: str) -> int | None:
    """The line a contract location is written on: the key itself, else its closest enclosing key or table."""
    found = {e.loc: e.line for e in entries(text)}
    while loc:
        if loc in found:
            return found[loc]
        loc = parent(loc)
    return None


def _join(table: str, key: tuple[str, ...]) -> str:
    """`region[1]` + ("options", "a.b") -> `region[1].options."a.b"`."""
    return table + "." + format_loc(key)


def parent(loc: str) -> str:
    """`region[1].options."a.b"` -> `region[1].options` -> `region[1]` -> `region` -> ``."""
    if loc.endswith("]") and "[" in loc:
        return loc[: loc.rindex("[")]
    depth_quote = False
    for i in range(len(loc) - 1, -1, -1):
        ch = loc[i]
        if ch == '"':
            depth_quote = not depth_quote
        elif ch == "." and not depth_quote:
            return loc[:i]
    return ""


def _header(line: str, array: bool, counts: dict[str, int]) -> str:
    """The location a `[table]` / `[[array]]` header opens; array entries are numbered in document order."""
    body = line.strip()
    close = "]]" if array else "]"
    inner = body[2:] if array else body[1:]
    end = _find_outside_strings(inner, close)
    if end is None:
        return ""
    parts = _split_key(inner[:end])
    if not parts:
        return ""
    name = format_loc(tuple(parts))
    if not array:
        return name
    index = counts.get(name, 0)
    counts[name] = index + 1
    return f"{name}[{index}]"


def _key(line: str) -> tuple[str, ...] | None:
    """The dotted key of a `key = value` line (None for blank, comment and other lines)."""
    stripped = line.lstrip()
    if not stripped or stripped[0] in "#[":
        return None
    eq = _find_outside_strings(stripped, "=")
    if eq is None:
        return None
    parts = _split_key(stripped[:eq])
    return tuple(parts) if parts else None


def _split_key(text: str) -> list[str]:
    """`a."b.c".d` -> ["a", "b.c", "d"] (bare and quoted parts; whitespace around dots allowed)."""
    parts: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or ch == ".":
            i += 1
        elif ch in "\"'":
            end = _string_end(text, i)
            if end is None:
                return []
            raw = text[i + 1 : end - 1]
            parts.append(_unescape(raw) if ch == '"' else raw)
            i = end
        else:
            m = re.match(r"[A-Za-z0-9_-]+", text[i:])
            if not m:
                return []
            parts.append(m.group())
            i += m.end()
    return parts


def _unescape(raw: str) -> str:
    """Basic-string escapes that matter in key names."""
    return raw.replace('\\"', '"').replace("\\\\", "\\")


def _string_end(text: str, start: int) -> int | None:
    """Index just past the one-line string opening at `start` (None when it does not close on this line)."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        if quote == '"' and text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return None


def _find_outside_strings(text: str, target: str) -> int | None:
    """Index of `target` outside strings and before a comment."""
    i = 0
    while i < len(text):
        if text.startswith(target, i):
            return i
        ch = text[i]
        if ch == "#":
            return None
        if ch in "\"'":
            end = _string_end(text, i)
            if end is None:
                return None
            i = end
            continue
        i += 1
    return None


def _value_end(lines: list[str], start: int, col: int) -> int:
    """Index of the line where the value starting at (start, col) ends: arrays and multi-line strings span lines."""
    depth = 0
    i, pos = start, col
    while i < len(lines):
        text = lines[i]
        while pos < len(text):
            ch = text[pos]
            if text.startswith('"""', pos) or text.startswith("'''", pos):
                i, pos = _multiline_end(lines, i, pos)
                text = lines[i] if i < len(lines) else ""
                continue
            if ch in "\"'":
                pos = _string_end(text, pos) or len(text)
                continue
            if ch == "#":
                break
            if ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
            pos += 1
        if depth <= 0 or i >= len(lines) - 1:
            return min(i, len(lines) - 1)
        i, pos = i + 1, 0
    return len(lines) - 1


def _multiline_end(lines: list[str], i: int, pos: int) -> tuple[int, int]:
    """(line, column) just past the multi-line string opening at (i, pos)."""
    delim = lines[i][pos : pos + 3]
    pos += 3
    while i < len(lines):
        text = lines[i]
        while pos < len(text):
            if delim == '"""' and text[pos] == "\\":
                pos += 2
                continue
            if text.startswith(delim, pos):
                end = pos + 3
                while end < len(text) and text[end] == delim[0]:  # up to two quotes may close the content
                    end += 1
                return i, end
            pos += 1
        i, pos = i + 1, 0
    return len(lines) - 1, len(lines[-1]) if lines else 0
