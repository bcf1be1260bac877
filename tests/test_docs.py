"""The documentation site: it builds with warnings as errors, and its generated references cover the code."""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contract.cli import _parser
from contract.document.schema import SECTIONS, RegionSpec, Settings, resolve_region
from contract.report.catalog import RULES
from monitor.exporter import LedgerCollector
from monitor.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = tuple(
    sorted(
        str(p.relative_to(DOCS).with_suffix(""))
        for p in DOCS.rglob("*.md")
        if not p.parts[len(DOCS.parts)].startswith("_")
    )
)
"""Every page on disk (`docs/**/*.md` outside `_ext`, `_build`)."""


def build(docs: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """`sphinx-build -W --keep-going -b html DOCS OUT`, as CI runs it."""
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(docs), str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the site once, as CI does: every warning (a broken link, a bad heading, a gap in the references) fails."""
    out = tmp_path_factory.mktemp("site")
    proc = build(ROOT / "docs", out)
    assert proc.returncode == 0, proc.stderr[-5000:]
    return out


def text(site: Path, page: str) -> str:
    """A built page as plain text."""
    return html.unescape(re.sub(r"<[^>]+>", "", (site / f"{page}.html").read_text())).replace("¶", "")


def plain(markdown: str, length: int = 50) -> str:
    """The start of a markdown text as the built page shows it (code marks and emphasis gone, spaces folded)."""
    return " ".join(markdown.replace("`", "").replace("**", "").split())[:length]


def test_every_page_is_built(site: Path) -> None:
    """Each page on disk is written as HTML, and lives in `start/`, `topics/` or `reference/` (the index aside)."""
    assert [p for p in PAGES if "/" not in p] == ["index"]
    missing = [p for p in PAGES if not (site / f"{p}.html").is_file()]
    assert missing == []


def test_the_rules_reference_documents_every_rule(site: Path) -> None:
    """Every rule record appears on the rules page with its name, severity and the start of its documentation."""
    page = " ".join(text(site, "reference/rules").split())
    for rule in RULES:
        what = rule.doc.split("## What it does\n", 1)[-1].split("\n\n")[0]
        assert f"{rule.code} {rule.name} Severity: {rule.severity}." in page
        assert plain(what) in page, rule.code


def test_the_contract_reference_documents_every_key(site: Path) -> None:
    """Every key of every contract table appears with the first words of its field docstring."""
    page = " ".join(text(site, "reference/contract").split())
    for section, model in SECTIONS.items():
        for key, field in model.model_fields.items():
            assert field.description, f"[{section}] {key} has no docstring"
            assert plain(field.description) in page, f"[{section}] {key}"


def test_the_cli_reference_documents_every_command_and_flag(site: Path) -> None:
    """Every subcommand of the parser has its usage line, and each of its options (but `--help`) is listed."""
    page = text(site, "reference/cli")
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        assert f"compile-contract {name} [-h]" in page
        for action in parser._actions:
            for flag in action.option_strings if action.dest != "help" else ():
                assert flag in page, f"{name} {flag}"


def test_the_monitor_page_lists_every_metric_and_the_ops_page_every_alert(site: Path) -> None:
    """The metrics table is read from the exporter and the alerts table from ops/prometheus/alerts.yml."""
    monitor = text(site, "topics/monitor")
    ledger = Ledger([resolve_region(0, RegionSpec(name="r", module=""), Settings())])
    families = list(LedgerCollector(ledger, contract="c", sha256="s").collect())
    assert len(families) >= 19
    for family in families:
        assert family.name in monitor and family.documentation in monitor, family.name
    alerts = re.findall(r"^\s+- alert: (\w+)$", (ROOT / "ops/prometheus/alerts.yml").read_text(), re.MULTILINE)
    ops, runbooks = text(site, "topics/ops"), text(site, "topics/runbooks")
    assert len(alerts) >= 8
    for alert in alerts:
        assert alert in ops and f"ops/runbooks/{alert}.md" in runbooks


def test_the_readme_is_a_landing_page_whose_links_into_docs_resolve() -> None:
    """README stays under 250 lines and every relative link it makes points at a file in the repository."""
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", readme)
    assert len(readme.splitlines()) < 250
    assert any(link.startswith("docs/") for link in links)
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_a_subcommand_without_its_reference_section_fails_the_build(tmp_path: Path) -> None:
    """A copy of the docs whose CLI page lost one command's generated block does not build: the gap is a warning."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("_build"))
    for shared in ("contract", "monitor", "compile_formats", "ops"):
        (tmp_path / shared).symlink_to(ROOT / shared)
    cli = tmp_path / "docs/reference/cli.md"
    cli.write_text(cli.read_text().replace("<!-- generated: cli-command report -->", ""))
    proc = build(tmp_path / "docs", tmp_path / "out")
    assert proc.returncode != 0
    assert "no page has `<!-- generated: cli-command report -->`" in proc.stderr
