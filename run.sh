#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run.sh: installs what Periscope needs, builds it, records the bundled demo
# workload with `periscope record` and shows what the capture holds. As root.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
if [ "$(id -u)" != 0 ]; then
        echo "run.sh: run as root (it installs packages; recording needs perf access)" >&2
        exit 1
fi
# what building and recording need, no more (scripts/packages.txt);
# test.sh installs the rest and turns the test suite on in the same tree
scripts/install-deps.sh build run
if [ ! -f build/build.ninja ]; then
        meson setup build -Dwerror=true -Dtests=false -Dman_pages=disabled >/dev/null
fi
ninja -C build >build/run-ninja.log 2>&1 || { tail -n 30 build/run-ninja.log; echo "run.sh: the build failed (log: build/run-ninja.log)" >&2; exit 1; }

out=$top/demo.syscap
echo
echo "== periscope record -o demo.syscap -- build/bench/demo-workload -t 2000 -c 2"
build/cli/periscope record -o "$out" -- build/bench/demo-workload -t 2000 -c 2
echo
if build/cli/periscope report --help >/dev/null 2>&1; then
        echo "== periscope report demo.syscap"
        build/cli/periscope report "$out"
else
        echo "== periscope info demo.syscap"
        build/cli/periscope info "$out" || true
fi
