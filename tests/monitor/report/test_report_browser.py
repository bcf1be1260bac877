"""The report page opened from disk in a real headless Chromium renders its regions, the divergence table and the
timeline picture, with no console error and no network request."""

from __future__ import annotations

import json

import pytest

from contract.cli import main
from tests.monitor.report.browser import Page, executable

DOM = """JSON.stringify({
  regions: [...document.querySelectorAll('details.region')].map(d => d.dataset.region),
  overview: [...document.querySelectorAll('#overview td a')].map(a => a.textContent),
  divergence: document.querySelectorAll('#divergence tr.divergence').length,
  img: (() => { const i = document.getElementById('timeline'); return i && i.complete ? [i.naturalWidth, i.naturalHeight, i.getBoundingClientRect().height] : null; })(),
  title: document.title,
})"""


@pytest.fixture
def page(tmp_path):
    exe = executable()
    if exe is None:
        pytest.skip(
            "chromium is not installed (Debian package chromium; scripts/install-system.sh installs it as root)"
        )
    tab = Page(exe, tmp_path / "profile")
    yield tab
    tab.close()


def test_the_harness_sees_a_console_error_and_an_uncaught_exception(page, tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>console.error('boom'); undefinedCall();</script></body></html>")
    got = page.load(broken.as_uri())
    assert any("boom" in e for e in got["errors"]) and len(got["errors"]) >= 2


def test_the_two_rank_report_renders_regions_divergence_and_the_picture_without_errors(
    page, ranks_run, tmp_path, capsys
):
    out = tmp_path / "report"
    assert main(["report", *map(str, ranks_run.files), "-o", str(out)]) == 0
    capsys.readouterr()
    url = (out / "report.html").as_uri()
    got = page.load(url)
    assert got["errors"] == []
    assert [u for u in got["requests"] if u != url and not u.startswith("data:")] == []  # no fetch: self-contained
    dom = json.loads(page.eval(DOM))
    assert dom["regions"] == dom["overview"] == ["body", "head", "gate"]
    assert dom["divergence"] >= 3 and dom["title"] == "Compile report: two-rank-net"
    width, height, shown = dom["img"]
    assert width > 0 and height > 0 and shown > 0
