"""The test suite."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository root (tests run from any working directory)."""
