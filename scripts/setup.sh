#!/usr/bin/env bash
# Installs the system libraries iqscore links (OpenBLAS + LAPACKE) if they are missing. Idempotent and
# non-interactive; uses sudo only when not root.
set -euo pipefail
need=()
for pkg in libopenblas-dev liblapacke-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "installing ${need[*]}" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
