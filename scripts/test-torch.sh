#!/usr/bin/env bash
# The version-sensitive part of the suite on another torch, in its cached environment (scripts/torch-env.sh): the
# adapters over private torch APIs, attribution of compiles, the probe, the engine checks, cache artifacts and their
# trust checks, and the corpora's observed behaviour (recorded per torch minor).
# Usage: scripts/test-torch.sh VERSION [PYTEST_ARGS...]   e.g. scripts/test-torch.sh 2.15.0 -x
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?usage: scripts/test-torch.sh VERSION [PYTEST_ARGS...] (a requirements/torch-VERSION.lock must exist)}"
shift
python=$(bash scripts/torch-env.sh "$version")
parts=(
    tests/binding tests/monitor tests/checks/probe tests/checks/engine tests/checks/cache tests/checks/warm
    tests/checks/custom_ops tests/checks/hotpath/test_corpus.py tests/checks/hotpath/test_holdout_behaviour.py
    tests/checks/hotpath/test_holdout_recall.py tests/test_doctor.py tests/integrations/test_imports.py
)
workers=$(( $(nproc) < 4 ? 2 : 4 ))
exec "$python" -m pytest -q -ra --durations=10 -n "$workers" --dist loadscope "${parts[@]}" "$@"
