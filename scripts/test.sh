#!/usr/bin/env bash
# The whole test suite, installed from the committed lock (requirements/test.lock: torch 2.13.0+cpu): set up (test
# extras, system daemons), lint and type-check, run pytest, then the version-sensitive part again on the newest torch
# release in its own cached environment (scripts/test-torch.sh).
# Usage: scripts/test.sh [--latest] [PYTEST_ARGS...]
#   --latest   resolve the newest release of every dependency today (torch stays 2.13.0) into .venv-latest: what a
#              fresh, unlocked `pip install` gets. Run it before refreshing the lock (scripts/lock.sh).
# COMPILE_CONTRACT_MATRIX: the torch versions the version-sensitive part also runs on (default "2.15.0", the newest
# release; "" skips it; "2.11.0 2.12.1 2.14.1 2.15.0" runs every lock in requirements/).
set -euo pipefail
cd "$(dirname "$0")/.."
latest=()
venv=.venv
if [ "${1:-}" = --latest ]; then latest=(--latest); venv=.venv-latest; shift; fi
bash scripts/setup.sh ${latest[@]+"${latest[@]}"} test
bash scripts/install-system.sh
"$venv/bin/ruff" check .
"$venv/bin/ruff" format --check .
"$venv/bin/mypy"
# The matrix environments are made (or found in the cache, keyed by their lock) before the suite: on a fresh machine
# the ~3 GB download fails fast, before anything else ran; the version-sensitive part runs after the main suite.
matrix="${COMPILE_CONTRACT_MATRIX-2.15.0}"
for v in $matrix; do bash scripts/torch-env.sh "$v" >/dev/null; done
# Files run in parallel (each file on one worker: its fixtures and daemons stay together; a test class is a group of
# its own, which only the hold-out recall file uses, to spread its corpora over two workers); most of the suite waits
# on real subprocesses (ranks, restarts, daemons), so two workers pay off even on two cores.
workers=$(( $(nproc) < 4 ? 2 : 4 ))
rc=0
"$venv/bin/python" -m pytest -q -ra --durations=20 -n "$workers" --dist loadscope "$@" || rc=$?
for v in $matrix; do
    echo "== the version-sensitive part on torch $v"
    bash scripts/test-torch.sh "$v" || rc=$?
done
exit "$rc"
