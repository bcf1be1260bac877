"""Comments: wrap text into `# ` lines, and place each checker finding next to the table it concerns."""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Iterable

from contract.findings import Finding

WIDTH = 118
_REGION_INDEX = re.compile(r"^region\[(\d+)\]")
_REGION_NAMED = re.compile(r"\bregion '([^']+)'")
_SECTIONS = {"contract": "contract", "defaults": "defaults", "cache": "cache", "probe": "probe", "monitor": "monitor"}


def comment(text: str, *, indent: str = "", first: str = "") -> list[str]:
    """`text` as `# ` lines of at most WIDTH characters (the first indented by `first`, the others by `indent`)."""
    wrapped = textwrap.wrap(
        " ".join(text.split()),
        width=WIDTH - 2,
        initial_indent=first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [f"# {line}".rstrip() for line in wrapped] or ["#"]


def finding_lines(f: Finding) -> list[str]:
    """A finding as comment lines: `finding CODE (severity) at LOCATION: message`, then its fix."""
    tag = f.severity
    return comment(f"finding {f.code} ({tag}) at {shown(f.location)}: {f.message}", indent="  ") + comment(
        f"fix: {f.fix}", first="  ", indent="    "
    )


def shown(location: str) -> str:
    """A `file:line` location relative to the working directory when it lies under it."""
    file, sep, line = location.rpartition(":")
    if sep and line.isdigit() and os.path.isabs(file):
        rel = os.path.relpath(file)
        if not rel.startswith(".."):
            return f"{rel}:{line}"
    return location


def place(findings: Iterable[Finding], regions: list[str]) -> dict[str, list[Finding]]:
    """Section key -> its findings: `region:NAME` for a region, `contract`/`defaults`/`cache`/... for a table, `` for
    the rest (the top of the file)."""
    out: dict[str, list[Finding]] = {}
    for f in findings:
        out.setdefault(_section(f, regions), []).append(f)
    return out


def _section(f: Finding, regions: list[str]) -> str:
    """Where a finding belongs: its contract key's table, the region it names, else the top."""
    m = _REGION_INDEX.match(f.location)
    if m and int(m.group(1)) < len(regions):
        return f"region:{regions[int(m.group(1))]}"
    if f.location in regions:
        return f"region:{f.location}"
    named = next((n for n in _REGION_NAMED.findall(f.message) if n in regions), None)
    if named:
        return f"region:{named}"
    head = f.location.split(".", 1)[0].split("[", 1)[0]
    if head in _SECTIONS:
        return _SECTIONS[head]
    if f.code.startswith("CC2"):
        return "cache"
    return ""
