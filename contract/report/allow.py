"""The findings that get reported: `[[allow]]` silences some (an entry that silences nothing is CC008), `--strict`
makes warnings errors, and errors come first."""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import replace
from pathlib import Path

from contract.document.load import Contract
from contract.document.rules import UNUSED_ALLOW
from contract.findings import Finding


def finalize(findings: list[Finding], contract: Contract | None, *, strict: bool = False) -> list[Finding]:
    """Apply `[[allow]]`, report unused entries, and escalate warnings under `--strict`."""
    kept = _allow(findings, contract) if contract else list(findings)
    if strict:
        kept = [replace(f, severity="error") for f in kept]
    return sorted(kept, key=lambda f: (f.severity != "error", f.code, f.location))


def silenced(finding: Finding, contract: Contract | None) -> bool:
    """Whether one of the contract's `[[allow]]` entries covers a finding."""
    return contract is not None and _entry(finding, contract) is not None


def _entry(f: Finding, contract: Contract) -> int | None:
    """The index of the first allow entry with the finding's code at a matching location (see `_matches`)."""
    locations = _forms(f.location)
    return next(
        (
            i
            for i, a in enumerate(contract.allow)
            if a.code == f.code and any(_matches(a.where, loc) for loc in locations)
        ),
        None,
    )


def _allow(findings: list[Finding], contract: Contract) -> list[Finding]:
    """Each allow entry silences the findings it covers; an entry that silenced nothing is CC008."""
    used = [False] * len(contract.allow)
    kept = []
    for f in findings:
        hit = _entry(f, contract)
        if hit is None:
            kept.append(f)
        else:
            used[hit] = True
    for i, a in enumerate(contract.allow):
        if not used[i]:
            kept.append(
                UNUSED_ALLOW.finding(
                    f"allow[{i}]",
                    f"no {a.code} finding at {a.where!r} to silence",
                    "delete the entry or correct its code and where",
                )
            )
    return kept


def _forms(location: str) -> list[str]:
    """A location, plus its absolute form for a `file:line` relative to the working directory or a `sys.path` entry
    (scan locations are relative), so an entry does not depend on where the check runs."""
    file, sep, line = location.rpartition(":")
    if sep and line.isdigit() and file:
        for root in (Path.cwd(), *(Path(p) for p in sys.path if p)):
            candidate = root / file
            if candidate.is_file():
                return [location, f"{candidate.resolve().as_posix()}:{line}"]
    return [location]


def _matches(where: str, location: str) -> bool:
    """`where` (globs allowed) equals the location or is a path suffix of it at a `/` boundary."""
    return fnmatch.fnmatchcase(location, where) or fnmatch.fnmatchcase(location, "*/" + where.lstrip("/"))
