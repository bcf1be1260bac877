"""Contract locations -> the lines they are written on, the way TOML reads the document (comments, strings,
multi-line values), for SARIF locations and in-place edits."""

from __future__ import annotations

from contract.document.lines import entries, line_of
from tests import ROOT

DOC = '''# header, with a [fake] table and key = 1 in a comment
[contract]
name = "x # not a comment"
description = """spans
two = lines"""

[[region]]
name = "layers"
module = "layers.*"
options = { "triton.cudagraphs" = false }
dynamic_dims = { x = [
  1,
] }
recompile_budget = 2  # trailing

[[region]]
"name" = 'head'
module = "head"

[cache]
dir = "/a"
'''


def test_every_table_and_key_is_found_on_its_line() -> None:
    found = {e.loc: (e.line, e.end) for e in entries(DOC)}
    assert found["contract"] == (2, 2)
    assert found["contract.description"] == (4, 5)
    assert found["region[0]"] == (7, 7) and found["region[0].name"] == (8, 8)
    assert found["region[0].dynamic_dims"] == (11, 13)
    assert found["region[0].recompile_budget"] == (14, 14)
    assert found["region[1].name"] == (17, 17) and found["region[1].module"] == (18, 18)
    assert found["cache.dir"] == (21, 21)
    assert "fake" not in found and "contract.two" not in found


def test_a_key_inside_an_inline_table_falls_back_to_its_enclosing_key() -> None:
    assert line_of(DOC, 'region[0].options."triton.cudagraphs"') == 10
    assert line_of(DOC, "region[1].mode") == 16
    assert line_of(DOC, "monitor.port") is None


def test_the_shipped_contracts_locate_their_region_keys() -> None:
    text = (ROOT / "contracts" / "scenario1-per-region.toml").read_text()
    lines = text.splitlines()
    line = line_of(text, "region[2].mode")
    assert line is not None and lines[line - 1] == 'mode = "max-autotune-no-cudagraphs"'
