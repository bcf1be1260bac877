"""Shared fixtures: a contract writer and clean Dynamo state around every test."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest


@pytest.fixture
def write_contract(tmp_path: Path) -> Callable[[str], Path]:
    """Write a contract document into tmp_path and return its path."""
    def write(text: str, name: str = "contract.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path
    return write


@pytest.fixture(autouse=True)
def _reset_dynamo():
    """Each test starts and ends with empty Dynamo caches (only if torch._dynamo is already loaded)."""
    import sys

    yield
    if "torch._dynamo" in sys.modules:
        sys.modules["torch._dynamo"].reset()
