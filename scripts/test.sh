#!/usr/bin/env bash
# The whole test suite: set up (torch pinned, test extras, system daemons), lint and type-check, then run pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/install-system.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
exec .venv/bin/python -m pytest -q -ra "$@"
