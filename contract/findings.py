"""Findings and rules: the one record every check produces, and the rule that documents it."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One problem found in a contract, a model or the environment."""

    code: str
    """Stable rule code, e.g. ``CC001``."""
    severity: Severity
    """``error`` refuses the start; ``warning`` is reported only (unless ``--strict``)."""
    location: str
    """Where: a contract key (``region[2].mode``), a module path, an env var, a path or ``file:line``."""
    message: str
    """One line: what is wrong."""
    fix: str
    """One line: what the user should do."""
    ranks: str = ""
    """In a job of several ranks: the ranks that have it (`0-3,7`, see `format_ranks`); "" for one process."""

    def to_dict(self) -> dict[str, str]:
        """Plain data for JSON reports; keys are a stable interface (`ranks` only in a job of several ranks)."""
        out = asdict(self)
        if not self.ranks:
            del out["ranks"]
        return out


@dataclass(frozen=True, kw_only=True)
class Rule:
    """A check's identity and documentation; findings are created through it so codes stay in step."""

    code: str
    """Stable code, ``CC`` + three digits; the hundreds digit is the code range (0 load, 1 settings...)."""
    name: str
    """Short kebab-case name, e.g. ``unknown-key``."""
    severity: Severity
    """Default severity of the findings this rule produces."""
    doc: str
    """Markdown with the sections What it does / Why it matters / Example / Fix."""

    def finding(self, location: str, message: str, fix: str, *, severity: Severity | None = None) -> Finding:
        """Build a finding of this rule (severity may be lowered for heuristics)."""
        return Finding(
            code=self.code,
            severity=severity or self.severity,
            location=location,
            message=_one_line(message),
            fix=_one_line(fix),
        )


def _one_line(text: str, limit: int = 500) -> str:
    """Findings are one line each: fold newlines and bound hostile lengths."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_ranks(ranks: Iterable[int]) -> str:
    """`0-3,7,9-10`: a set of ranks as runs, short for 16,384 ranks as for one."""
    ordered = sorted(set(ranks))
    runs: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        runs.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(runs)


def rank_label(ranks: str) -> str:
    """`rank 3` or `ranks 0-7`, for reports."""
    return f"rank {ranks}" if ranks.isdigit() else f"ranks {ranks}"


def has_errors(findings: list[Finding] | tuple[Finding, ...]) -> bool:
    """True when any finding refuses the start."""
    return any(f.severity == "error" for f in findings)


def source_path(filename: str) -> str:
    """How a `file:line` location names a source file: relative to the working directory, else to its `sys.path`
    entry, else absolute (the same form for every check, so `[[allow]] where` matches them alike)."""
    path = Path(filename)
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        pass
    roots = sorted((Path(p).resolve() for p in sys.path if p), key=lambda p: len(str(p)), reverse=True)
    for root in roots:
        try:
            return path.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            continue
    return path.as_posix()
