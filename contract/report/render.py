"""Render findings: linter-style text for humans, stable JSON for launchers."""

from __future__ import annotations

import json

from contract.findings import Finding, rank_label


def render_text(findings: list[Finding], path: str, *, summary: str = "", title: str = "contract check") -> str:
    """Header, then `LOCATION: CODE message` with its `fix:` line, errors first; in a job of several ranks each line
    starts with the ranks that have the finding (`ranks 0-7: `)."""
    lines = [_header(findings, path, title) + (f" {summary}" if summary else "")]
    for f in findings:
        tag = "" if f.severity == "error" else " (warning)"
        ranks = f"{rank_label(f.ranks)}: " if f.ranks else ""
        lines.append(f"{ranks}{f.location}: {f.code}{tag} {f.message}")
        lines.append(f"    fix: {f.fix}")
    return "\n".join(lines)


def _header(findings: list[Finding], path: str, title: str) -> str:
    """`TITLE failed: N findings in PATH (E errors, W warnings)`, `TITLE passed with W warnings: PATH` or `passed`."""
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    if errors:
        return (
            f"{title} failed: {n_of(len(findings), 'finding')} in {path} "
            f"({n_of(errors, 'error')}, {n_of(warnings, 'warning')})"
        )
    if warnings:
        return f"{title} passed with {n_of(warnings, 'warning')}: {path}"
    return f"{title} passed: {path}"


def render_json(findings: list[Finding], path: str | None, **extra: object) -> str:
    """`{"ok", "contract", "findings": [{code, severity, location, message, fix}]}`; keys are stable.

    `contract` is null when no contract file was given (`doctor` on torch's defaults).
    """
    ok = not any(f.severity == "error" for f in findings)
    return json.dumps({"ok": ok, "contract": path, "findings": [f.to_dict() for f in findings], **extra}, indent=2)


def render_sarif(findings: list[Finding], path: str | None) -> str:
    """SARIF 2.1.0 (one run, every rule described), for code-scanning annotations in pull requests."""
    from importlib import metadata

    from contract.report.catalog import RULES
    from contract.report.sarif import sarif_log

    try:
        version = metadata.version("torch-compile-contract")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    return json.dumps(sarif_log(findings, path, RULES, version), indent=2)


def n_of(count: int, word: str) -> str:
    """`1 region`, `2 regions`: counts in one-line reports read as English."""
    return f"{count} {word}{'' if count == 1 else 's'}"
