#!/usr/bin/env bash
# Refresh the committed locks under requirements/ (hashes for every package, resolved today, with uv).
# Usage: scripts/lock.sh [TORCH_VERSION ...]   (no argument: every lock already in requirements/)
#   requirements/base.lock           what scripts/setup.sh (the demo) installs: torch 2.13.0+cpu and the package's deps
#   requirements/test.lock           what scripts/setup.sh test and CI install: the same and the test extras
#   requirements/torch-X.Y.Z.lock    the same extras over another torch (the version matrix: scripts/torch-env.sh)
# When: after changing pyproject's dependencies or extras, to take a new release on purpose (try it first with
# `scripts/test.sh --latest`), or to add a torch to the matrix. Commit the lock with the change that needed it.
set -euo pipefail
cd "$(dirname "$0")/.."
tools="${XDG_CACHE_HOME:-$HOME/.cache}/torch-compile-contract/tools"
if [ ! -x "$tools/bin/uv" ]; then
    "${PYTHON:-python3}" -m venv "$tools"
    "$tools/bin/pip" install -q --disable-pip-version-check "uv>=0.9"
fi
# The CPU wheel of torch 2.13.0 (`+cpu`) comes from PyTorch's CPU index, or a folder of wheels (pip's find-links).
links=()
for d in ${PIP_FIND_LINKS:-}; do links+=(--find-links "$d"); done
compile() {  # compile TORCH_SPEC OUT [EXTRA]
    printf 'torch==%s\nsetuptools>=77\n' "$1" > "$tmp/constraints.txt"
    printf 'setuptools>=77\n' > "$tmp/build.in"  # the build backend of `pip install --no-build-isolation -e .`
    "$tools/bin/uv" pip compile -q pyproject.toml "$tmp/build.in" ${3:+--extra "$3"} --generate-hashes \
        --python-version 3.11 --python-platform x86_64-manylinux_2_28 --index-strategy unsafe-best-match \
        ${links[@]+"${links[@]}"} ${PYTORCH_INDEX:+--extra-index-url "$PYTORCH_INDEX"} \
        -c "$tmp/constraints.txt" --no-header --custom-compile-command "scripts/lock.sh" -o "$2"
    sed -i "s#$tmp/##g" "$2"
    echo "lock: $2 (torch $1)"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
    versions=(2.13.0+cpu)
    for f in requirements/torch-*.lock; do [ -e "$f" ] && versions+=("$(basename "$f" .lock | sed 's/^torch-//')"); done
fi
for v in "${versions[@]}"; do
    if [ "$v" = 2.13.0+cpu ]; then
        compile "$v" requirements/base.lock
        compile "$v" requirements/test.lock test
    else
        compile "$v" "requirements/torch-$v.lock" test
    fi
done
