#!/usr/bin/env bash
# Create .venv from the committed lock (hashes for every package; torch 2.13.0+cpu, the CPU wheel) and install this
# package into it. A new upstream release changes nothing here: only scripts/lock.sh moves the lock.
# Usage: scripts/setup.sh [--latest] [EXTRAS]
#   scripts/setup.sh             requirements/base.lock (the demo)
#   scripts/setup.sh test        requirements/test.lock (the test suite, CI)
#   scripts/setup.sh --latest test   .venv-latest: torch still 2.13.0, everything else the newest release today
set -euo pipefail
cd "$(dirname "$0")/.."
latest=0
if [ "${1:-}" = --latest ]; then latest=1; shift; fi
extras="${1:-}"
python="${PYTHON:-python3}"
venv=.venv
[ "$latest" = 1 ] && venv=.venv-latest

# Debian ships `venv` (and ensurepip) in a separate package: install it as root, else say how in one line.
ensure_venv() {
    "$python" -c "import ensurepip, venv" >/dev/null 2>&1 && return 0
    local pkg
    pkg="python$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')-venv"
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "setup: $python -m venv is unavailable; run: sudo apt-get install -y $pkg (or python3-venv)" >&2
        exit 1
    fi
    if [ ! -e /usr/sbin/policy-rc.d ]; then  # in a container without systemd, apt must not start services
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 \
        || apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
}

if [ ! -x "$venv/bin/python" ]; then
    ensure_venv
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
if [ "$latest" = 1 ]; then
    "${pip[@]}" "torch==2.13.0"
    "${pip[@]}" --upgrade --upgrade-strategy eager -e ".${extras:+[$extras]}"
    exit 0
fi
lock="requirements/${extras:-base}.lock"
if [ ! -f "$lock" ]; then
    echo "setup: no lock for extras '$extras' ($lock); locked: base, test. Add one with scripts/lock.sh" >&2
    exit 2
fi
"${pip[@]}" --require-hashes --no-deps -r "$lock"
"${pip[@]}" --no-deps --no-build-isolation -e .  # the build backend (setuptools) is in the lock too
"$venv/bin/python" -m pip check >/dev/null || { "$venv/bin/python" -m pip check >&2; exit 1; }
