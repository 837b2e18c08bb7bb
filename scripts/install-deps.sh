#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs the Debian packages Periscope builds and tests with. Idempotent:
# only what is missing is installed. Components add packages to
# scripts/packages.txt (one per line, '#' comments).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t want < <(sed -e 's/#.*//' -e '/^\s*$/d' "$here/packages.txt")
missing=()
for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
        echo "periscope: installing ${missing[*]}" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq || true
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
