#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# install-deps.sh [SECTION…]: installs the Debian packages of those sections
# of scripts/packages.txt (build, run, man, tests; all without arguments).
# Idempotent: only what is missing is installed. It says in one line what it
# installs; apt's own output goes to a log, named (and its end shown) when
# apt fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
want_sections=" $* "
mapfile -t want < <(awk -v want="$want_sections" '
        /^## / { section = $2; next }
        { sub(/#.*/, ""); gsub(/[ \t]+/, "") }
        $0 != "" && (want == "  " || index(want, " " section " ")) { print }' "$here/packages.txt" | sort -u)
missing=()
for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
log=${TMPDIR:-/tmp}/periscope-install-deps.log
echo "periscope: installing ${#missing[@]} packages (${*:-all sections}): ${missing[*]} (apt's log: $log)" >&2
export DEBIAN_FRONTEND=noninteractive
{ apt-get update -qq || true; } >"$log" 2>&1
# --force-unsafe-io: dpkg skips its fsync per file (as debootstrap and
# container images do); on a new machine's 120 packages that is most of
# dpkg's time, and a crash midway is recovered by running this again.
if ! apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-unsafe-io \
        "${missing[@]}" >>"$log" 2>&1; then
        tail -n 20 "$log" >&2
        echo "periscope: apt-get install failed: the whole log is $log" >&2
        exit 1
fi
