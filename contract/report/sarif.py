"""SARIF 2.1.0 for code scanning: the same findings as the text and JSON reports, as annotations on the lines they
name in a pull request (GitHub's `upload-sarif`, GitLab, Azure DevOps read this format).

Locations: a `file:line[:col]` finding points at that file (relative to the working directory, the repository root in
CI, with `uriBaseId` `%SRCROOT%`); a contract key (`region[2].mode`), a region name (probe findings) or `contract.step`
points at the line of the contract where that key or region is written. Anything else (a module path, an environment
variable, a cache directory) points at the contract's most relevant table, and names itself as a logical location.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from contract.document.lines import entries, parent
from contract.findings import Finding, Rule

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL = "compile-contract"
INFORMATION_URI = "https://pypi.org/project/torch-compile-contract/"
"""Where the tool is described: the package's index page (the distribution name in pyproject.toml)."""
SRCROOT = "%SRCROOT%"
_FILE_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_SECTION_OF = (("CC2", "cache"), ("CC0", "contract"))
"""Rule ranges whose non-key locations belong to one table (cache variables and dirs -> `[cache]`)."""


def sarif_log(findings: list[Finding], contract_path: str | None, rules: tuple[Rule, ...], version: str) -> dict:
    """The SARIF log (one run) for these findings."""
    root = Path.cwd()
    contract = _Contract(contract_path, root)
    index = {r.code: i for i, r in enumerate(rules)}
    results = [_result(f, index, contract, root) for f in findings]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL,
                        "version": version,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule(r) for r in rules],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri() + "/"}},
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }


def _rule(rule: Rule) -> dict[str, Any]:
    """A reportingDescriptor: id, name, descriptions and help from the rule's documentation."""
    what = _section(rule.doc, "What it does")
    return {
        "id": rule.code,
        "name": _camel(rule.name),
        "shortDescription": {"text": _first_sentence(what) or rule.name},
        "fullDescription": {"text": " ".join(what.split()) or rule.name},
        "help": {"text": rule.doc, "markdown": rule.doc},
        "defaultConfiguration": {"level": _level(rule.severity)},
        "properties": {"tags": ["torch.compile"]},
    }


def _result(f: Finding, index: dict[str, int], contract: _Contract, root: Path) -> dict[str, Any]:
    """One result: rule, level, message with its fix, location."""
    result: dict[str, Any] = {
        "ruleId": f.code,
        "level": _level(f.severity),
        "message": {"text": f"{f.message.rstrip('.')}. Fix: {f.fix}"},
        "locations": [_location(f, contract, root)],
    }
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    return result


def _location(f: Finding, contract: _Contract, root: Path) -> dict[str, Any]:
    """A physical location where one can be found, plus the finding's own location as a logical one."""
    logical = [{"fullyQualifiedName": f.location, "kind": _kind(f.location)}]
    m = _FILE_LINE.match(f.location)
    if m and _looks_like_file(m.group("file")):
        region: dict[str, Any] = {"startLine": int(m.group("line"))}
        if m.group("col"):
            region["startColumn"] = int(m.group("col"))
        return {"physicalLocation": {"artifactLocation": _artifact(m.group("file"), root), "region": region}}
    line = contract.line_for(f)
    if line is None:
        return {"logicalLocations": logical}
    return {
        "physicalLocation": {"artifactLocation": contract.artifact, "region": {"startLine": line}},
        "logicalLocations": logical,
    }


class _Contract:
    """The contract file: its artifact location and the line of each key and region."""

    def __init__(self, path: str | None, root: Path) -> None:
        self.artifact: dict[str, str] | None = None
        self.lines: dict[str, int] = {}
        self.regions: dict[str, str] = {}
        if path is None:
            return
        self.artifact = _artifact(path, root)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return
        self._index(text)

    def _index(self, text: str) -> None:
        """Line of every key and table, and the `name` line of every region."""
        for e in entries(text):
            self.lines.setdefault(e.loc, e.line)
        names = re.compile(r'^\s*name\s*=\s*"([^"]*)"')
        for e in entries(text):
            if e.loc.startswith("region[") and e.loc.endswith("].name"):
                m = names.match(text.splitlines()[e.line - 1])
                if m:
                    self.regions.setdefault(m.group(1), e.loc)

    def line_for(self, f: Finding) -> int | None:
        """The line of the finding's key, region or table; line 1 of the file when none is written."""
        if self.artifact is None:
            return None
        loc = self.regions.get(f.location, f.location)
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = parent(loc)
        table = next((t for prefix, t in _SECTION_OF if f.code.startswith(prefix)), "")
        return self.lines.get(table, 1)


def _artifact(file: str, root: Path) -> dict[str, str]:
    """Relative to the repository root (`%SRCROOT%`) when inside it, else an absolute file URI."""
    path = Path(file)
    absolute = path if path.is_absolute() else _resolve(path, root)
    try:
        rel = absolute.resolve().relative_to(root.resolve())
    except ValueError:
        return {"uri": absolute.resolve().as_uri()}
    return {"uri": quote(rel.as_posix()), "uriBaseId": SRCROOT}


def _resolve(path: Path, root: Path) -> Path:
    """A relative `file:line` path: against the working directory, else a `sys.path` entry (scan locations)."""
    import sys

    for base in (root, *(Path(p) for p in sys.path if p)):
        if (base / path).is_file():
            return base / path
    return root / path


def _looks_like_file(file: str) -> bool:
    """A path with a directory or an extension (not `region[0].x`, `contract.step`: those never end in `:N`)."""
    return "/" in file or os.sep in file or bool(re.search(r"\.[A-Za-z0-9]+$", file))


def _kind(location: str) -> str:
    """SARIF's well-known logical-location kinds: an environment variable, a contract key, a path, a module path."""
    if re.match(r"^[A-Z][A-Z0-9_]+$", location):
        return "variable"
    if "/" in location:
        return "resource"
    if location.startswith(("region", "contract", "defaults", "cache", "monitor", "probe", "allow")):
        return "member"
    return "module"


def _section(doc: str, title: str) -> str:
    """The text under `## title` in a rule's documentation."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", doc, re.MULTILINE | re.DOTALL)
    return m.group(1).strip() if m else ""


def _first_sentence(text: str) -> str:
    """The first sentence (a rule's short description)."""
    flat = " ".join(text.split())
    m = re.match(r"(.+?[.!?])(\s|$)", flat)
    return m.group(1) if m else flat


def _camel(name: str) -> str:
    """`unknown-key` -> `UnknownKey` (SARIF rule names are identifiers)."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_ ]+", name) if part)


def _level(severity: str) -> str:
    """Finding severity -> SARIF level."""
    return "error" if severity == "error" else "warning"
