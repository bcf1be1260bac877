#!/usr/bin/env bash
# A cached environment with another torch for the version matrix, installed from requirements/torch-VERSION.lock
# (the project's test extras over that torch; the CUDA wheels of 2.14+ run on CPU, about 3 GB to download).
# Usage: scripts/torch-env.sh VERSION   prints the environment's python on stdout.
# The environment lives in ${TORCH_ENV_CACHE:-~/.cache/torch-compile-contract/envs}/torch-VERSION-<lock digest>:
# a changed lock makes a new one (older ones are removed), an unchanged lock reuses it without a download.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?usage: scripts/torch-env.sh VERSION (a requirements/torch-VERSION.lock must exist)}"
lock="requirements/torch-$version.lock"
if [ ! -f "$lock" ]; then
    echo "torch-env: no $lock; locks exist for: $(ls requirements/torch-*.lock | sed 's#.*/torch-##; s#\.lock##' | tr '\n' ' ')(add one: scripts/lock.sh $version)" >&2
    exit 2
fi
cache="${TORCH_ENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/torch-compile-contract/envs}"
digest=$(sha256sum "$lock" | cut -c1-12)
env="$cache/torch-$version-$digest"
if [ ! -f "$env/.complete" ]; then
    mkdir -p "$cache"
    rm -rf "$cache/torch-$version-"*  # an older lock's environment, or a half-made one
    "${PYTHON:-python3}" -m venv "$env"
    echo "torch-env: installing $lock into $env (first time for this lock)" >&2
    "$env/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r "$lock" >&2
    touch "$env/.complete"
fi
# the project itself, from this checkout (an editable install only points at it: a few seconds, nothing downloaded)
"$env/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e . >&2
echo "$env/bin/python"
