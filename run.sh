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
        log=${TMPDIR:-/tmp}/periscope-run-setup.log
        meson setup build -Dwerror=true -Dtests=false -Dman_pages=disabled >"$log" 2>&1 ||
                { tail -n 30 "$log"; echo "run.sh: meson setup failed (log: $log)" >&2; exit 1; }
fi
echo "periscope: building (log: build/run-ninja.log)" >&2
ninja -C build >build/run-ninja.log 2>&1 || { tail -n 30 build/run-ninja.log; echo "run.sh: the build failed (log: build/run-ninja.log)" >&2; exit 1; }
# The sandboxed helpers run as a user that owns nothing: in a tree it may
# not reach (a clone in root's 0700 home), bwrap cannot bind them in. The
# daemon then runs copies from a directory of root's that everyone may read.
if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$top/build/sandbox-helper/periscope-helper" 2>/dev/null; then
        sandboxed=/run/periscope-run
        install -d -m 0755 "$sandboxed"
        install -m 0755 build/sandbox-helper/periscope-helper build/debuginfod-fetcher/periscope-debuginfod-fetch "$sandboxed/"
        export PERISCOPE_HELPER=$sandboxed/periscope-helper PERISCOPE_DEBUGINFOD_FETCH=$sandboxed/periscope-debuginfod-fetch
fi

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
