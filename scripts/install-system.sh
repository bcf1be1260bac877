#!/usr/bin/env bash
# Install the real daemons the tests run on 127.0.0.1: Prometheus (+promtool), Alertmanager, Pushgateway, Redis
# (Debian packages), and Chromium, the headless browser the report page is opened in.
# In a container without systemd, policy-rc.d stops apt from starting them; the tests start their own.
set -euo pipefail
need=()
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
command -v prometheus-pushgateway >/dev/null 2>&1 || need+=(prometheus-pushgateway)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "install-system: missing ${need[*]} and not root; tests that need them will be skipped" >&2
    exit 0
fi
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
