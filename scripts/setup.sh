#!/usr/bin/env bash
# Create .venv with torch pinned (the CPU wheel; an unpinned torch pulls several GB of CUDA packages) and install
# this package. Usage: scripts/setup.sh [EXTRAS], e.g. scripts/setup.sh test
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python="${PYTHON:-python3}"

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

if [ ! -x .venv/bin/python ]; then
    ensure_venv
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check "torch==2.13.0"
spec="."
[ -n "$extras" ] && spec=".[$extras]"
.venv/bin/python -m pip install -q --disable-pip-version-check -e "$spec"
