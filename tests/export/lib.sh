# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh: sourced by the export tests after tests/lib/periscoped-bus.sh.
# Builds this folder's workloads and records them through a periscoped on a
# private bus.
#   record_cpu    → $TEST_TMP/cpu.syscap: workload-export for 2 s
#   record_memory → $TEST_TMP/memory.syscap: workload-alloc under --memory
#   source_line FILE PATTERN → the line number of the first line matching
#   pprof ARGS…   → `go tool pprof ARGS…`; fails with its errors when it fails
: "${PERISCOPE:?}" "${SRCDIR:?}"

_record() {
        local name=$1 src=$2
        shift 2
        gcc -O2 -g -fno-omit-frame-pointer -o "$TEST_TMP/$name" "$SRCDIR/$src" || fail "cannot build $src (gcc)"
        if [ -z "${PERISCOPED_PID:-}" ]; then
                private_bus_start
                periscoped_start
        fi
        "$PERISCOPE" record --address "$BUS_ADDRESS" "$@" >"$TEST_TMP/record.out" 2>&1 ||
                { cat "$TEST_TMP/record.out"; fail "recording $name failed"; }
}

record_cpu() {
        _record workload-export workload-export.c -o "$TEST_TMP/cpu.syscap" -- "$TEST_TMP/workload-export" 2000
}

record_memory() {
        _record workload-alloc workload-alloc.c --memory -o "$TEST_TMP/memory.syscap" -- "$TEST_TMP/workload-alloc"
}

source_line() {
        grep -n -m1 -F "$2" "$1" | cut -d: -f1
}

pprof() {
        /usr/bin/go tool pprof "$@" 2>"$TEST_TMP/pprof.err" || { cat "$TEST_TMP/pprof.err"; fail "go tool pprof $* failed"; }
}

# The speedscope app (npm package `speedscope`, its built web app in
# dist/release), installed once into $SPEEDSCOPE_CACHE; sets SPEEDSCOPE_APP.
SPEEDSCOPE_VERSION=1.25.0
speedscope_app() {
        : "${SPEEDSCOPE_CACHE:?}"
        SPEEDSCOPE_APP=$SPEEDSCOPE_CACHE/node_modules/speedscope/dist/release
        mkdir -p "$SPEEDSCOPE_CACHE"
        # one install at a time: the export tests run side by side, and two
        # npm installs into one prefix hang or break each other
        local lock
        exec {lock}>"$SPEEDSCOPE_CACHE.lock"
        flock "$lock"
        if ! grep -qs "\"version\": \"$SPEEDSCOPE_VERSION\"" "$SPEEDSCOPE_CACHE/node_modules/speedscope/package.json" ||
           [ ! -f "$SPEEDSCOPE_APP/index.html" ]; then
                command -v npm >/dev/null || fail "npm missing: install nodejs (and Debian's npm where nodejs lacks it)"
                # what an install cut short left behind goes first
                rm -rf "$SPEEDSCOPE_CACHE/node_modules" "$SPEEDSCOPE_CACHE/package.json" "$SPEEDSCOPE_CACHE/package-lock.json"
                timeout 240 npm install --prefix "$SPEEDSCOPE_CACHE" --cache "$TEST_TMP/npm-cache" --no-audit --no-fund \
                        "speedscope@$SPEEDSCOPE_VERSION" \
                        >"$TEST_TMP/npm.log" 2>&1 ||
                        { cat "$TEST_TMP/npm.log"; fail "npm could not install speedscope@$SPEEDSCOPE_VERSION (within 240 s)"; }
        fi
        flock -u "$lock"
        exec {lock}>&-
        [ -f "$SPEEDSCOPE_APP/index.html" ] || fail "the speedscope package has no dist/release/index.html"
}
