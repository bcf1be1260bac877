#!/usr/bin/env bash
# The whole test suite: set up (torch pinned, test extras, system daemons), lint and type-check, then run pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/install-system.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# Files run in parallel (each file on one worker: its fixtures and daemons stay together; a test class is a group of
# its own, which only the hold-out recall file uses, to spread its corpora over two workers); most of the suite waits
# on real subprocesses (ranks, restarts, daemons), so two workers pay off even on two cores.
workers=$(( $(nproc) < 4 ? 2 : 4 ))
exec .venv/bin/python -m pytest -q -ra -n "$workers" --dist loadscope "$@"
