"""Render findings: linter-style text for humans, stable JSON for launchers."""
from __future__ import annotations

import json

from contract.findings import Finding


def render_text(findings: list[Finding], path: str, *, summary: str = "") -> str:
    """Header, then `LOCATION: CODE message` with its `fix:` line, errors first."""
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    if errors:
        head = f"contract check failed: {_n(len(findings), 'finding')} in {path} ({_n(errors, 'error')}, {_n(warnings, 'warning')})"
    elif warnings:
        head = f"contract check passed with {_n(warnings, 'warning')}: {path}"
    else:
        head = f"contract check passed: {path}"
    lines = [head + (f" {summary}" if summary else "")]
    for f in findings:
        tag = "" if f.severity == "error" else " (warning)"
        lines.append(f"{f.location}: {f.code}{tag} {f.message}")
        lines.append(f"    fix: {f.fix}")
    return "\n".join(lines)


def render_json(findings: list[Finding], path: str, **extra: object) -> str:
    """`{"ok", "contract", "findings": [{code, severity, location, message, fix}]}`; keys are stable."""
    ok = not any(f.severity == "error" for f in findings)
    return json.dumps({"ok": ok, "contract": path, "findings": [f.to_dict() for f in findings], **extra}, indent=2)


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
