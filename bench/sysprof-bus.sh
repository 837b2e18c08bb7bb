# SPDX-License-Identifier: LGPL-2.1-or-later
# sysprof-bus.sh (sourced by the bench scripts): Sysprof 3.46's sysprofd on a
# private system bus with polkitd (see RECIPES), so `sysprof-cli` runs as it
# does on a desktop. sysprof_bus_start TMPDIR sets SYSPROF_REASON to why
# Sysprof cannot run here (empty when it can); sysprof_bus_stop ends it all.
sysprof_bus_start() {
        local tmp=$1 top
        top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
        . "$top/tests/lib/private-bus.sh"
        SYSPROF_REASON=""
        if ! private_sysprofd_start "$tmp" >"$tmp/sysprofd-start.log" 2>&1; then
                SYSPROF_REASON=$(tail -1 "$tmp/sysprofd-start.log")
        fi
        export SYSPROF_REASON
}

# bench_start NAME FILE…: leaves unless every FILE was built; then makes
# $tmp (/tmp/periscope-NAME.XXXXXX, removed at exit) and starts Sysprof's
# bus in it (sysprof_bus_start).
bench_start() {
        local name=$1 f
        shift
        for f in "$@"; do
                [ -e "$f" ] || { echo "missing $f: build the tree first (meson setup build && ninja -C build)"; exit 1; }
        done
        tmp=$(mktemp -d "/tmp/periscope-$name.XXXXXX")
        chmod 755 "$tmp"
        sysprof_bus_start "$tmp"
        trap 'sysprof_bus_stop; rm -rf "$tmp"' EXIT
}

sysprof_bus_stop() {
        if command -v private_bus_stop >/dev/null; then
                private_bus_stop
        fi
}
