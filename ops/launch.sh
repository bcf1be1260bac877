#!/usr/bin/env bash
# Sample launcher: preflight the environment and Inductor cache (doctor), check the contract against the model
# (check), then exec the job. Any error finding refuses the start; warnings are printed and the job starts.
#
# Usage: ops/launch.sh CONTRACT -- COMMAND [ARGS...]
#   e.g. TORCHINDUCTOR_CACHE_DIR=/mnt/persist/inductor ops/launch.sh contracts/demo.toml -- python -m contract.demo contracts/demo.toml
# Env: COMPILE_CONTRACT (default: compile-contract), CONTRACT_STRICT=1 adds --strict (warnings refuse too).
set -euo pipefail

if [[ $# -lt 3 || "$2" != "--" ]]; then
    echo "usage: $0 CONTRACT -- COMMAND [ARGS...]" >&2
    exit 2
fi
contract="$1"
shift 2

cc="${COMPILE_CONTRACT:-compile-contract}"
strict=()
if [[ "${CONTRACT_STRICT:-0}" == "1" ]]; then
    strict=(--strict)
fi

# Export cache variables BEFORE this script: the job's Python reads them when torch._dynamo is imported.
if ! "$cc" doctor "$contract" "${strict[@]}"; then
    echo "launch refused: compile-contract doctor failed for $contract (fix the findings above)" >&2
    exit 1
fi
if ! "$cc" check "$contract" "${strict[@]}"; then
    echo "launch refused: compile-contract check failed for $contract (fix the findings above)" >&2
    exit 1
fi
exec "$@"
