"""Sphinx configuration of the documentation site (MyST markdown; references generated from the code)."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]  # the package (generated references) and the extension

project = "torch-compile-contract"
author = "torch-compile-contract authors"
extensions = ["myst_parser", "compile_contract_docs"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
myst_heading_anchors = 4  # `page.md#section` links, as GitHub renders them
myst_enable_extensions = ["colon_fence"]
html_theme = "alabaster"
html_title = project
html_theme_options = {
    "description": "An enforced compile contract per model region",
    "fixed_sidebar": True,
    "page_width": "1240px",  # the reference tables have four columns
}
smartquotes = False  # CLI flags (`--update`) and quotes stay as written
