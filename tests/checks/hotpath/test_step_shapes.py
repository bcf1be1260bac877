"""A step that hands a region a tensor whose size changes is CC310 unless the region's contract makes it dynamic."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from contract.pipeline import check
from tests.report.test_catalog import EXAMPLES


@pytest.mark.parametrize(
    ("setting", "expected"), [("", 2), ("dynamic = true\n", 0), ("dynamic_dims = { tokens = [1] }\n", 0)]
)
def test_a_changing_input_size_is_reported_only_where_the_region_is_not_dynamic(
    setting: str, expected: int, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    example = importlib.import_module("CC310_step_changes_input_size")
    path = tmp_path / "c.toml"
    path.write_text(
        f'[contract]\nname = "s"\n\n[[region]]\nname = "r"\nmodule = ""\nbackend = "eager"\n{setting}\n'
        "[probe]\nenabled = false\n"
    )
    _, _, found = check(path, example.build(), step=example.step)
    assert sum(f.code == "CC310" and "size changes" in f.message for f in found) == expected, [str(f) for f in found]
