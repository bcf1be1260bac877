#!/usr/bin/env bash
# The main job on the demo model: set up, check the demo contract, apply it and run a few monitored steps,
# then show the hazard variant being refused.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
set -x
.venv/bin/compile-contract check contracts/demo.toml || exit 1
.venv/bin/python -m contract.demo contracts/demo.toml --steps 4 || exit 1
.venv/bin/compile-contract check contracts/demo-hazard.toml
rc=$?
{ set +x; } 2>/dev/null
[ "$rc" = 1 ] && echo "demo: the hazard variant was refused, as it should be" && exit 0
echo "demo: expected the hazard variant to be refused (exit 1), got $rc" >&2
exit 1
